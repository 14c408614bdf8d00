package upstream

import (
	"context"
	"net/http"

	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// Handler serves one parsed Iceberg request. q is the request as
// icerest.ParseRequest read it, once: a stage reads its route, query, body
// and what the body names from q, never from r again (r carries the
// headers, the context and the method).
type Handler func(w http.ResponseWriter, r *http.Request, q icerest.Request)

// Pipeline is the Iceberg pipeline of one catalog, shared by every front
// door: confinement → replay (Idempotency-Key) → table cache → backend. It
// knows nothing of Caddy. Build it with NewPipeline, once per catalog.
type Pipeline struct {
	Catalog string
	Backend Backend
	// Replayer guards keyed mutations; nil when replay is off.
	Replayer *Replayer
	// Cache answers LoadTable and evicts written tables; nil when off.
	Cache *TableCache
	// Locations confines the storage locations write bodies name (see
	// icerest.BodyLocations); nil leaves them to the backend. The
	// embedded catalog confines itself, reads included.
	Locations *locations.Rule
	// Refresher, when set, brings tables whose state lives partly outside
	// the catalog up to date before a LoadTable is answered, and refuses
	// writes that would make them diverge (see Refresher).
	Refresher Refresher
	// Journal records the table commits the backend confirms (see
	// WithJournal); nil records none.
	Journal *commitlog.Journal

	serve func(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string)
	// forCaller: the backend is a CallerBackend.
	forCaller bool
}

// A CallerBackend calls other catalogs' pipelines for the request's caller
// (the unified catalog: its members'). The front doors put the caller on
// the request's context; where one did not (the Sharing door keeps its
// recipients' tokens off it), the pipeline puts the principal there, and
// no Authorization, so a member configured to pass tokens through never
// forwards one the door withheld.
type CallerBackend interface {
	Backend
	// ActsForCaller marks the backend; it does nothing.
	ActsForCaller()
}

// A Refresher keeps tables whose truth is outside the catalog honest on
// the Iceberg side: an EXTERNAL Delta table, whose engines commit to its
// Delta log and never tell the catalog, is brought up to date from the
// log before it is served (translate/logsync), and Iceberg writes to it
// are refused, since the next refresh would undo them. It is a stage of
// every call that enters the pipeline by Serve or ServeRequest (every
// door's); its own calls enter by ServeBeneathRefresher, below it. The
// pipeline consults it only on LoadTable, updateTable and
// commitTransaction; it must answer cheaply (nil, false) for every other
// table.
type Refresher interface {
	// Refresh is given what the pipeline read, in its one pass, of the
	// LoadTable answer it is about to serve (the table's properties and
	// metadata location: the answer is not parsed again); changed reports
	// that the table is newer than that answer (its own commit or another
	// replica's), and the load is then served again.
	Refresh(ctx context.Context, catalog string, rt icerest.Route, table *icerest.TableAnswer) (changed bool, err error)
	// CheckWrite refuses a write to a table the refresher owns: the
	// route's table, or the tables q.Touched names.
	CheckWrite(ctx context.Context, catalog string, q icerest.Request) error
}

// PipelineOption adds a stage to a pipeline.
type PipelineOption func(*Pipeline)

// WithReplay guards keyed mutations with r.
func WithReplay(r *Replayer) PipelineOption { return func(p *Pipeline) { p.Replayer = r } }

// WithCache serves LoadTable from c and evicts what writes change.
func WithCache(c *TableCache) PipelineOption { return func(p *Pipeline) { p.Cache = c } }

// WithLocations refuses write bodies that name locations outside rule.
func WithLocations(rule *locations.Rule) PipelineOption {
	return func(p *Pipeline) { p.Locations = rule }
}

// NewPipeline assembles the catalog's pipeline once: the stages are
// chained here, not on every request.
func NewPipeline(catalog string, backend Backend, opts ...PipelineOption) *Pipeline {
	p := &Pipeline{Catalog: catalog, Backend: backend}
	for _, o := range opts {
		o(p)
	}
	if p.Replayer != nil {
		p.Replayer.backend = backend
	}
	_, p.forCaller = backend.(CallerBackend)
	p.serve = p.chain()
	return p
}

// chain composes replay → cache → backend. The bridge from replay to the
// cache carries the principal, which only the request knows, so it is the
// one closure made per request, and only when both stages are on.
func (p *Pipeline) chain() func(http.ResponseWriter, *http.Request, icerest.Request, string) {
	backend := p.Backend.Serve
	switch {
	case p.Replayer != nil && p.Cache != nil:
		return func(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string) {
			p.Replayer.Serve(w, r, q, principal, func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
				p.Cache.Serve(w, r, q, principal, backend)
			})
		}
	case p.Replayer != nil:
		return func(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string) {
			p.Replayer.Serve(w, r, q, principal, backend)
		}
	case p.Cache != nil:
		return func(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string) {
			p.Cache.Serve(w, r, q, principal, backend)
		}
	}
	return func(w http.ResponseWriter, r *http.Request, q icerest.Request, _ string) { backend(w, r, q) }
}

// Config is the backend's /v1/config.
func (p *Pipeline) Config(ctx context.Context) (*CatalogConfig, error) {
	return p.Backend.Config(ctx)
}

