package unified

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Member is a member catalog as the unified catalog uses it: its own
// pipeline (*upstream.Pipeline), so a request through the unified catalog
// gets the member's replay, cache, confinement and breaker, keyed by the
// member's own names.
type Member interface {
	// Config is the member backend's /v1/config.
	Config(ctx context.Context) (*upstream.CatalogConfig, error)
	// Serve runs the request through the member on behalf of principal.
	Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string)
}

// Backend is a unified catalog as an upstream.Backend: every request is
// sent to the member that holds its namespace, with names rewritten from
// the unified catalog's to the member's in the path, `parent` and the
// body, and back in the answer. It asks for the caller on the request's
// context (see upstream.CallerBackend).
type Backend struct {
	name    string
	router  *router
	members map[string]Member
	order   []string // the members, sorted
}

// New is catalog name's unified backend over members, which must hold
// every member cfg names.
func New(name string, cfg Config, members map[string]Member) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rt, _ := compile(cfg)
	b := &Backend{name: name, router: rt, members: map[string]Member{}, order: cfg.Members()}
	for _, m := range b.order {
		if members[m] == nil {
			return nil, fmt.Errorf("member catalog %q is not given", m)
		}
		b.members[m] = members[m]
	}
	return b, nil
}

// ActsForCaller marks the backend as one that calls other pipelines for
// the request's caller (upstream.CallerBackend).
func (*Backend) ActsForCaller() {}

var _ upstream.CallerBackend = (*Backend)(nil)

// defaultEndpoints are the endpoints Iceberg clients assume of a catalog
// whose /v1/config lists none (Iceberg Java's Endpoint defaults, views
// left out).
var defaultEndpoints = []string{
	icerest.Endpoints[icerest.OpListNamespaces], icerest.Endpoints[icerest.OpLoadNamespaceMetadata],
	icerest.Endpoints[icerest.OpCreateNamespace], icerest.Endpoints[icerest.OpUpdateProperties],
	icerest.Endpoints[icerest.OpDropNamespace], icerest.Endpoints[icerest.OpListTables],
	icerest.Endpoints[icerest.OpLoadTable], icerest.Endpoints[icerest.OpCreateTable],
	icerest.Endpoints[icerest.OpUpdateTable], icerest.Endpoints[icerest.OpDropTable],
	icerest.Endpoints[icerest.OpRenameTable], icerest.Endpoints[icerest.OpRegisterTable],
	icerest.Endpoints[icerest.OpReportMetrics], icerest.Endpoints[icerest.OpCommitTransaction],
}

// Config is the unified catalog's /v1/config: the endpoints every member
// serves (none listed when no member lists any; a member that lists none
// counts as serving the defaults clients then assume), and the defaults
// every member agrees on. Overrides are left to each table: see
// tableOverrides.
func (b *Backend) Config(ctx context.Context) (*upstream.CatalogConfig, error) {
	out := &upstream.CatalogConfig{Defaults: map[string]string{}, Overrides: map[string]string{}}
	var endpoints []string
	listed := false
	for i, name := range b.order {
		cc, err := b.members[name].Config(ctx)
		if err != nil {
			return nil, fmt.Errorf("member catalog %q: %w", name, err)
		}
		eps := cc.Endpoints
		if len(eps) == 0 {
			eps = defaultEndpoints
		} else {
			listed = true
		}
		if i == 0 {
			endpoints = slices.Clone(eps)
			for k, v := range cc.Defaults {
				if !catalogLevelKey(k) {
					out.Defaults[k] = v
				}
			}
			continue
		}
		endpoints = slices.DeleteFunc(endpoints, func(ep string) bool { return !slices.Contains(eps, ep) })
		for k, v := range out.Defaults {
			if cc.Defaults[k] != v {
				delete(out.Defaults, k)
			}
		}
	}
	if listed {
		slices.Sort(endpoints)
		out.Endpoints = endpoints
	}
	return out, nil
}

// catalogLevelKey tells /v1/config keys about the catalog connection
// itself (its URI, prefix, separator, auth), which are the unified
// catalog's own and never a member's: they are neither merged into its
// /v1/config nor put into a table's config.
func catalogLevelKey(k string) bool {
	switch k {
	case "uri", "prefix", "namespace-separator", "warehouse", "clients", "token", "credential", "scope",
		"audience", "resource", "oauth2-server-uri", "view-endpoints-supported", "rest-page-size":
		return true
	}
	return strings.HasPrefix(k, "rest.") || strings.HasPrefix(k, "header.") || strings.HasPrefix(k, "rest-metrics-")
}

