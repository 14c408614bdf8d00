package gateway

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/unity"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// unityPrefix is where Unity Catalog's own API lives; lakegate_delta
// serves its catalogs, schemas and tables (translate/unity) next to the
// Delta API below it, as Unity Catalog does.
const unityPrefix = "/api/2.1/unity-catalog/"

// unityDoor answers in UC's error model.
var unityDoor = door{
	unauthorized: func(why error) error {
		return unity.Errorf(http.StatusUnauthorized, unity.Unauthenticated, "%v", why)
	},
	write: func(w http.ResponseWriter, _ *http.Request, err error) { unity.WriteError(w, err) },
}

// serveUnity is the UC API's front door: authenticate, parse, authorize
// the Iceberg operation each UC operation is (policy input api "unity"),
// run it.
func (h *DeltaHandler) serveUnity(w http.ResponseWriter, r *http.Request, rest string) {
	x, r := begin(h.app, w, r, "unity")
	defer x.end()
	rt, err := unity.ParseRoute(r.Method, rest, r.URL.Query()) // answered after authentication (see delta.go)
	x.rec.SetOperation(string(rt.Op))
	p, r, ok := unityDoor.admit(h.app.guard, x, r)
	if !ok {
		return
	}
	if err != nil {
		unity.WriteError(x, err)
		return
	}
	var out any
	switch rt.Op {
	case unity.OpListCatalogs:
		out, err = h.listCatalogs(r, p)
	case unity.OpCreateCatalog:
		err = h.createCatalog(x, r, p)
	case unity.OpCreateSchema:
		out, err = h.createSchema(x, r, p)
	case unity.OpCreateTable:
		out, err = h.createTable(x, r, p)
	case unity.OpUpdateSchema:
		out, err = h.updateSchema(x, r, rt, p)
	case unity.OpCreateStagingTable:
		out, err = h.createStagingTable(x, r, p)
	case unity.OpGenerateTemporaryTableCredentials:
		out, err = h.tableCredentials(x, r, p)
	case unity.OpGenerateTemporaryPathCredentials:
		out, err = h.pathCredentials(x, r, p)
	default:
		out, err = h.unityOn(r, rt, p)
	}
	switch {
	case err != nil:
		unity.WriteError(x, err)
	case out == nil: // a delete: UC answers 200 with an empty object
		unity.WriteJSON(x, http.StatusOK, struct{}{})
	default:
		unity.WriteJSON(x, http.StatusOK, out)
	}
}

// unityOn runs an operation on a catalog named in the path or query.
func (h *DeltaHandler) unityOn(r *http.Request, rt unity.Route, p *identity.Principal) (any, error) {
	cat, err := h.unityCatalog(r, rt.Catalog)
	if err != nil {
		return nil, err
	}
	var ns []string
	if rt.Schema != "" {
		ns = []string{rt.Schema}
	}
	if err := h.unityAuthorize(r, p, cat, rt.Op, rt.Iceberg, policies.Resource{Namespace: ns, Table: rt.Table}); err != nil {
		return nil, err
	}
	var out any
	translated(r, func(r *http.Request) {
		ctx, q := r.Context(), r.URL.Query()
		ref := delta.Ref{Catalog: rt.Catalog, Namespace: ns, Name: rt.Table}
		switch rt.Op {
		case unity.OpGetCatalog:
			out, err = h.unity.Catalog(ctx, rt.Catalog)
		case unity.OpListSchemas:
			out, err = h.unity.Schemas(ctx, rt.Catalog, q, h.unityShown(r, p, cat, rt))
		case unity.OpGetSchema:
			out, err = h.unity.Schema(ctx, rt.Catalog, rt.Schema)
		case unity.OpDeleteSchema:
			// force drops the schema's tables and views: each is decided.
			mayDrop := func(kind, name string) error {
				if kind == "views" {
					return h.unityAuthorize(r, p, cat, rt.Op, icerest.OpDropView, policies.Resource{Namespace: ns, View: name})
				}
				return h.unityAuthorize(r, p, cat, rt.Op, icerest.OpDropTable, policies.Resource{Namespace: ns, Table: name})
			}
			err = h.unity.DeleteSchema(ctx, rt.Catalog, rt.Schema, q.Get("force") == "true", mayDrop)
		case unity.OpListTables:
			out, err = h.unity.Tables(ctx, rt.Catalog, rt.Schema, q, h.unityShown(r, p, cat, rt))
		case unity.OpGetTable:
			out, err = h.unity.Table(ctx, ref)
		case unity.OpDeleteTable:
			err = h.unity.DeleteTable(ctx, ref)
		}
	})
	return out, err
}

