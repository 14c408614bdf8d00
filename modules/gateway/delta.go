package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

func init() {
	caddy.RegisterModule(DeltaHandler{})
	httpcaddyfile.RegisterHandlerDirective("lakegate_delta", parseDeltaHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_delta", httpcaddyfile.Before, "reverse_proxy")
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
	app, err := ctx.App("lakegate")
	if err != nil {
		return err
	}
	h.app = app.(*App)
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
	store, key, err := h.app.deltaStore()
	if err != nil {
		return err
	}
	h.storeKey = key
	h.svc = delta.NewService(h.app, store)
	h.svc.VendsPaths = len(h.PathCredentials) > 0
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

// deltaRoute is a parsed Delta API request.
type deltaRoute struct {
	op        string // the UC operationId
	iceberg   string // the closest Iceberg operationId, for policy
	catalog   string
	schema    string
	table     string
	tableID   string
	namespace []string
}

// ServeHTTP serves the Delta API and passes anything else to next.
func (h *DeltaHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, deltaPrefix) {
		return next.ServeHTTP(w, r)
	}
	p, ierr := h.app.guard.authenticate(r)
	if ierr != nil {
		w.Header().Set("WWW-Authenticate", "Bearer")
		delta.WriteError(w, r, delta.Errorf(http.StatusUnauthorized, delta.NotAuthorized, "%s", ierr.Message))
		return nil
	}
	rt, err := parseDeltaRoute(r.Method, strings.TrimPrefix(path, deltaPrefix))
	if err != nil {
		delta.WriteError(w, r, err)
		return nil
	}
	ctx := translate.WithPrincipal(r.Context(), p.ID)
	ctx = upstream.WithClientAuthorization(ctx, r.Header.Get("Authorization"))
	ctx = delta.WithAuthorization(ctx, r.Header.Get("Authorization"))
	h.serve(w, r.WithContext(ctx), rt, p)
	return nil
}

// parseDeltaRoute names the operation and resource of a Delta API path.
func parseDeltaRoute(method, rest string) (deltaRoute, *delta.Error) {
	raw := strings.Split(rest, "/")
	seg := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return deltaRoute{}, delta.Errorf(http.StatusBadRequest, delta.BadRequest, "malformed path segment %q", s)
		}
		seg[i] = u
	}
	var rt deltaRoute
	switch {
	case len(seg) == 1 && seg[0] == "config":
		rt = deltaRoute{op: "getConfig", iceberg: icerest.OpGetConfig}
	case len(seg) == 1 && seg[0] == "temporary-path-credentials":
		rt = deltaRoute{op: "getTemporaryPathCredentials", iceberg: icerest.OpLoadCredentials}
	case len(seg) == 3 && seg[0] == "staging-tables" && seg[2] == "credentials":
		rt = deltaRoute{op: "getStagingTableCredentials", iceberg: icerest.OpCreateTable, tableID: seg[1]}
	case len(seg) >= 5 && seg[0] == "catalogs" && seg[2] == "schemas":
		return tableRoute(method, seg)
	default:
		return rt, delta.Errorf(http.StatusNotFound, delta.NotFound, "no Delta API endpoint at %s", rest)
	}
	return rt, expectMethod(method, http.MethodGet)
}

// tableOps maps (resource suffix, method) to UC and Iceberg operations.
var tableOps = map[string][2]string{
	"staging-tables POST": {"createStagingTable", icerest.OpCreateTable},
	"tables POST":         {"createTable", icerest.OpCreateTable},
	"table GET":           {"loadTable", icerest.OpLoadTable},
	"table POST":          {"updateTable", icerest.OpUpdateTable},
	"table DELETE":        {"deleteTable", icerest.OpDropTable},
	"table HEAD":          {"tableExists", icerest.OpTableExists},
	"rename POST":         {"renameTable", icerest.OpRenameTable},
	"credentials GET":     {"getTableCredentials", icerest.OpLoadCredentials},
	"metrics POST":        {"reportMetrics", icerest.OpReportMetrics},
}

func tableRoute(method string, seg []string) (deltaRoute, *delta.Error) {
	rt := deltaRoute{catalog: seg[1], schema: seg[3]}
	var kind string
	switch {
	case len(seg) == 5 && (seg[4] == "tables" || seg[4] == "staging-tables"):
		kind = seg[4]
	case len(seg) == 6 && seg[4] == "tables":
		kind, rt.table = "table", seg[5]
	case len(seg) == 7 && seg[4] == "tables" && (seg[6] == "rename" || seg[6] == "credentials" || seg[6] == "metrics"):
		kind, rt.table = seg[6], seg[5]
	default:
		return rt, delta.Errorf(http.StatusNotFound, delta.NotFound, "no Delta API endpoint at %s", strings.Join(seg, "/"))
	}
	ops, ok := tableOps[kind+" "+method]
	if !ok {
		return rt, delta.Errorf(http.StatusMethodNotAllowed, delta.BadRequest, "%s is not allowed here", method)
	}
	rt.op, rt.iceberg = ops[0], ops[1]
	// A schema or table name no catalog can hold names nothing: 404, the
	// answer every table operation lists (tableExists lists no 400).
	ns, err := delta.ParseSchema(rt.schema)
	if err != nil {
		return rt, delta.Errorf(http.StatusNotFound, delta.NoSuchSchema, "no schema %q: %s", rt.schema, err.Message)
	}
	rt.namespace = ns
	for _, n := range ns {
		if n == "." || n == ".." {
			return rt, delta.Errorf(http.StatusNotFound, delta.NoSuchSchema, "no schema %q: %q is not a schema name", rt.schema, n)
		}
	}
	if rt.table == "." || rt.table == ".." {
		return rt, delta.Errorf(http.StatusNotFound, delta.NoSuchTable, "no table %q: it is not a table name", rt.table)
	}
	return rt, nil
}