// Serve sends the request to the member that holds its namespace.
func (b *Backend) Serve(w http.ResponseWriter, r *http.Request, q icerest.Request) {
	var err error
	rt := q.Route
	switch rt.Operation {
	case icerest.OpListNamespaces:
		err = b.listNamespaces(w, r, q)
	case icerest.OpCreateNamespace:
		err = b.createNamespace(w, r, q)
	case icerest.OpDropNamespace:
		err = b.dropNamespace(w, r, q)
	case icerest.OpRenameTable, icerest.OpRenameView, icerest.OpCommitTransaction:
		err = b.acrossTables(w, r, q)
	default:
		if len(rt.Namespace) == 0 {
			err = icerest.Errorf(http.StatusNotFound, icerest.NotFound, "the unified catalog %q does not serve %s", b.name, rt.Operation)
			break
		}
		err = b.inNamespace(w, r, q)
	}
	if err != nil {
		icerest.WriteError(w, r, err)
	}
}

// target is where a unified namespace lives.
type target struct {
	v   []string // in the unified catalog
	m   *mapping
	ns  []string // in the member
	mem Member
}

func (b *Backend) target(v []string) (target, error) {
	m, ok := b.router.route(v)
	if !ok {
		return target{}, icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace,
			"namespace %s is in no member of the unified catalog %q (no route covers it, and it has no default member)",
			dotted(v), b.name)
	}
	return target{v: v, m: m, ns: m.toMember(v), mem: b.members[m.member]}, nil
}

// inNamespace serves an operation on a namespace or on a table or view in
// it.
func (b *Backend) inNamespace(w http.ResponseWriter, r *http.Request, q icerest.Request) error {
	rt := q.Route
	t, err := b.target(rt.Namespace)
	if err != nil {
		if b.pathToRules(w, rt) {
			return nil
		}
		return err
	}
	body, err := b.requestBody(q, t)
	if err != nil {
		return err
	}
	mrt := memberRoute(rt, t)
	rec := b.call(r, t.mem, mrt, body, nil)
	if rec.Status == http.StatusNotFound && b.pathToRules(w, rt) {
		return nil
	}
	return b.reply(w, r, rt, t, rec)
}

// reply writes the member's answer rec, its names rewritten back to the
// unified catalog's when it succeeded.
func (b *Backend) reply(w http.ResponseWriter, r *http.Request, rt icerest.Route, t target, rec *upstream.Captured) error {
	if rec.Status == http.StatusOK {
		out, err := b.answer(r.Context(), rt, t, rec.Bytes())
		if err != nil {
			return err
		}
		rec.SetBytes(out)
	}
	rec.WriteTo(w)
	return nil
}

// pathToRules answers namespaceExists and loadNamespaceMetadata for a
// namespace that is only the way to rules below it, absent from its own
// member (or without one): it exists in the unified catalog all the same,
// as listings show it. Other operations on it are the member's to answer.
func (b *Backend) pathToRules(w http.ResponseWriter, rt icerest.Route) bool {
	if !b.router.ruleBelow(rt.Namespace) {
		return false
	}
	switch rt.Operation {
	case icerest.OpNamespaceExists:
		w.WriteHeader(http.StatusNoContent)
		return true
	case icerest.OpLoadNamespaceMetadata:
		icerest.WriteJSON(w, http.StatusOK, map[string]any{"namespace": rt.Namespace, "properties": map[string]string{}})
		return true
	}
	return false
}

// createNamespace sends the new namespace to the member its route names.
func (b *Backend) createNamespace(w http.ResponseWriter, r *http.Request, q icerest.Request) error {
	rt := q.Route
	t, err := b.target(q.Touched.Namespace)
	if err != nil {
		return err
	}
	body, err := b.requestBody(q, t)
	if err != nil {
		return err
	}
	if err := b.memberAncestors(r, t); err != nil {
		return err
	}
	return b.reply(w, r, rt, t, b.call(r, t.mem, memberRoute(rt, t), body, nil))
}

// memberAncestors creates, in t's member, the ancestors of t's namespace
// that the member needs to hold it but that are another member's in the
// unified catalog: with `sales` on the default member and `sales.us`
// routed to another, creating `sales.us` needs a `sales` in that other
// member too, which no unified name reaches. Ancestors the unified
// catalog shows in this member are the client's to create, as anywhere.
func (b *Backend) memberAncestors(r *http.Request, t target) error {
	for n := 1; n < len(t.m.as) && n < len(t.ns); n++ {
		anc := target{v: t.v, m: t.m, ns: t.ns[:n], mem: t.mem}
		if exists, ok := b.exists(r, anc); !ok || exists {
			continue // unknown: the create below reports the member's answer
		}
		body, _ := encode(map[string]any{"namespace": anc.ns})
		rt := icerest.Route{Operation: icerest.OpCreateNamespace, Prefix: t.m.member, HasPrefix: true}
		rec := b.call(r, t.mem, rt, body, new(string))
		if rec.Status != http.StatusOK && rec.Status != http.StatusConflict { // 409: created meanwhile
			return icerest.Errorf(http.StatusBadGateway, icerest.InternalServerError,
				"creating %s in member %q to hold %s: status %d", dotted(anc.ns), t.m.member, dotted(t.v), rec.Status)
		}
	}
	return nil
}

