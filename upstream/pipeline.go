package upstream

import (
	"context"
	"net/http"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Handler serves one parsed Iceberg request.
type Handler func(w http.ResponseWriter, r *http.Request, rt icerest.Route)

// Pipeline is the Iceberg pipeline of one catalog, shared by every front
// door: replay (Idempotency-Key) → backend. It knows nothing of Caddy.
type Pipeline struct {
	Catalog string
	Backend Backend
	// Replayer guards keyed mutations; nil when replay is off.
	Replayer *Replayer
}

// Config is the backend's /v1/config.
func (p *Pipeline) Config(ctx context.Context) (*CatalogConfig, error) {
	return p.Backend.Config(ctx)
}

// Serve runs the request through the pipeline on behalf of principal.
func (p *Pipeline) Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
	if p.Replayer != nil {
		p.Replayer.Serve(w, r, rt, principal, p.Backend.Serve)
		return
	}
	p.Backend.Serve(w, r, rt)
}
