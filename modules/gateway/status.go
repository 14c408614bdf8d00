package gateway

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lakegate/lakegate/apierror"
	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/internal/redact"
	"github.com/lakegate/lakegate/internal/redisurl"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
)

// Health, readiness and status on Caddy's admin listener (routes in
// admin.go):
//
//	GET /lakegate/health/live   200 while the process serves
//	GET /lakegate/health/ready  200 when every catalog's backend is ready, else 503
//	GET /lakegate/status        what an operator or a script reads (JSON)
//	GET /lakegate/              the same as an HTML page

const (
	// probeTimeout bounds the probe of a backend whose breaker is not
	// closed: a readiness check must answer before the orchestrator's own
	// timeout (Kubernetes' default is 1 s per probe, often raised to a few).
	probeTimeout = 2 * time.Second
	// redisPingTimeout matches the clients' own dial/read bound: a PING
	// slower than a command may be is not an answer.
	redisPingTimeout = redisTimeout
)

// processStarted is when lakegate's package was initialized: the process's
// uptime counts from here.
var processStarted = time.Now().UTC()

// configLoaded is when the running config was loaded. Caddy provisions the
// admin routers anew on every config load, before the apps: the app has
// no start time of its own to ask.
var configLoaded atomic.Pointer[time.Time]

// Provision notes when this config was loaded.
func (*adminAPI) Provision(caddy.Context) error {
	now := time.Now().UTC()
	configLoaded.Store(&now)
	return nil
}

// onlyGet refuses anything but GET and HEAD: these endpoints only read.
func onlyGet(r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: fmt.Errorf("use GET")}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	apierror.WriteJSON(w, status, v)
	return nil
}

