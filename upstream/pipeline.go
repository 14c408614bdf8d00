package upstream

import (
	"context"
	"net/http"

	"github.com/lakegate/lakegate/upstream/icerest"
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
}

// Config is the backend's /v1/config.
func (p *Pipeline) Config(ctx context.Context) (*CatalogConfig, error) {
	return p.Backend.Config(ctx)
}

// Serve runs the request through the pipeline on behalf of principal.
func (p *Pipeline) Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
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
