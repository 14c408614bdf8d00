package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/unity"
	"github.com/lakegate/lakegate/upstream/icerest"
)

func init() {
	caddy.RegisterModule(DeltaHandler{})
}

// deltaPrefix is where Unity Catalog's Delta REST API lives.
const deltaPrefix = "/api/2.1/unity-catalog/delta/v1/"

// DeltaHandler is the Unity Catalog Delta REST API front door: it
// authenticates, authorizes the UC operation (policy input api "delta"),
// and has translate/delta run it on the catalog's Iceberg pipeline.
type DeltaHandler struct {
	// PathCredentials are where getTemporaryPathCredentials vends from:
	// each names a catalog and the namespace whose stage-create vends the
	// credentials. A location goes to the first whose catalog's allowed
	// locations contain it. Default: none, and the operation answers 501.
	PathCredentials []PathCredentialsSource `json:"path_credentials,omitempty"`

	app      *App
	svc      *delta.Service
	unity    *unity.Service
	storeKey string
	indexKey string
}

// PathCredentialsSource is one catalog that vends temporary path
// credentials.
type PathCredentialsSource struct {
	// Catalog is the lakegate catalog name; it must have allowed
	// locations (an embedded catalog always does: its warehouse).
	Catalog string `json:"catalog"`
	// Namespace is the existing namespace the stage-create runs in.
	Namespace []string `json:"namespace"`
}

// deltaDoor answers in the Delta API's error model.
var deltaDoor = door{
	unauthorized: func(why error) error {
		return delta.Errorf(http.StatusUnauthorized, delta.NotAuthorized, "%v", why)
	},
	write: delta.WriteError,
}

// CaddyModule returns the Caddy module information.
func (DeltaHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.lakegate_delta",
		New: func() caddy.Module { return new(DeltaHandler) },
	}
}

// Provision binds the handler to the lakegate app and its shared store.
func (h *DeltaHandler) Provision(ctx caddy.Context) error {
	app, err := configuredApp(ctx, "lakegate_delta")
	if err != nil {
		return err
	}
	h.app = app
	store, key, err := h.app.deltaStore()
	if err != nil {
		return err
	}
	h.storeKey = key
	h.svc = delta.NewService(h.app, h.app.BeneathSync(), store)
	h.svc.VendsPaths = len(h.PathCredentials) > 0
	index, key, err := h.app.unityIndex()
	if err != nil {
		return err
	}
	h.indexKey = key
	h.unity = unity.NewService(h.svc, index)
	h.app.syncDeltaLogs(h.svc)
	return nil
}

// Validate checks that every path_credentials source can vend: a
// configured catalog with locations to confine paths to, and a namespace.
func (h *DeltaHandler) Validate() error {
	for _, src := range h.PathCredentials {
		cat, ok := h.app.catalog(src.Catalog)
		switch {
		case !ok:
			return fmt.Errorf("lakegate_delta path_credentials: no catalog named %q", src.Catalog)
		case cat.locations == nil:
			return fmt.Errorf("lakegate_delta path_credentials: catalog %q has no allowed_locations to confine paths to", src.Catalog)
		case len(src.Namespace) == 0:
			return fmt.Errorf("lakegate_delta path_credentials: catalog %q needs a namespace", src.Catalog)
		}
	}
	return nil
}