func expectMethod(method, want string) *delta.Error {
	if method != want {
		return delta.Errorf(http.StatusMethodNotAllowed, delta.BadRequest, "%s is not allowed here; use %s", method, want)
	}
	return nil
}

// serve authorizes the route, then runs it.
func (h *DeltaHandler) serve(w http.ResponseWriter, r *http.Request, rt deltaRoute, p *identity.Principal) {
	switch rt.op {
	case "getConfig":
		h.serveConfig(w, r, rt, p)
		return
	case "getTemporaryPathCredentials":
		h.serveTemporaryPath(w, r, rt, p)
		return
	case "getStagingTableCredentials":
		h.serveStagingCredentials(w, r, rt, p)
		return
	}
	cat, ok := h.app.catalog(rt.catalog)
	if !ok {
		delta.WriteError(w, r, delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", rt.catalog))
		return
	}
	body, err := readBody(w, r, cat.cfg.MaxRequestBody)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	if err := h.authorizeTable(r, rt, p, cat, body); err != nil {
		delta.WriteError(w, r, err)
		return
	}
	h.run(w, r, rt, body)
}

// readBody reads a request body up to limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodDelete {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, delta.Errorf(http.StatusRequestEntityTooLarge, delta.BadRequest,
			"request body of %d bytes exceeds the limit of %d", r.ContentLength, limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, delta.Errorf(http.StatusBadRequest, delta.BadRequest, "reading request body: %v", err)
	}
	return b, nil
}

// authorizeTable asks the policy about every resource the operation
// touches: both names of a rename, and write access for READ_WRITE
// credentials (they let the caller change the table's files).
func (h *DeltaHandler) authorizeTable(r *http.Request, rt deltaRoute, p *identity.Principal, cat *catalogState, body []byte) error {
	res := policies.Resource{Namespace: rt.namespace, Table: rt.table}
	checks := []struct {
		op  string
		res policies.Resource
	}{{rt.iceberg, res}}
	switch {
	case rt.op == "createTable" || rt.op == "createStagingTable":
		checks[0].res.Table = bodyName(body, "name")
	case rt.op == "renameTable":
		checks = append(checks, struct {
			op  string
			res policies.Resource
		}{rt.iceberg, policies.Resource{Namespace: rt.namespace, Table: bodyName(body, "new-name")}})
	case rt.op == "getTableCredentials" && r.URL.Query().Get("operation") == delta.ReadWrite:
		checks = append(checks, struct {
			op  string
			res policies.Resource
		}{icerest.OpUpdateTable, res})
	}
	for _, c := range checks {
		if err := h.authorize(r, p, cat, rt.op, c.op, c.res); err != nil {
			return err
		}
	}
	return nil
}

// authorize decides one operation on one resource; cat may be nil for
// operations outside any catalog.
func (h *DeltaHandler) authorize(r *http.Request, p *identity.Principal, cat *catalogState, ucOp, op string, res policies.Resource) error {
	c := cat
	if c == nil {
		c = &catalogState{}
	}
	in := input(r, p, c, op, res)
	in.API, in.APIOperation = "delta", ucOp
	if cat == nil {
		in.Resource.Backend = ""
	}
	d := h.app.guard.authorize(r.Context(), in)
	if d.Allow {
		return nil
	}
	reason := d.Reason
	if reason == "" {
		reason = "denied by policy"
	}
	return delta.Errorf(http.StatusForbidden, delta.PermissionDenied, "%s: %s", ucOp, reason)
}

