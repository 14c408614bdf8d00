package gateway

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/unity"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// UC's temporary credentials, staging tables and updateSchema on UC's own
// API. The credentials and staging operations are the Delta API's
// (translate/delta: the same delta.Request, its Checks and its Serve),
// decided by the policy as api "unity" with UC's operationId, and
// answered in UC's model.

// unityIndex returns the table-id index UC's table credentials look tables
// up in: in the app's Redis when it has one (replicas share it, and it
// outlives a restart), else in process memory kept in the pool across
// config reloads. It returns the pool key to release.
func (a *App) unityIndex() (unity.TableIndex, string, error) {
	if a.Redis != "" {
		client, err := redisClient(a.Redis)
		if err != nil {
			return nil, "", err
		}
		return unity.NewRedisIndex(client, "lakegate:unity:table-id:"), redisPoolKey(a.Redis), nil
	}
	v, _, err := sharedPool.LoadOrNew("unity-index|memory", func() (caddy.Destructor, error) {
		return pooledIndex{unity.NewMemoryIndex()}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(pooledIndex).MemoryIndex, "unity-index|memory", nil
}

type pooledIndex struct{ *unity.MemoryIndex }

func (pooledIndex) Destruct() error { return nil }

// unityChecks has the policy decide every check of a Delta API request
// that serves a UC operation, as api "unity" and that operation.
func (h *DeltaHandler) unityChecks(r *http.Request, p *identity.Principal, op unity.Op, checks []delta.Check) error {
	for _, c := range checks {
		cat, err := h.unityCatalog(r, c.Catalog)
		if err != nil {
			return err
		}
		res := policies.Resource{Namespace: c.Namespace, Table: c.Table, Location: c.Location}
		if err := h.unityAuthorize(r, p, cat, op, c.Iceberg, res); err != nil {
			return err
		}
	}
	return nil
}

// serveDelta runs an authorized Delta API request for a UC operation.
func (h *DeltaHandler) serveDelta(r *http.Request, q *delta.Request) (out any, err error) {
	translated(r, func(r *http.Request) { _, out, err = h.svc.Serve(r.Context(), q) })
	return out, err
}

// tableCredentials answers generateTemporaryTableCredentials: the table
// the id names (unity.Service.TableByID), decided as the Delta API's
// getTableCredentials is (loadCredentials; READ_WRITE also updateTable),
// its location inside the catalog's allowed locations when it has them,
// then what the Delta API vends for it, in UC's model.
func (h *DeltaHandler) tableCredentials(w http.ResponseWriter, r *http.Request, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	id, op, err := unity.ParseTableCredentials(body)
	if err != nil {
		return nil, err
	}
	var q *delta.Request
	decide := func(ref delta.Ref) error {
		rt := delta.Route{Op: delta.OpGetTableCredentials, Iceberg: icerest.OpLoadCredentials,
			Catalog: ref.Catalog, Namespace: ref.Namespace, Table: ref.Name}
		var err error
		if q, err = delta.ParseRequest(rt, url.Values{"operation": {op}}, nil); err != nil {
			return err
		}
		return h.unityChecks(r, p, unity.OpGenerateTemporaryTableCredentials, q.Checks())
	}
	var info *unity.TableInfo
	var ref delta.Ref
	translated(r, func(r *http.Request) {
		info, ref, err = h.unity.TableByID(r.Context(), id, h.unityScope(r, p), decide)
	})
	if err != nil {
		return nil, err
	}
	cat, _ := h.app.catalog(ref.Catalog)
	if cat != nil && cat.locations != nil && !cat.locations.Allows(info.StorageLocation) {
		return nil, unity.Errorf(http.StatusForbidden, unity.PermissionDenied,
			"table %s lies outside the allowed locations of catalog %q", id, ref.Catalog)
	}
	if cat != nil && cat.vending != nil {
		return h.vendedTableCredentials(r, p, cat, ref, info.StorageLocation, op)
	}
	out, err := h.serveDelta(r, q)
	if err != nil {
		return nil, err
	}
	return unity.Credentials(info.StorageLocation, out.(*delta.CredentialsResponse).StorageCredentials, h.credentialsExpiry()), nil
}

// vendedTableCredentials answers table credentials for a catalog that
// vends (storage vended_credentials) with the Iceberg door's vending
// (App.vendTableKeys), in UC's model.
func (h *DeltaHandler) vendedTableCredentials(r *http.Request, p *identity.Principal, cat *catalogState, ref delta.Ref,
	location, op string) (*unity.TemporaryCredentials, error) {
	c, err := h.app.vendTableKeys(r, p, cat, "unity", string(unity.OpGenerateTemporaryTableCredentials),
		ref.Namespace, ref.Name, op == unity.TableReadWrite)
	if err != nil {
		return nil, ucStorageError(err)
	}
	return &unity.TemporaryCredentials{URL: location, ExpirationTime: c.Expires.UnixMilli(),
		AWS: &unity.AWSCredentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}}, nil
}

// ucStorageError is a failure to load the table or vend for it (an
// Iceberg-model error) in UC's model, with its status and message.
func ucStorageError(err error) error {
	e := icerest.AsError(err)
	code := unity.Internal
	switch e.Code {
	case http.StatusForbidden:
		code = unity.PermissionDenied
	case http.StatusNotFound:
		code = unity.TableNotFound
	}
	return unity.Errorf(e.Code, code, "%s", e.Message)
}

// credentialsExpiry is when UC credentials without an expiry of their own
// expire: as the Delta API reports such credentials (its CredentialTTL).
func (h *DeltaHandler) credentialsExpiry() time.Time { return time.Now().Add(h.svc.CredentialTTL) }

// unityScope is what the caller may list, for the scan that finds a table
// by id: the catalogs it may use, and the schemas and tables listSchemas
// and listTables would show it.
func (h *DeltaHandler) unityScope(r *http.Request, p *identity.Principal) unity.Scope {
	shown := func(rt unity.Route) unity.Shown {
		cat, _ := h.app.catalog(rt.Catalog)
		return h.unityShown(r, p, cat, rt)
	}
	return unity.Scope{
		Catalogs: h.usableCatalogs(r, p, unity.OpListCatalogs),
		Schemas: func(catalog string) unity.Shown {
			return shown(unity.Route{Op: unity.OpListSchemas, Catalog: catalog})
		},
		Tables: func(catalog, schema string) unity.Shown {
			return shown(unity.Route{Op: unity.OpListTables, Catalog: catalog, Schema: schema})
		},
	}
}

// pathCredentials answers generateTemporaryPathCredentials. A local path
// has nothing to vend (UC answers its url alone): it must lie in a
// catalog's allowed locations, and the policy decide loadCredentials on
// it there (createTable too for a write). Any other path goes through the
// Delta API's getTemporaryPathCredentials: the path_credentials source
// whose catalog holds it, its checks, its stage-create. dry_run checks
// and vends nothing.
func (h *DeltaHandler) pathCredentials(w http.ResponseWriter, r *http.Request, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	req, err := unity.ParsePathCredentials(body)
	if err != nil {
		return nil, err
	}
	if req.OnFileSystem() {
		return h.localPathCredentials(r, p, req)
	}
	if cat := h.app.vendingCatalogOf(req.Location); cat != nil {
		return h.vendedPathCredentials(r, p, cat, req)
	}
	src, err := h.pathSource(req.Location)
	if err != nil {
		return nil, err
	}
	rt := delta.Route{Op: delta.OpGetTemporaryPathCredentials, Iceberg: icerest.OpLoadCredentials}
	q, err := delta.ParseRequest(rt, url.Values{"location": {req.Location}, "operation": {req.DeltaOperation()}}, nil)
	if err != nil {
		return nil, err
	}
	q.VendFrom(src.Catalog, src.Namespace)
	if err := h.unityChecks(r, p, unity.OpGenerateTemporaryPathCredentials, q.Checks()); err != nil {
		return nil, err
	}
	if req.DryRun != nil && *req.DryRun {
		return unity.Credentials(req.Location, nil, h.credentialsExpiry()), nil
	}
	out, err := h.serveDelta(r, q)
	if err != nil {
		return nil, err
	}
	return unity.Credentials(req.Location, out.(*delta.CredentialsResponse).StorageCredentials, h.credentialsExpiry()), nil
}

// vendedPathCredentials answers path credentials for a location of a
// catalog that vends: App.vendPathKeys (the catalog's tables enumerated,
// the path decided as the table it lies in or as a new table's place),
// in UC's model; dry_run decides and vends nothing.
func (h *DeltaHandler) vendedPathCredentials(r *http.Request, p *identity.Principal, cat *catalogState,
	req *unity.PathCredentialsRequest) (*unity.TemporaryCredentials, error) {
	want := map[string]pathAccess{unity.PathRead: pathRead, unity.PathReadWrite: pathReadWrite,
		unity.PathCreateTable: pathCreateTable}[*req.Operation]
	dry := req.DryRun != nil && *req.DryRun
	c, vended, err := h.app.vendPathKeys(r, p, cat, "unity", string(unity.OpGenerateTemporaryPathCredentials),
		req.Location, want, dry)
	if err != nil {
		return nil, ucStorageError(err)
	}
	if !vended {
		return unity.Credentials(req.Location, nil, h.credentialsExpiry()), nil
	}
	return &unity.TemporaryCredentials{URL: req.Location, ExpirationTime: c.Expires.UnixMilli(),
		AWS: &unity.AWSCredentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken}}, nil
}

