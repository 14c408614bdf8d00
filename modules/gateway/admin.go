package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/policies"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI serves lakegate's admin endpoints on Caddy's admin listener:
//
//	GET  /lakegate/cache/stats   cache, replay and policy counters
//	POST /lakegate/cache/purge   {"catalog": c, "namespace": [...], "table": t}
//	                             (table, namespace, or whole catalog)
//	GET  /lakegate/health/live   liveness (status.go)
//	GET  /lakegate/health/ready  readiness of every catalog's backend
//	GET  /lakegate/status        status JSON
//	GET  /lakegate/              status page; anything else under it is a 404
type adminAPI struct{}

// CaddyModule returns the Caddy module information.
func (adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "admin.api.lakegate", New: func() caddy.Module { return new(adminAPI) }}
}

// Routes returns the admin routes.
func (adminAPI) Routes() []caddy.AdminRoute {
	return append([]caddy.AdminRoute{
		{Pattern: "/lakegate/cache/stats", Handler: caddy.AdminHandlerFunc(handleStats)},
		{Pattern: "/lakegate/cache/purge", Handler: caddy.AdminHandlerFunc(handlePurge)},
	}, statusRoutes...)
}

// statusRoutes are the read-only health and status endpoints, served on
// the admin endpoint and by lakegate_status. A pattern ending in "/" is a
// subtree, as in http.ServeMux.
var statusRoutes = []caddy.AdminRoute{
	{Pattern: "/lakegate/health/live", Handler: caddy.AdminHandlerFunc(handleLive)},
	{Pattern: "/lakegate/health/ready", Handler: caddy.AdminHandlerFunc(handleReady)},
	{Pattern: "/lakegate/status", Handler: caddy.AdminHandlerFunc(handleStatus)},
	// The subtree: the page at /lakegate/ itself, 404 for the rest.
	{Pattern: "/lakegate/", Handler: caddy.AdminHandlerFunc(handlePage)},
}

// activeApp is the running config's lakegate app (it changes on reload).
func activeApp() (*App, error) {
	app, err := caddy.ActiveContext().AppIfConfigured("lakegate")
	if err != nil {
		return nil, caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("lakegate is not configured")}
	}
	return app.(*App), nil
}

type stats struct {
	Cache  *cache.Stats            `json:"cache,omitempty"`
	Replay map[string]replayCounts `json:"replay,omitempty"`
	Policy *policies.Stats         `json:"policy,omitempty"`
}

type replayCounts struct {
	Replays int64 `json:"replays"`
	NonV7   int64 `json:"non_v7_keys"`
}

// replayCounts are the catalog's replay counters (nil: replay is off).
func (c *catalogState) replayCounts() *replayCounts {
	rp := c.pipeline.Replayer
	if rp == nil {
		return nil
	}
	return &replayCounts{rp.Replays.Load(), rp.NonV7.Load()}
}

// policyStats are the policy engine's counters (nil: no policy).
func (a *App) policyStats() *policies.Stats {
	if a.guard == nil || a.guard.policy == nil {
		return nil
	}
	s := a.guard.policy.Stats()
	return &s
}

func handleStats(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("use GET")}
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	out := stats{Replay: map[string]replayCounts{}, Policy: app.policyStats()}
	if app.cache != nil {
		s := app.cache.Stats()
		out.Cache = &s
	}
	for name, cat := range app.backends {
		if rc := cat.replayCounts(); rc != nil {
			out.Replay[name] = *rc
		}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(out)
}

func handlePurge(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("use POST")}
	}
	var req struct {
		Catalog   string   `json:"catalog"`
		Namespace []string `json:"namespace"`
		Table     string   `json:"table"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = strictjson.Unmarshal(body, &req)
	}
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("malformed JSON: %v", err)}
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	if _, ok := app.catalog(req.Catalog); !ok || app.cache == nil {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("no cached catalog named %q", req.Catalog)}
	}
	var prefix string
	switch {
	case req.Table != "" && len(req.Namespace) > 0:
		prefix = cache.TableKey(req.Catalog, req.Namespace, req.Table)
	case req.Table != "":
		return caddy.APIError{HTTPStatus: http.StatusBadRequest, Err: fmt.Errorf("a table needs its namespace")}
	case len(req.Namespace) > 0:
		prefix = cache.NamespacePrefix(req.Catalog, req.Namespace)
	default:
		prefix = cache.CatalogPrefix(req.Catalog)
	}
	app.cache.Invalidate(r.Context(), prefix)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Interface guard
var _ caddy.AdminRouter = adminAPI{}