// Cleanup releases the handler's hold on the shared store.
func (h *DeltaHandler) Cleanup() error {
	var errs []error
	for _, key := range []string{h.storeKey, h.indexKey} {
		if key != "" {
			_, err := sharedPool.Delete(key)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ServeHTTP serves the Delta API and UC's catalog, schema and table API
// (unity.go), and passes anything else to next.
func (h *DeltaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	path := r.URL.EscapedPath()
	if rest, ok := isUnity(path); ok {
		h.serveUnity(w, r, rest)
		return nil
	}
	if !strings.HasPrefix(path, deltaPrefix) {
		return next.ServeHTTP(w, r)
	}
	x, r := begin(h.app, w, r, "delta")
	defer x.end()
	// Parsed first so a 401 is counted under its operation; answered
	// after authentication, so a stranger learns nothing of the routes.
	rt, err := delta.ParseRoute(r.Method, strings.TrimPrefix(path, deltaPrefix))
	x.rec.SetOperation(string(rt.Op))
	p, r, ok := deltaDoor.admit(h.app.guard, x, r)
	if !ok {
		return nil
	}
	if err != nil {
		delta.WriteError(x, r, err)
		return nil
	}
	h.serve(x, r, rt, p)
	return nil
}

// serve parses the request, asks the policy about every resource it
// touches, then has the service run it.
func (h *DeltaHandler) serve(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) {
	if rt.Op == delta.OpGetTemporaryPathCredentials && h.serveVendedPath(w, r, rt, p) {
		return
	}
	q, err := h.request(w, r, rt)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	for _, c := range q.Checks() {
		if err := h.authorize(r, p, c); err != nil {
			delta.WriteError(w, r, err)
			return
		}
	}
	if cat, _ := h.app.catalog(rt.Catalog); cat != nil && cat.vending != nil && rt.Op == delta.OpGetTableCredentials {
		h.serveVendedCredentials(w, r, q, p, cat)
		return
	}
	// Table operations run under the translate span; getConfig and the
	// path and staging credentials never did, and still do not.
	if rt.Catalog == "" {
		writeResult(w, r, q, h.svc)
		return
	}
	translated(r, func(r *http.Request) { writeResult(w, r, q, h.svc) })
}

// request reads and parses the request: a table operation's body up to
// its catalog's limit; for temporary path credentials, the configured
// source the location picks; for staging credentials, the staged table.
func (h *DeltaHandler) request(w http.ResponseWriter, r *http.Request, rt delta.Route) (*delta.Request, error) {
	var body []byte
	if rt.Catalog != "" {
		cat, ok := h.app.catalog(rt.Catalog)
		if !ok {
			return nil, delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", rt.Catalog)
		}
		noteCatalog(r, cat)
		var err error
		if body, err = readBody(w, r, cat.cfg.MaxRequestBody); err != nil {
			return nil, err
		}
	}
	q, err := delta.ParseRequest(rt, r.URL.Query(), body)
	if err != nil {
		return nil, err
	}
	if rt.Op == delta.OpGetTemporaryPathCredentials {
		src, err := h.pathSource(q.Location())
		if err != nil {
			return nil, err
		}
		q.VendFrom(src.Catalog, src.Namespace)
	}
	return q, h.svc.Resolve(r.Context(), q)
}

// readBody reads a request body up to limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodDelete {
		return nil, nil
	}
	// The Iceberg door's limit and read, answered in the UC error model:
	// an oversized body is a 413 whether or not it declared its length.
	err := limitBody(w, r, limit)
	var b []byte
	if err == nil {
		b, err = icerest.HoldBody(r)
	}
	if err != nil {
		e := icerest.AsError(err)
		return nil, delta.Errorf(e.Code, delta.BadRequest, "%s", e.Message)
	}
	return b, nil
}

// authorize has the policy decide one check (policy input api "delta").
func (h *DeltaHandler) authorize(r *http.Request, p *identity.Principal, c delta.Check) error {
	cat, ok := h.app.catalog(c.Catalog)
	switch {
	case !ok && c.IfCatalog:
		return nil
	case !ok:
		return delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", c.Catalog)
	}
	res := policies.Resource{Namespace: c.Namespace, Table: c.Table, Location: c.Location}
	d := h.app.guard.decide(r, policyRequest{api: "delta", apiOp: string(c.Op), op: c.Iceberg, principal: p, catalog: cat, resource: res})
	if d.Allow {
		return nil
	}
	return delta.Errorf(http.StatusForbidden, delta.PermissionDenied, "%s", denial(string(c.Op), d))
}

// writeResult runs an authorized request and writes its answer.
func writeResult(w http.ResponseWriter, r *http.Request, q *delta.Request, svc *delta.Service) {
	status, out, err := svc.Serve(r.Context(), q)
	switch {
	case err != nil:
		delta.WriteError(w, r, err)
	case out == nil:
		w.WriteHeader(status)
	default:
		if lt, ok := out.(*delta.LoadTableResponse); ok {
			w.Header().Set("ETag", `"`+lt.Metadata.Etag+`"`)
		}
		delta.WriteJSON(w, status, out)
	}
}

// serveVendedCredentials answers getTableCredentials for a catalog that
// vends (storage vended_credentials): the same vending as UC's temporary
// table credentials and the Iceberg door's (App.vendTableKeys, decided
// as signRequest with storage_access read for READ, write for
// READ_WRITE), in the Delta API's model: one credential per place the
// keys are scoped to, labelled with the operation asked, expiring when
// the keys do. The translator is not asked: a storage catalog vends it
// nothing.
func (h *DeltaHandler) serveVendedCredentials(w http.ResponseWriter, r *http.Request, q *delta.Request, p *identity.Principal, cat *catalogState) {
	c, err := h.app.vendTableKeys(r, p, cat, "delta", string(delta.OpGetTableCredentials), q.Namespace, q.Table,
		q.Operation() == delta.ReadWrite)
	if err != nil {
		telemetry.From(r.Context()).Refused()
		delta.WriteError(w, r, deltaStorageError(err))
		return
	}
	// Keys for one principal: not for shared caches.
	w.Header().Set("Cache-Control", "no-store")
	delta.WriteJSON(w, http.StatusOK, h.svc.Credentials(cat.vending.storageCredentials(c), q.Operation()))
}

// deltaStorageError is a failure to load the table or vend for it (an
// Iceberg-model error) in the Delta API's model, with its status and
// message.
func deltaStorageError(err error) error {
	e := icerest.AsError(err)
	typ := delta.InternalServerError
	switch e.Code {
	case http.StatusForbidden:
		typ = delta.PermissionDenied
	case http.StatusNotFound:
		typ = delta.NoSuchTable
	}
	return delta.Errorf(e.Code, typ, "%s", e.Message)
}

// serveVendedPath answers getTemporaryPathCredentials for a location of
// a catalog that vends (App.vendPathKeys: READ inside one table, decided
// as its files' read; READ_WRITE inside one table, decided as their
// write, or at a new table's place, decided as createTable on the
// catalog), in the Delta API's model. It reports false, writing nothing,
// for a location no such catalog holds.
func (h *DeltaHandler) serveVendedPath(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) bool {
	q, err := delta.ParseRequest(rt, r.URL.Query(), nil)
	if err != nil {
		return false // answered by the usual path, in the same model
	}
	loc := strings.TrimSuffix(q.Location(), "/")
	cat := h.app.vendingCatalogOf(loc)
	if cat == nil {
		return false
	}
	want := pathRead
	if q.Operation() == delta.ReadWrite {
		want = pathWrite
	}
	c, _, err := h.app.vendPathKeys(r, p, cat, "delta", string(rt.Op), loc, want, false)
	if err != nil {
		telemetry.From(r.Context()).Refused()
		delta.WriteError(w, r, deltaStorageError(err))
		return true
	}
	// Keys for one principal: not for shared caches.
	w.Header().Set("Cache-Control", "no-store")
	delta.WriteJSON(w, http.StatusOK, h.svc.Credentials(cat.vending.storageCredentials(c), q.Operation()))
	return true
}

// pathSource is the configured source whose catalog may hold loc.
func (h *DeltaHandler) pathSource(loc string) (PathCredentialsSource, error) {
	if len(h.PathCredentials) == 0 {
		return PathCredentialsSource{}, delta.Errorf(http.StatusNotImplemented, delta.NotImplemented,
			"temporary path credentials are not configured: Iceberg catalogs vend credentials per table, so lakegate "+
				"vends them through a catalog named in lakegate_delta's path_credentials")
	}
	if err := delta.CheckLocationSyntax(loc); err != nil {
		return PathCredentialsSource{}, err
	}
	for _, src := range h.PathCredentials {
		if cat, ok := h.app.catalog(src.Catalog); ok && cat.locations.Allows(loc) {
			return src, nil
		}
	}
	return PathCredentialsSource{}, delta.Errorf(http.StatusForbidden, delta.PermissionDenied,
		"location %q is outside the allowed locations of every catalog that vends path credentials", loc)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*DeltaHandler)(nil)
	_ caddy.Validator             = (*DeltaHandler)(nil)
	_ caddy.CleanerUpper          = (*DeltaHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*DeltaHandler)(nil)
)