// localPathCredentials checks a file: path: the first catalog (by name)
// whose allowed locations hold it is the one the policy decides on.
func (h *DeltaHandler) localPathCredentials(r *http.Request, p *identity.Principal, req *unity.PathCredentialsRequest) (any, error) {
	for _, name := range slices.Sorted(maps.Keys(h.app.backends)) {
		cat := h.app.backends[name]
		if cat.locations == nil || !cat.locations.Allows(req.Location) {
			continue
		}
		checks := []delta.Check{{Catalog: name, Iceberg: icerest.OpLoadCredentials, Location: req.Location}}
		if req.Writes() {
			checks = append(checks, delta.Check{Catalog: name, Iceberg: icerest.OpCreateTable, Location: req.Location})
		}
		if err := h.unityChecks(r, p, unity.OpGenerateTemporaryPathCredentials, checks); err != nil {
			return nil, err
		}
		return unity.Credentials(req.Location, nil, h.credentialsExpiry()), nil
	}
	return nil, unity.Errorf(http.StatusForbidden, unity.PermissionDenied,
		"url %q lies outside the allowed locations of every catalog", req.Location)
}

// createStagingTable answers createStagingTable as the Delta API's
// createStagingTable (its staging store: a later createTable, MANAGED, at
// the staging location commits it), decided as createTable of the name.
func (h *DeltaHandler) createStagingTable(w http.ResponseWriter, r *http.Request, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	req, deltaBody, err := unity.ParseCreateStagingTable(body)
	if err != nil {
		return nil, err
	}
	rt := delta.Route{Op: delta.OpCreateStagingTable, Iceberg: icerest.OpCreateTable,
		Catalog: *req.CatalogName, Schema: *req.SchemaName, Namespace: []string{*req.SchemaName}}
	q, err := delta.ParseRequest(rt, nil, deltaBody)
	if err != nil {
		return nil, err
	}
	if err := h.unityChecks(r, p, unity.OpCreateStagingTable, q.Checks()); err != nil {
		return nil, err
	}
	out, err := h.serveDelta(r, q)
	if err != nil {
		return nil, err
	}
	return unity.StagingInfo(req, out.(*delta.StagingTableResponse)), nil
}

// updateSchema answers updateSchema, decided as Iceberg's updateProperties
// on the namespace.
func (h *DeltaHandler) updateSchema(w http.ResponseWriter, r *http.Request, rt unity.Route, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	req, err := unity.ParseUpdateSchema(body, rt.Schema)
	if err != nil {
		return nil, err
	}
	cat, err := h.unityCatalog(r, rt.Catalog)
	if err != nil {
		return nil, err
	}
	if err := h.unityAuthorize(r, p, cat, rt.Op, rt.Iceberg, policies.Resource{Namespace: []string{rt.Schema}}); err != nil {
		return nil, err
	}
	var out any
	translated(r, func(r *http.Request) { out, err = h.unity.UpdateSchema(r.Context(), rt.Catalog, rt.Schema, req) })
	return out, err
}