// unityShown decides which items of a listing page (listSchemas,
// listTables) the caller sees. UC's listings answer what a load of each
// item would (SchemaInfo, TableInfo), so an item is shown when the
// policy's visible rule keeps it, as the Iceberg door filters its
// listings, and the caller may load it (loadNamespaceMetadata,
// loadTable). Hidden items are never loaded.
func (h *DeltaHandler) unityShown(r *http.Request, p *identity.Principal, cat *catalogState, rt unity.Route) unity.Shown {
	listOp, loadOp := icerest.OpListNamespaces, icerest.OpLoadNamespaceMetadata
	var parent []string
	if rt.Op == unity.OpListTables {
		listOp, loadOp, parent = icerest.OpListTables, icerest.OpLoadTable, []string{rt.Schema}
	}
	item := func(name string) policies.Resource {
		if parent == nil {
			return policies.Resource{Namespace: []string{name}}
		}
		return policies.Resource{Namespace: parent, Table: name}
	}
	return func(names []string) []bool {
		shown := make([]bool, len(names))
		visible := func(int) bool { return true }
		if eng := h.app.guard.policy; eng != nil && len(names) > 0 {
			in := policyRequest{api: "unity", apiOp: string(rt.Op), op: listOp, principal: p, catalog: cat,
				resource: policies.Resource{Namespace: parent}}.input(r)
			in.Items = make([]policies.Item, len(names))
			for i, n := range names {
				res := item(n)
				in.Items[i] = policies.Item{Namespace: res.Namespace, Table: res.Table}
			}
			vis, err := eng.Filter(r.Context(), in)
			visible = func(i int) bool { return err == nil && i < len(vis) && vis[i] }
		}
		for i, n := range names {
			if !visible(i) {
				telemetry.From(r.Context()).CountDecision(false)
				continue
			}
			d := h.app.guard.authorize(r.Context(), policyRequest{api: "unity", apiOp: string(rt.Op), op: loadOp,
				principal: p, catalog: cat, resource: item(n)}.input(r))
			shown[i] = d.Allow
		}
		return shown
	}
}

// unityCatalog is the catalog a request names.
func (h *DeltaHandler) unityCatalog(r *http.Request, name string) (*catalogState, error) {
	cat, ok := h.app.catalog(name)
	if !ok {
		return nil, unity.Errorf(http.StatusNotFound, unity.CatalogNotFound, "Catalog not found: %s", name)
	}
	noteCatalog(r, cat)
	return cat, nil
}

// listCatalogs lists the catalogs the caller may use (getConfig allowed),
// by name, a page of max_results at a time.
func (h *DeltaHandler) listCatalogs(r *http.Request, p *identity.Principal) (*unity.ListCatalogsResponse, error) {
	page, next, err := unity.CatalogPage(h.usableCatalogs(r, p, unity.OpListCatalogs), r.URL.Query())
	if err != nil {
		return nil, err
	}
	out := &unity.ListCatalogsResponse{Catalogs: []unity.CatalogInfo{}, NextPageToken: next}
	for _, name := range page {
		out.Catalogs = append(out.Catalogs, unity.CatalogInfo{Name: name, Properties: map[string]string{}})
	}
	return out, nil
}