// handleLive answers while the process serves, lakegate configured or not:
// liveness says "do not restart me", not "send me traffic".
func handleLive(w http.ResponseWriter, r *http.Request) error {
	if err := onlyGet(r); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyReport is /lakegate/health/ready's body.
type readyReport struct {
	Status   string         `json:"status"` // "ready", "degraded" or "not ready"
	Reason   string         `json:"reason,omitempty"`
	Catalogs []catalogReady `json:"catalogs"`
}

// catalogReady is one catalog's readiness.
type catalogReady struct {
	Name    string `json:"name"`
	Ready   bool   `json:"ready"`
	Breaker string `json:"breaker"` // "unknown": the backend reports no health
	// Probe is "ok" or "failed" when the breaker was not closed and the
	// backend was asked; absent when the breaker alone decided.
	Probe  string `json:"probe,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// handleReady is 200 while the gateway can serve: "ready" when every
// catalog is, "degraded" when some are (a load balancer should keep the
// replica: the catalogs that are down answer 503 on their own, the others
// serve), and 503 "not ready" when none is. ?catalog=<name> (repeatable)
// asks about those catalogs only: 503 unless each is ready, for a probe
// that follows one backend.
func handleReady(w http.ResponseWriter, r *http.Request) error {
	if err := onlyGet(r); err != nil {
		return err
	}
	app, err := activeApp()
	if err != nil {
		return writeJSON(w, http.StatusServiceUnavailable,
			readyReport{Status: "not ready", Reason: "lakegate is not configured", Catalogs: []catalogReady{}})
	}
	names := r.URL.Query()["catalog"]
	catalogs, err := app.named(names)
	if err != nil {
		return err
	}
	out := readyReport{Catalogs: app.readiness(r.Context(), catalogs)}
	ready := 0
	for _, c := range out.Catalogs {
		if c.Ready {
			ready++
		}
	}
	switch {
	case ready == len(out.Catalogs):
		out.Status = "ready"
	case ready > 0 && len(names) == 0:
		out.Status = "degraded"
	default:
		out.Status = "not ready"
		return writeJSON(w, http.StatusServiceUnavailable, out)
	}
	return writeJSON(w, http.StatusOK, out)
}

// named are the configured catalogs of those names, in the order asked
// (all of them when none is named); a name the gateway does not serve is
// 404. Only those are probed.
func (a *App) named(names []string) ([]CatalogConfig, error) {
	if len(names) == 0 {
		return a.Catalogs, nil
	}
	out := make([]CatalogConfig, 0, len(names))
	for _, n := range names {
		i := slices.IndexFunc(a.Catalogs, func(cc CatalogConfig) bool { return cc.Name == n })
		if i < 0 {
			return nil, caddy.APIError{HTTPStatus: http.StatusNotFound, Message: fmt.Sprintf("no catalog %q", n)}
		}
		out = append(out, a.Catalogs[i])
	}
	return out, nil
}

// readiness checks the catalogs at once, so the answer takes one probe's
// time at most, not one per catalog down.
func (a *App) readiness(ctx context.Context, catalogs []CatalogConfig) []catalogReady {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	scrub := a.scrubber()
	out := make([]catalogReady, len(catalogs))
	var wg sync.WaitGroup
	for i, cc := range catalogs {
		cat, ok := a.backends[cc.Name]
		switch {
		case !ok:
			out[i] = catalogReady{Name: cc.Name, Breaker: "unknown", Reason: "not provisioned"}
		case cc.Unified != nil:
			wg.Go(func() { out[i] = a.unifiedReadiness(ctx, cc, scrub) })
		default:
			wg.Go(func() { out[i] = catalogReadiness(ctx, cc.Name, cat, scrub) })
		}
	}
	wg.Wait()
	return out
}

// unifiedReadiness: a unified catalog is ready when each of its members
// is, since any request may be a member's; it has no breaker of its own
// ("members"), and the reason names the members that are not ready.
func (a *App) unifiedReadiness(ctx context.Context, cc CatalogConfig, scrub func(string) string) catalogReady {
	members := a.readiness(ctx, a.membersOf(cc))
	c := catalogReady{Name: cc.Name, Ready: true, Breaker: "members"}
	var down []string
	for _, m := range members {
		if !m.Ready {
			c.Ready = false
			down = append(down, fmt.Sprintf("member %s: %s", m.Name, cmp.Or(m.Reason, "not ready")))
		}
	}
	c.Reason = strings.Join(down, "; ")
	return c
}

// membersOf are the configs of a unified catalog's member catalogs.
func (a *App) membersOf(cc CatalogConfig) []CatalogConfig {
	var out []CatalogConfig
	for _, name := range cc.Unified.Members() {
		if i := slices.IndexFunc(a.Catalogs, func(m CatalogConfig) bool { return m.Name == name }); i >= 0 {
			out = append(out, a.Catalogs[i])
		}
	}
	return out
}

// catalogReadiness: a closed breaker is ready without asking the backend
// once the backend has answered a call (requests are getting through);
// before any call, and when the breaker is not closed, a probe says whether the
// backend answers. Half-open, that decides: the breaker lets the next
// request through. Open, it does not: the breaker refuses every request
// until its timeout, whatever the backend, so the catalog is not ready;
// the probe only tells the operator whether the backend is back.
func catalogReadiness(ctx context.Context, name string, cat *catalogState, scrub func(string) string) catalogReady {
	hr, ok := cat.pipeline.Backend.(upstream.HealthReporter)
	if !ok {
		return catalogReady{Name: name, Ready: true, Breaker: "unknown", Reason: "unknown: the backend reports no health"}
	}
	h := hr.Health()
	c := catalogReady{Name: name, Breaker: h.Breaker}
	if c.Breaker == "closed" && h.Answered {
		c.Ready = true
		return c
	}
	if err := hr.Probe(ctx); err != nil {
		c.Probe, c.Reason = "failed", scrub("breaker "+c.Breaker+", probe failed: "+err.Error())
		return c
	}
	c.Probe = "ok"
	if c.Breaker == "open" {
		c.Reason = "breaker open, probe ok: requests are refused until the breaker lets one through"
		return c
	}
	c.Ready = true
	return c
}

// statusReport is /lakegate/status's body, and what the page shows.
type statusReport struct {
	Version        string          `json:"version"`
	VersionLine    string          `json:"version_line"`
	StartedAt      time.Time       `json:"started_at"`
	UptimeSeconds  int64           `json:"uptime_seconds"`
	ConfigLoadedAt *time.Time      `json:"config_loaded_at,omitempty"`
	Catalogs       []catalogStatus `json:"catalogs"`
	// Cache is absent when no catalog caches.
	Cache *cacheStatus `json:"cache,omitempty"`
	// Policy is absent when no policy is configured.
	Policy *policies.Stats `json:"policy,omitempty"`
	Redis  redisStatus     `json:"redis"`
	// ReplayRedis is absent unless replay_redis names a Redis of its own.
	ReplayRedis *redisStatus `json:"replay_redis,omitempty"`
}

// catalogStatus is one catalog, without secrets: the URL has no user info
// or query, messages are scrubbed of every configured secret.
type catalogStatus struct {
	Name        string                 `json:"name"`
	Kind        string                 `json:"kind"`
	URL         string                 `json:"url,omitempty"`
	Breaker     string                 `json:"breaker"`
	LastError   *upstream.BackendError `json:"last_error,omitempty"`
	Cache       bool                   `json:"cache"`
	Idempotency bool                   `json:"idempotency"`
	// Replay is absent when idempotency is off.
	Replay *replayCounts `json:"replay,omitempty"`
	// History is the catalog's last minutes, one point per
	// telemetry.HistoryInterval, oldest first (empty until two samples).
	History []telemetry.Point `json:"history"`
}

// cacheStatus is the cache's counters and their hit ratio.
type cacheStatus struct {
	cache.Stats
	// HitRatio is the share of lookups answered with the cache's copy:
	// (L1 + L2 hits + revalidated) / (hits + misses), a revalidation the
	// backend answered 304 being one; null before any lookup.
	HitRatio *float64 `json:"hit_ratio"`
}

// redisStatus is one Redis URL as an operator may see it: hosts, never
// the password.
type redisStatus struct {
	Configured bool     `json:"configured"`
	Kind       string   `json:"kind,omitempty"` // standalone, cluster or sentinel
	Hosts      []string `json:"hosts,omitempty"`
	// InUse: a catalog uses it (cache, idempotency, Delta staging), so the
	// app holds a client; only then is it pinged.
	InUse     bool   `json:"in_use"`
	Reachable *bool  `json:"reachable,omitempty"`
	Error     string `json:"error,omitempty"`
}

func handleStatus(w http.ResponseWriter, r *http.Request) error {
	if err := onlyGet(r); err != nil {
		return err
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, app.status(r.Context()))
}

// status gathers the report; only Redis is asked anything (a PING each).
func (a *App) status(ctx context.Context) statusReport {
	now := time.Now().UTC()
	out := statusReport{
		Version: Version(), VersionLine: VersionLine(),
		StartedAt: processStarted, UptimeSeconds: int64(now.Sub(processStarted).Seconds()),
		ConfigLoadedAt: configLoaded.Load(),
		Catalogs:       a.catalogStatuses(),
	}
	if a.cache != nil {
		out.Cache = newCacheStatus(a.cache.Stats())
	}
	out.Policy = a.policyStats()
	out.Redis, out.ReplayRedis = a.redisStatuses(ctx)
	return out
}

func (a *App) catalogStatuses() []catalogStatus {
	scrub := a.scrubber()
	out := make([]catalogStatus, 0, len(a.Catalogs))
	for _, cc := range a.Catalogs {
		cat, ok := a.backends[cc.Name]
		if !ok {
			continue
		}
		out = append(out, cat.status(scrub))
	}
	return out
}

func (c *catalogState) status(scrub func(string) string) catalogStatus {
	s := catalogStatus{Name: c.cfg.Name, Kind: c.backendKind(), Breaker: "unknown",
		Cache: c.cfg.Cache != nil, Idempotency: c.cfg.Idempotency != nil}
	if hr, ok := c.pipeline.Backend.(upstream.HealthReporter); ok {
		h := hr.Health()
		s.Kind, s.URL, s.Breaker = h.Kind, h.URL, h.Breaker
		if e := h.LastError; e != nil {
			scrubbed := *e // a copy: the backend's record is shared
			scrubbed.Message = scrub(e.Message)
			s.LastError = &scrubbed
		}
	}
	s.Replay = c.replayCounts()
	s.History = telemetry.Recent(c.cfg.Name)
	return s
}

func newCacheStatus(s cache.Stats) *cacheStatus {
	out := &cacheStatus{Stats: s}
	hits := s.L1Hits + s.L2Hits
	if lookups := hits + s.Misses; lookups > 0 {
		r := float64(hits+s.Revalidated) / float64(lookups)
		out.HitRatio = &r
	}
	return out
}

// redisStatuses reports redis and, when it is another Redis, replay_redis;
// both are pinged at once.
func (a *App) redisStatuses(ctx context.Context) (redisStatus, *redisStatus) {
	var main redisStatus
	var replay *redisStatus
	var wg sync.WaitGroup
	wg.Go(func() { main = redisState(ctx, a.Redis) })
	if a.ReplayRedis != "" && a.ReplayRedis != a.Redis {
		replay = new(redisStatus)
		wg.Go(func() { *replay = redisState(ctx, a.ReplayRedis) })
	}
	wg.Wait()
	scrub := a.scrubber()
	main.Error = scrub(main.Error)
	if replay != nil {
		replay.Error = scrub(replay.Error)
	}
	return main, replay
}

// redisRow is one Redis as the page lists it.
type redisRow struct {
	Role string
	redisStatus
}

// RedisRows lists redis and, when it has its own, replay_redis.
func (s statusReport) RedisRows() []redisRow {
	rows := []redisRow{{"redis", s.Redis}}
	if s.ReplayRedis != nil {
		rows = append(rows, redisRow{"replay_redis", *s.ReplayRedis})
	}
	return rows
}

// State is the page's word for it: unused, reachable or unreachable.
func (r redisStatus) State() string {
	switch {
	case !r.InUse:
		return "unused"
	case r.Reachable != nil && *r.Reachable:
		return "reachable"
	}
	return "unreachable"
}

// redisState describes the Redis at url (resolved, password included)
// and pings it through the app's pooled client.
func redisState(ctx context.Context, url string) redisStatus {
	if url == "" {
		return redisStatus{}
	}
	s := redisStatus{Configured: true}
	t, err := redisurl.Parse(url)
	if err != nil {
		s.Error = "the URL does not parse" // checked at Provision; never quoted: it may hold a password
		return s
	}
	s.Kind, s.Hosts = t.Kind(), redisHosts(t)
	client := pooledRedisClient(url)
	if client == nil {
		return s
	}
	s.InUse = true
	ctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	err = client.Ping(ctx).Err()
	ok := err == nil
	s.Reachable = &ok
	if err != nil {
		s.Error = err.Error()
	}
	return s
}

// redisHosts lists the addresses a target dials: no user, no password.
func redisHosts(t redisurl.Target) []string {
	switch {
	case t.Cluster != nil:
		return t.Cluster.Addrs
	case t.Failover != nil:
		return t.Failover.SentinelAddrs
	default:
		return []string{t.Simple.Addr}
	}
}

// pooledRedisClient is the client the app's catalogs share for url, or nil
// when none uses it. It looks, without taking a reference: the status
// must not keep a client alive past the config that opened it.
func pooledRedisClient(url string) redis.UniversalClient {
	var client redis.UniversalClient
	sharedPool.Range(func(k, v any) bool {
		if k != redisPoolKey(url) {
			return true
		}
		if p, ok := v.(pooledRedis); ok {
			client = p.UniversalClient
		}
		return false
	})
	return client
}

// scrubber returns a function that blanks every secret the app holds out
// of a message, in any form redact finds (escaped, base64, cut off). URLs
// are shown without user info already; this is for messages that come
// from backends or libraries, which may echo a header or a URL.
func (a *App) scrubber() func(string) string {
	return redact.New(a.secretValues()...).String
}

// secretValues are the resolved secrets of the app's config that status
// output could meet: backend credentials and passwords in URLs.
func (a *App) secretValues() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	for _, cc := range a.Catalogs {
		if r := cc.Remote; r != nil {
			add(r.Auth.Token, r.Auth.ClientSecret, r.Auth.SecretAccessKey, r.Auth.SessionToken, urlPassword(r.URL))
		}
	}
	for _, u := range []string{a.Redis, a.ReplayRedis} {
		add(redisPasswords(u)...)
	}
	return out
}

func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

func redisPasswords(raw string) []string {
	if raw == "" {
		return nil
	}
	t, err := redisurl.Parse(raw)
	switch {
	case err != nil:
		return nil
	case t.Cluster != nil:
		return []string{t.Cluster.Password}
	case t.Failover != nil:
		return []string{t.Failover.Password, t.Failover.SentinelPassword}
	default:
		return []string{t.Simple.Password}
	}
}

//go:embed status.html.tmpl
var statusPageSource string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"percent":  percent,
	"ago":      ago,
	"stamp":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"interval": func() time.Duration { return telemetry.HistoryInterval },
	"points":   func() int { return telemetry.HistoryPoints },
}).Parse(statusPageSource))

// percent shows a hit ratio as the page and its tests read it.
func percent(r *float64) string {
	if r == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *r*100)
}

// ago is how long before now t was, to the second.
func ago(t time.Time) string {
	return time.Since(t).Round(time.Second).String() + " ago"
}

// handlePage serves the page at /lakegate/ exactly. The pattern catches
// the whole subtree, and a mistyped endpoint must be a 404, not the page
// answering 200 to a script that meant something else.
func handlePage(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Path != "/lakegate/" {
		return caddy.APIError{HTTPStatus: http.StatusNotFound, Err: fmt.Errorf("no such lakegate endpoint: %s", r.URL.Path)}
	}
	if err := onlyGet(r); err != nil {
		return err
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	// Rendered whole first: a template error is then a 500, not half a page.
	var buf bytes.Buffer
	if err := statusPage.Execute(&buf, app.status(r.Context())); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// The page needs no script and loads nothing: should escaping ever
	// miss a backend's message, the browser still runs none of it.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	_, err = buf.WriteTo(w)
	return err
}

// Interface guard
var _ caddy.Provisioner = (*adminAPI)(nil)