// run translates an authorized table operation.
func (h *DeltaHandler) run(w http.ResponseWriter, r *http.Request, rt deltaRoute, body []byte) {
	ctx := r.Context()
	ref := delta.Ref{Catalog: rt.catalog, Namespace: rt.namespace, Name: rt.table}
	var out any
	var err error
	switch rt.op {
	case "createTable":
		out, err = h.create(ctx, ref, body)
	case "createStagingTable":
		out, err = h.stage(ctx, ref, body)
	case "loadTable":
		out, err = h.svc.Load(ctx, ref)
	case "updateTable":
		out, err = h.update(ctx, ref, body)
	case "deleteTable":
		err = h.svc.Delete(ctx, ref)
	case "tableExists":
		err = h.svc.Exists(ctx, ref)
	case "renameTable":
		err = h.rename(ctx, ref, body)
	case "getTableCredentials":
		out, err = h.svc.Credentials(ctx, ref, r.URL.Query().Get("operation"))
	case "reportMetrics":
		err = h.metrics(ctx, ref, body)
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

// The body-carrying operations validate before translating. Each returns
// a nil interface (not a typed nil) on failure.
func (h *DeltaHandler) create(ctx context.Context, ref delta.Ref, body []byte) (any, error) {
	req, verr := delta.ParseCreate(body)
	if verr != nil {
		return nil, verr
	}
	return h.svc.Create(ctx, ref, req)
}

func (h *DeltaHandler) stage(ctx context.Context, ref delta.Ref, body []byte) (any, error) {
	req, verr := delta.ParseStaging(body)
	if verr != nil {
		return nil, verr
	}
	return h.svc.Stage(ctx, ref, req)
}

func (h *DeltaHandler) update(ctx context.Context, ref delta.Ref, body []byte) (any, error) {
	req, verr := delta.ParseUpdate(body)
	if verr != nil {
		return nil, verr
	}
	return h.svc.Update(ctx, ref, req)
}

func (h *DeltaHandler) rename(ctx context.Context, ref delta.Ref, body []byte) error {
	req, verr := delta.ParseRename(body)
	if verr != nil {
		return verr
	}
	return h.svc.Rename(ctx, ref, req)
}

func (h *DeltaHandler) metrics(ctx context.Context, ref delta.Ref, body []byte) error {
	req, verr := delta.ParseMetrics(body)
	if verr != nil {
		return verr
	}
	return h.svc.Metrics(ctx, ref, req)
}

// serveConfig answers getConfig for ?catalog=.
func (h *DeltaHandler) serveConfig(w http.ResponseWriter, r *http.Request, rt deltaRoute, p *identity.Principal) {
	q := r.URL.Query()
	name := q.Get("catalog")
	if cat, ok := h.app.catalog(name); ok {
		if err := h.authorize(r, p, cat, rt.op, rt.iceberg, policies.Resource{}); err != nil {
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
// policy decides (loadCredentials on the path; READ_WRITE also
// createTable), and the catalog vends.
func (h *DeltaHandler) serveTemporaryPath(w http.ResponseWriter, r *http.Request, rt deltaRoute, p *identity.Principal) {
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
	res := policies.Resource{Namespace: src.Namespace, Location: loc}
	ops := []string{rt.iceberg}
	if op == delta.ReadWrite {
		ops = append(ops, icerest.OpCreateTable)
	}
	for _, iceOp := range ops {
		if err := h.authorize(r, p, cat, rt.op, iceOp, res); err != nil {
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
	if err := locations.Valid(loc); err != nil {
		return PathCredentialsSource{}, nil, delta.Errorf(http.StatusBadRequest, delta.InvalidParameterValue,
			"location %q is not an absolute storage location: %v", loc, err)
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
func (h *DeltaHandler) serveStagingCredentials(w http.ResponseWriter, r *http.Request, rt deltaRoute, p *identity.Principal) {
	st, err := h.svc.StagedTable(r.Context(), rt.tableID)
	if err != nil {
		delta.WriteError(w, r, err)
		return
	}
	cat, ok := h.app.catalog(st.Catalog)
	if !ok {
		delta.WriteError(w, r, delta.Errorf(http.StatusNotFound, delta.NoSuchCatalog, "no catalog named %q", st.Catalog))
		return
	}
	if err := h.authorize(r, p, cat, rt.op, rt.iceberg, policies.Resource{Namespace: st.Namespace, Table: st.Name}); err != nil {
		delta.WriteError(w, r, err)
		return
	}
	out, err := h.svc.StagingCredentials(r.Context(), st)
	writeResult(w, r, out, err)
}

// parseDeltaHandler parses the `lakegate_delta` directive.
func parseDeltaHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	handler := new(DeltaHandler)
	if err := handler.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return handler, nil
}

// UnmarshalCaddyfile reads
//
//	lakegate_delta {
//		path_credentials <catalog> <namespace-level>...
//	}
//
// path_credentials may be repeated; the first whose catalog holds a
// location vends for it.
func (h *DeltaHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "path_credentials":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.Errf("path_credentials needs a catalog and a namespace")
			}
			h.PathCredentials = append(h.PathCredentials, PathCredentialsSource{Catalog: args[0], Namespace: args[1:]})
		default:
			return d.Errf("unknown lakegate_delta option %q", d.Val())
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*DeltaHandler)(nil)
	_ caddy.CleanerUpper          = (*DeltaHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*DeltaHandler)(nil)
	_ caddyfile.Unmarshaler       = (*DeltaHandler)(nil)
)

// bodyName reads a string field of a JSON body for the policy input; a
// malformed body yields "" here and a 400 from validation after.
func bodyName(body []byte, key string) string {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	s, _ := m[key].(string)
	return s
}
