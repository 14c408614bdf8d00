package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// Handler serves one parsed Iceberg request.
type Handler func(w http.ResponseWriter, r *http.Request, rt icerest.Route)

// Pipeline is the Iceberg pipeline of one catalog, shared by every front
// door: replay (Idempotency-Key) → table cache → backend. It knows nothing
// of Caddy.
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
}

// Config is the backend's /v1/config.
func (p *Pipeline) Config(ctx context.Context) (*CatalogConfig, error) {
	return p.Backend.Config(ctx)
}

// Serve runs the request through the pipeline on behalf of principal.
func (p *Pipeline) Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
	if p.Locations != nil {
		if err := confineBody(r, rt.Operation, p.Locations); err != nil {
			icerest.WriteError(w, r, err)
			return
		}
	}
	next := p.Backend.Serve
	if p.Cache != nil {
		next = func(w http.ResponseWriter, r *http.Request, rt icerest.Route) {
			p.Cache.Serve(w, r, rt, principal, p.Backend.Serve)
		}
	}
	if p.Replayer != nil {
		p.Replayer.Serve(w, r, rt, principal, next)
		return
	}
	next(w, r, rt)
}

// confineBody refuses a write whose body names a location outside rule,
// before it reaches replay, cache or backend. The body is left in place.
func confineBody(r *http.Request, op string, rule *locations.Rule) *icerest.Error {
	if !icerest.NamesLocations(op) {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "reading request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	locs, err := icerest.BodyLocations(op, body)
	if err != nil {
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "%v", err)
	}
	for _, loc := range locs {
		if !rule.Allows(loc) {
			return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"location %q is outside the catalog's allowed locations", loc)
		}
	}
	return nil
}