// usableCatalogs are the names of the catalogs the caller may use
// (getConfig allowed), sorted.
func (h *DeltaHandler) usableCatalogs(r *http.Request, p *identity.Principal, op unity.Op) []string {
	var usable []string
	for _, name := range slices.Sorted(maps.Keys(h.app.backends)) {
		cat := h.app.backends[name]
		d := h.app.guard.authorize(r.Context(), policyRequest{api: "unity", apiOp: string(op),
			op: icerest.OpGetConfig, principal: p, catalog: cat}.input(r))
		if d.Allow {
			usable = append(usable, name)
		}
	}
	return usable
}

// createCatalog: lakegate's catalogs are its configuration, so a catalog
// the caller may use already exists, and no other can be made here.
func (h *DeltaHandler) createCatalog(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return unity.Errorf(http.StatusBadRequest, unity.InvalidArgument, "malformed CreateCatalog: %v", err)
	}
	if req.Name == "" {
		return unity.Errorf(http.StatusBadRequest, unity.InvalidArgument, "CreateCatalog needs a name")
	}
	cat, ok := h.app.catalog(req.Name)
	if ok {
		if err := h.unityAuthorize(r, p, cat, unity.OpCreateCatalog, icerest.OpGetConfig, policies.Resource{}); err != nil {
			return err
		}
		return unity.Errorf(http.StatusBadRequest, unity.CatalogAlreadyExists,
			"Catalog already exists: %s (lakegate's catalogs are configured in its Caddyfile)", req.Name)
	}
	return unity.Errorf(http.StatusNotImplemented, unity.Unimplemented,
		"lakegate's catalogs are configured in its Caddyfile (the lakegate app's catalog blocks); createCatalog cannot add %q", req.Name)
}

// createSchema decides on the names in the body.
func (h *DeltaHandler) createSchema(w http.ResponseWriter, r *http.Request, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	req, err := unity.ParseCreateSchema(body)
	if err != nil {
		return nil, err
	}
	cat, err := h.unityCatalog(r, *req.CatalogName)
	if err != nil {
		return nil, err
	}
	res := policies.Resource{Namespace: []string{*req.Name}}
	if err := h.unityAuthorize(r, p, cat, unity.OpCreateSchema, icerest.OpCreateNamespace, res); err != nil {
		return nil, err
	}
	var out any
	translated(r, func(r *http.Request) { out, err = h.unity.CreateSchema(r.Context(), req) })
	return out, err
}

// createTable decides on the names in the body.
func (h *DeltaHandler) createTable(w http.ResponseWriter, r *http.Request, p *identity.Principal) (any, error) {
	body, err := readBody(w, r, defaultUnityBody)
	if err != nil {
		return nil, err
	}
	req, err := unity.ParseCreateTable(body)
	if err != nil {
		return nil, err
	}
	cat, err := h.unityCatalog(r, *req.CatalogName)
	if err != nil {
		return nil, err
	}
	res := policies.Resource{Namespace: []string{*req.SchemaName}, Table: *req.Name}
	if err := h.unityAuthorize(r, p, cat, unity.OpCreateTable, icerest.OpCreateTable, res); err != nil {
		return nil, err
	}
	var out any
	translated(r, func(r *http.Request) { out, err = h.unity.CreateTable(r.Context(), req) })
	return out, err
}

// defaultUnityBody caps the UC API's small bodies (names and properties).
const defaultUnityBody = 1 << 20

// unityAuthorize decides one operation on one resource.
func (h *DeltaHandler) unityAuthorize(r *http.Request, p *identity.Principal, cat *catalogState, ucOp unity.Op, op string, res policies.Resource) error {
	d := h.app.guard.decide(r, policyRequest{api: "unity", apiOp: string(ucOp), op: op, principal: p, catalog: cat, resource: res})
	if d.Allow {
		return nil
	}
	return unity.Errorf(http.StatusForbidden, unity.PermissionDenied, "%s", denial(string(ucOp), d))
}

// isUnity tells a UC API path from the Delta API's.
func isUnity(path string) (string, bool) {
	if !strings.HasPrefix(path, unityPrefix) || strings.HasPrefix(path, deltaPrefix) {
		return "", false
	}
	return strings.TrimPrefix(path, unityPrefix), true
}