// dropNamespace refuses to drop a namespace while a namespace below it
// exists in another member (a rule below it): the unified catalog shows
// those as its children, and dropping the parent would leave them behind.
func (b *Backend) dropNamespace(w http.ResponseWriter, r *http.Request, q icerest.Request) error {
	v := q.Route.Namespace
	for _, m := range b.router.mappings {
		if len(m.virtual) <= len(v) || !hasPrefix(m.virtual, v) {
			continue
		}
		below := target{v: m.virtual, m: m, ns: m.as, mem: b.members[m.member]}
		exists, ok := b.exists(r, below)
		if !ok { // fail closed: nothing is dropped while that is unknown
			return icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
				"cannot drop %s: whether %s exists in member catalog %q could not be checked", dotted(v), dotted(m.virtual), m.member)
		}
		if exists {
			return icerest.Errorf(http.StatusConflict, icerest.NamespaceNotEmpty,
				"Namespace %s is not empty: %s (in member catalog %q) is below it", dotted(v), dotted(m.virtual), m.member)
		}
	}
	return b.inNamespace(w, r, q)
}

// acrossTables serves renames and multi-table commits: every table they
// name must be in one member, which is then sent the whole request. Any
// other is refused before a member is called, so nothing is half done.
func (b *Backend) acrossTables(w http.ResponseWriter, r *http.Request, q icerest.Request) error {
	rt, touched := q.Route, q.Touched
	var first target
	for i, id := range touched.Identifiers {
		t, err := b.target(id.Namespace)
		if err != nil {
			return err
		}
		if i == 0 {
			first = t
			continue
		}
		if t.m.member != first.m.member {
			what := "a transaction"
			if rt.Operation != icerest.OpCommitTransaction {
				what = "a rename"
				// A rename into a namespace that does not exist is a 404
				// anywhere else; clients (and Iceberg's suites) expect it
				// before the refusal. Asking is a read: nothing is moved.
				if exists, ok := b.exists(r, t); ok && !exists {
					return icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace,
						"Namespace does not exist: %s", dotted(id.Namespace))
				}
			}
			return icerest.Errorf(http.StatusNotAcceptable, icerest.UnsupportedOperation,
				"%s across member catalogs of the unified catalog %q is not supported: %s is in %q, %s in %q",
				what, b.name, dotted(touched.Identifiers[0].Namespace), first.m.member, dotted(id.Namespace), t.m.member)
		}
	}
	if first.mem == nil {
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "malformed %s request: it names no table", rt.Operation)
	}
	body, err := b.requestBody(q, first)
	if err != nil {
		return err
	}
	mrt := rt
	mrt.Prefix, mrt.HasPrefix = first.m.member, true
	b.call(r, first.mem, mrt, body, nil).WriteTo(w)
	return nil
}

// memberRoute is rt in the member t.
func memberRoute(rt icerest.Route, t target) icerest.Route {
	rt.Prefix, rt.HasPrefix, rt.Namespace = t.m.member, true, t.ns
	return rt
}

// call runs the member's pipeline for the request's caller, with body
// (nil: the request's own) and query (nil: the request's own) in place of
// the request's, and holds its answer.
func (b *Backend) call(r *http.Request, mem Member, rt icerest.Route, body []byte, query *string) *upstream.Captured {
	out := r.Clone(r.Context())
	if body != nil {
		out.Body, out.ContentLength, out.GetBody = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	}
	if query != nil {
		out.URL.RawQuery = *query
	}
	out.URL.RawPath = rt.Path(rt.Prefix, "%1F")
	out.URL.Path, _ = url.PathUnescape(out.URL.RawPath)
	out.RequestURI = ""
	telemetry.From(r.Context()).SetMember(rt.Prefix, rt.Namespace) // the access log, next to the unified names
	principal := caller.From(r.Context()).Principal
	return upstream.Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		mem.Serve(w, r, q.Route, principal) // an unread request: the member's pipeline reads it
	}, out, icerest.Request{Route: rt})
}

// exists asks member t whether its namespace exists: true on 204, false
// on 404, unknown (ok false) on anything else.
func (b *Backend) exists(r *http.Request, t target) (exists, ok bool) {
	out, err := http.NewRequestWithContext(r.Context(), http.MethodHead, "/v1/"+t.m.member, http.NoBody)
	if err != nil {
		return false, false
	}
	if a := r.Header.Get("Authorization"); a != "" {
		out.Header.Set("Authorization", a)
	}
	rt := icerest.Route{Operation: icerest.OpNamespaceExists, Prefix: t.m.member, HasPrefix: true, Namespace: t.ns}
	principal := caller.From(r.Context()).Principal
	rec := upstream.Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		t.mem.Serve(w, r, q.Route, principal)
	}, out, icerest.Request{Route: rt})
	switch rec.Status {
	case http.StatusNoContent, http.StatusOK:
		return true, true
	case http.StatusNotFound:
		return false, true
	}
	return false, false
}
