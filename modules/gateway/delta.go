package gateway

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
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
	h.svc = delta.NewService(h.app, store)
	h.svc.VendsPaths = len(h.PathCredentials) > 0
	h.unity = unity.NewService(h.svc)
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
	if h.storeKey != "" {
		_, err := sharedPool.Delete(h.storeKey)
		return err
	}
	return nil
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
	x, r := begin(w, r, "delta")
	defer x.end()
	// Parsed first so a 401 is counted under its operation; answered
	// after authentication, so a stranger learns nothing of the routes.
	rt, err := delta.ParseRoute(r.Method, strings.TrimPrefix(path, deltaPrefix))
	x.rec.SetOperation(string(rt.Op))
	p, ierr := h.app.guard.authenticate(r)
	if ierr != nil {
		x.Header().Set("WWW-Authenticate", "Bearer")
		delta.WriteError(x, r, delta.Errorf(http.StatusUnauthorized, delta.NotAuthorized, "%v", ierr))
		return nil
	}
	x.authenticated(r, p.ID)
	if err != nil {
		delta.WriteError(x, r, err)
		return nil
	}
	ctx := caller.With(r.Context(), caller.Caller{Principal: p.ID, Authorization: r.Header.Get("Authorization")})
	h.serve(x, r.WithContext(ctx), rt, p)
	return nil
}