// Serve runs a request that arrives unread (a Delta door's translated
// call, a unified catalog's member call) through the pipeline on behalf
// of principal: it is read once here (icerest.ParseRequest), and a
// request the spec says is malformed (its query parameters, its body's
// schema) is refused before replay, cache or backend.
func (p *Pipeline) Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
	q, err := icerest.ParseRequest(r, rt)
	if err != nil {
		icerest.WriteError(w, r, err)
		return
	}
	p.ServeRequest(w, r, q, principal)
}

// ServeRequest runs a request already read (the Iceberg door reads it
// before its policy, which decides on what the body names) through the
// pipeline on behalf of principal. q is icerest.ParseRequest's, so it
// has passed validation; every stage reads it rather than r's query or
// body.
func (p *Pipeline) ServeRequest(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string) {
	if p.Journal != nil && journaled[q.Route.Operation] {
		p.serveJournaled(w, r, q, principal, p.Refresher != nil)
		return
	}
	p.serveRequest(w, r, q, principal, p.Refresher != nil)
}

// ServeBeneathRefresher runs one of the Refresher's own calls (its loads
// and commits) through the pipeline beneath the Refresher: read once,
// confined, replayed, cached and sent as any call, but neither refreshed
// nor write-checked, so a refresh never re-enters itself. The Delta
// doors' own writes come this way too, and are journaled; a refresh's are
// not (see refreshing).
func (p *Pipeline) ServeBeneathRefresher(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
	q, err := icerest.ParseRequest(r, rt)
	if err != nil {
		icerest.WriteError(w, r, err)
		return
	}
	if p.Journal != nil && journaled[q.Route.Operation] && r.Context().Value(refreshing{}) == nil {
		p.serveJournaled(w, r, q, principal, false)
		return
	}
	p.serveRequest(w, r, q, principal, false)
}

// refreshing marks the context of a Refresher's Refresh: the commits it
// makes copy into the catalog commits made elsewhere (a Delta log's), not
// commits of the principal whose load ran the refresh, so they are not
// journaled.
type refreshing struct{}

// serveRequest is ServeRequest with the Refresher's stage on or off.
func (p *Pipeline) serveRequest(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, refreshed bool) {
	if p.Locations != nil {
		if err := confine(q, p.Locations); err != nil {
			icerest.WriteError(w, r, err)
			return
		}
	}
	if p.forCaller && !caller.Present(r.Context()) {
		r = r.WithContext(caller.With(r.Context(), caller.Caller{Principal: principal}))
	}
	if refreshed {
		p.serveRefreshed(w, r, q, principal)
		return
	}
	p.serve(w, r, q, principal)
}

// serveRefreshed serves a request under the Refresher: a load is captured,
// refreshed if the refresher says so, and served again; a table write is
// checked first. Its calls act for the same caller as the request.
func (p *Pipeline) serveRefreshed(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string) {
	ctx := caller.With(r.Context(), caller.Caller{Principal: principal, Authorization: r.Header.Get("Authorization")})
	switch q.Route.Operation {
	case icerest.OpUpdateTable, icerest.OpCommitTransaction:
		if err := p.Refresher.CheckWrite(ctx, p.Catalog, q); err != nil {
			icerest.WriteError(w, r, err)
			return
		}
	case icerest.OpLoadTable:
		// The refresher needs the body even when the client holds the
		// current version, so the 304 is decided here.
		plain := r.Clone(r.Context())
		plain.Header.Del("If-None-Match")
		rec := Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
			p.serve(w, r, q, principal)
		}, plain, q)
		if rec.Status != http.StatusOK {
			rec.WriteTo(w)
			return
		}
		changed, err := p.Refresher.Refresh(context.WithValue(ctx, refreshing{}, true), p.Catalog, q.Route, rec.Table())
		switch {
		case err != nil:
			icerest.WriteError(w, r, err)
		case changed:
			p.serve(w, r, q, principal)
		default:
			p.writeLoad(w, r, rec)
		}
		return
	}
	p.serve(w, r, q, principal)
}

// writeLoad sends a captured LoadTable answer, or 304 when the client
// already holds its version.
func (p *Pipeline) writeLoad(w http.ResponseWriter, r *http.Request, rec *Captured) {
	inm, etag := r.Header.Get("If-None-Match"), rec.Header.Get("ETag")
	if inm == "" || etag == "" || !icerest.ETagMatches(inm, etag) {
		rec.WriteTo(w)
		return
	}
	for k, v := range rec.Header {
		if k != "Content-Length" && k != "Content-Type" {
			w.Header()[k] = v
		}
	}
	if p.Cache != nil {
		p.Cache.Cache.CountNotModified()
	}
	telemetry.CountNotModified(p.Catalog)
	w.WriteHeader(http.StatusNotModified)
}

// confine refuses a write whose body names a location outside rule,
// before it reaches replay, cache or backend. The locations are those
// ParseRequest read from its one parse of the body.
func confine(q icerest.Request, rule *locations.Rule) error {
	for _, loc := range q.Locations {
		if !rule.Allows(loc) {
			return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"location %q is outside the catalog's allowed locations", loc)
		}
	}
	return nil
}