// serve authorizes the route, then runs it.
func (h *DeltaHandler) serve(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) {
	switch rt.Op {
	case delta.OpGetConfig:
		h.serveConfig(w, r, rt, p)
		return
	case delta.OpGetTemporaryPathCredentials:
		h.serveTemporaryPath(w, r, rt, p)
		return
	case delta.OpGetStagingTableCredentials:
		h.serveStagingCredentials(w, r, rt, p)
		return
	}
	cat, ok := h.app.catalog(rt.Catalog)
	if !ok {
		delta.WriteError(w, r, delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", rt.Catalog))
		return
	}
	noteCatalog(r, cat)
	body, err := readBody(w, r, cat.cfg.MaxRequestBody)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	in, err := parseBody(rt.Op, body)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	if err := h.authorizeTable(r, rt, p, cat, in); err != nil {
		delta.WriteError(w, r, err)
		return
	}
	translated(r, func(r *http.Request) { h.run(w, r, rt, in) })
}

// parsed is a request body decoded and validated once, before the policy
// is asked: the names the policy decides on are the ones the operation
// then uses (JSON keys match struct fields case-insensitively, so reading
// a name from the raw body could differ from what the decoder takes).
type parsed struct {
	create  *delta.CreateTableRequest
	staging *delta.StagingTableRequest
	update  *delta.UpdateTableRequest
	rename  *delta.RenameRequest
	metrics *delta.MetricsRequest
}

// parseBody parses the body of the operations that carry one.
func parseBody(op delta.Op, body []byte) (parsed, error) {
	var in parsed
	var err error
	switch op {
	case delta.OpCreateTable:
		in.create, err = delta.ParseCreate(body)
	case delta.OpCreateStagingTable:
		in.staging, err = delta.ParseStaging(body)
	case delta.OpUpdateTable:
		in.update, err = delta.ParseUpdate(body)
	case delta.OpRenameTable:
		in.rename, err = delta.ParseRename(body)
	case delta.OpReportMetrics:
		in.metrics, err = delta.ParseMetrics(body)
	}
	return in, err
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

// authorizeTable asks the policy about every resource the operation
// touches: both names of a rename, and write access for READ_WRITE
// credentials (they let the caller change the table's files).
func (h *DeltaHandler) authorizeTable(r *http.Request, rt delta.Route, p *identity.Principal, cat *catalogState, in parsed) error {
	res := policies.Resource{Namespace: rt.Namespace, Table: rt.Table}
	checks := []struct {
		op  string
		res policies.Resource
	}{{rt.Iceberg, res}}
	switch {
	case in.create != nil:
		checks[0].res.Table = *in.create.Name
	case in.staging != nil:
		checks[0].res.Table = *in.staging.Name
	case in.rename != nil:
		checks = append(checks, struct {
			op  string
			res policies.Resource
		}{rt.Iceberg, policies.Resource{Namespace: rt.Namespace, Table: *in.rename.NewName}})
	case rt.Op == delta.OpGetTableCredentials && r.URL.Query().Get("operation") == delta.ReadWrite:
		checks = append(checks, struct {
			op  string
			res policies.Resource
		}{icerest.OpUpdateTable, res})
	}
	for _, c := range checks {
		if err := h.authorize(r, p, cat, rt.Op, c.op, c.res); err != nil {
			return err
		}
	}
	return nil
}

// authorize decides one operation on one resource; cat may be nil for
// operations outside any catalog.
func (h *DeltaHandler) authorize(r *http.Request, p *identity.Principal, cat *catalogState, ucOp delta.Op, op string, res policies.Resource) error {
	d := h.app.guard.decide(r, policyRequest{api: "delta", apiOp: string(ucOp), op: op, principal: p, catalog: cat, resource: res})
	if d.Allow {
		return nil
	}
	return delta.Errorf(http.StatusForbidden, delta.PermissionDenied, "%s", denial(string(ucOp), d))
}

// run translates an authorized table operation.
func (h *DeltaHandler) run(w http.ResponseWriter, r *http.Request, rt delta.Route, in parsed) {
	ctx := r.Context()
	ref := delta.Ref{Catalog: rt.Catalog, Namespace: rt.Namespace, Name: rt.Table}
	var out any
	var err error
	switch rt.Op {
	case delta.OpCreateTable:
		out, err = h.svc.Create(ctx, ref, in.create)
	case delta.OpCreateStagingTable:
		out, err = h.svc.Stage(ctx, ref, in.staging)
	case delta.OpLoadTable:
		out, err = h.svc.Load(ctx, ref)
	case delta.OpUpdateTable:
		out, err = h.svc.Update(ctx, ref, in.update)
	case delta.OpDeleteTable:
		err = h.svc.Delete(ctx, ref)
	case delta.OpTableExists:
		err = h.svc.Exists(ctx, ref)
	case delta.OpRenameTable:
		err = h.svc.Rename(ctx, ref, in.rename)
	case delta.OpGetTableCredentials:
		out, err = h.svc.Credentials(ctx, ref, r.URL.Query().Get("operation"))
	case delta.OpReportMetrics:
		err = h.svc.Metrics(ctx, ref, in.metrics)
	}
	writeResult(w, r, out, err)
}

func writeResult(w http.ResponseWriter, r *http.Request, out any, err error) {
	switch {
	case err != nil:
		delta.WriteError(w, r, err)
	case out == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		if lt, ok := out.(*delta.LoadTableResponse); ok {
			w.Header().Set("ETag", `"`+lt.Metadata.Etag+`"`)
		}
		delta.WriteJSON(w, http.StatusOK, out)
	}
}

// serveConfig answers getConfig for ?catalog=.
func (h *DeltaHandler) serveConfig(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) {
	q := r.URL.Query()
	name := q.Get("catalog")
	if cat, ok := h.app.catalog(name); ok {
		if err := h.authorize(r, p, cat, rt.Op, rt.Iceberg, policies.Resource{}); err != nil {
			delta.WriteError(w, r, err)
			return
		}
	}
	out, err := h.svc.Config(r.Context(), name, q.Get("protocol-versions"))
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	delta.WriteJSON(w, http.StatusOK, out)
}

// serveTemporaryPath answers getTemporaryPathCredentials: the location
// picks the configured catalog whose allowed locations contain it, the
// policy decides (loadCredentials and createTable on the path), and the
// catalog vends.
func (h *DeltaHandler) serveTemporaryPath(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) {
	q := r.URL.Query()
	loc, op := q.Get("location"), q.Get("operation")
	if loc == "" {
		delta.WriteError(w, r, delta.Errorf(http.StatusBadRequest, delta.InvalidParameterValue, "location is required"))
		return
	}
	if op != delta.Read && op != delta.ReadWrite {
		delta.WriteError(w, r, delta.Errorf(http.StatusBadRequest, delta.InvalidParameterValue, "operation must be READ or READ_WRITE, got %q", op))
		return
	}
	src, cat, err := h.pathSource(loc)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	// The catalog vends what it vends for a new table there, which READ
	// cannot narrow: both operations need createTable on the path too.
	res := policies.Resource{Namespace: src.Namespace, Location: loc}
	for _, iceOp := range []string{rt.Iceberg, icerest.OpCreateTable} {
		if err := h.authorize(r, p, cat, rt.Op, iceOp, res); err != nil {
			delta.WriteError(w, r, err)
			return
		}
	}
	out, err := h.svc.PathCredentials(r.Context(), src.Catalog, src.Namespace, loc, op)
	writeResult(w, r, out, err)
}

// pathSource is the configured source whose catalog may hold loc.
func (h *DeltaHandler) pathSource(loc string) (PathCredentialsSource, *catalogState, error) {
	if len(h.PathCredentials) == 0 {
		return PathCredentialsSource{}, nil, delta.Errorf(http.StatusNotImplemented, delta.NotImplemented,
			"temporary path credentials are not configured: Iceberg catalogs vend credentials per table, so lakegate "+
				"vends them through a catalog named in lakegate_delta's path_credentials")
	}
	if err := delta.CheckLocationSyntax(loc); err != nil {
		return PathCredentialsSource{}, nil, err
	}
	for _, src := range h.PathCredentials {
		if cat, ok := h.app.catalog(src.Catalog); ok && cat.locations.Allows(loc) {
			return src, cat, nil
		}
	}
	return PathCredentialsSource{}, nil, delta.Errorf(http.StatusForbidden, delta.PermissionDenied,
		"location %q is outside the allowed locations of every catalog that vends path credentials", loc)
}

// serveStagingCredentials answers getStagingTableCredentials; the staged
// table's namespace and name are what the policy is asked about.
func (h *DeltaHandler) serveStagingCredentials(w http.ResponseWriter, r *http.Request, rt delta.Route, p *identity.Principal) {
	st, err := h.svc.StagedTable(r.Context(), rt.TableID)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	cat, ok := h.app.catalog(st.Catalog)
	if !ok {
		delta.WriteError(w, r, delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", st.Catalog))
		return
	}
	if err := h.authorize(r, p, cat, rt.Op, rt.Iceberg, policies.Resource{Namespace: st.Namespace, Table: st.Name}); err != nil {
		delta.WriteError(w, r, err)
		return
	}
	out, err := h.svc.StagingCredentials(r.Context(), st)
	writeResult(w, r, out, err)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*DeltaHandler)(nil)
	_ caddy.Validator             = (*DeltaHandler)(nil)
	_ caddy.CleanerUpper          = (*DeltaHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*DeltaHandler)(nil)
)
