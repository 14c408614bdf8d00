package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/uitest"
	lakegate "github.com/lakegate/lakegate/modules/gateway"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// These tests keep to ports of their own, admin 18401-18420 and HTTP
// 18421-18440: other suites run alongside on other ports.
const (
	statusAdminLow, statusAdminHigh = 18401, 18420
	statusHTTPLow, statusHTTPHigh   = 18421, 18440
)

// statusPort returns 127.0.0.1 with the first free port in [lo, hi]. A
// port the previous test's Caddy is still letting go of is skipped.
func statusPort(t *testing.T, lo, hi int) string {
	t.Helper()
	for p := lo; p <= hi; p++ {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		if l, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, l.Close())
			return addr
		}
	}
	t.Fatalf("no free port in %d-%d", lo, hi)
	return ""
}

// statusGateway starts Caddy with its admin endpoint and, when app is not
// nil, lakegate with app on an HTTP port that also serves the status
// paths (lakegate_status, what a browser needs). It returns the HTTP and
// admin base URLs.
func statusGateway(t *testing.T, app map[string]any) (string, string) {
	t.Helper()
	addr, admin := statusPort(t, statusHTTPLow, statusHTTPHigh), statusPort(t, statusAdminLow, statusAdminHigh)
	cfg := map[string]any{
		"admin":   map[string]any{"listen": admin, "config": map[string]any{"persist": false}},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
	}
	if app != nil {
		cfg["apps"] = map[string]any{
			"lakegate": app,
			"http": map[string]any{"servers": map[string]any{"lakegate": map[string]any{
				"listen": []string{addr},
				"routes": []any{map[string]any{"handle": []any{
					map[string]any{"handler": "lakegate_status"}, map[string]any{"handler": "lakegate_iceberg"}}}},
				"automatic_https": map[string]any{"disable": true},
			}}},
		}
	}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	startCaddy(t, raw)
	return "http://" + addr, "http://" + admin
}

// fetch GETs url, waiting for the listener if it is not up yet.
func fetch(t *testing.T, method, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

type readyDoc struct {
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	Catalogs []struct {
		Name    string `json:"name"`
		Ready   bool   `json:"ready"`
		Breaker string `json:"breaker"`
		Probe   string `json:"probe"`
		Reason  string `json:"reason"`
	} `json:"catalogs"`
}

func ready(t *testing.T, admin string) (int, readyDoc) {
	t.Helper()
	return readyAt(t, admin, "")
}

// readyAt reads /lakegate/health/ready with a query ("?catalog=...").
func readyAt(t *testing.T, admin, query string) (int, readyDoc) {
	t.Helper()
	status, body := fetch(t, http.MethodGet, admin+"/lakegate/health/ready"+query)
	var doc readyDoc
	require.NoError(t, json.Unmarshal(body, &doc), string(body))
	return status, doc
}

type statusDoc struct {
	Version        string     `json:"version"`
	VersionLine    string     `json:"version_line"`
	StartedAt      time.Time  `json:"started_at"`
	ConfigLoadedAt *time.Time `json:"config_loaded_at"`
	Catalogs       []struct {
		Name      string `json:"name"`
		Kind      string `json:"kind"`
		URL       string `json:"url"`
		Breaker   string `json:"breaker"`
		LastError *struct {
			At        time.Time `json:"at"`
			Operation string    `json:"operation"`
			Status    int       `json:"status"`
			Message   string    `json:"message"`
		} `json:"last_error"`
		Cache       bool `json:"cache"`
		Idempotency bool `json:"idempotency"`
		Replay      *struct {
			Replays int64 `json:"replays"`
		} `json:"replay"`
		History []struct {
			RequestsPerSecond float64  `json:"requests_per_second"`
			CacheHitRatio     *float64 `json:"cache_hit_ratio"`
			BackendP99        *float64 `json:"backend_p99_seconds"`
		} `json:"history"`
	} `json:"catalogs"`
	Cache *struct {
		L1Hits      int64    `json:"l1_hits"`
		L2Hits      int64    `json:"l2_hits"`
		Misses      int64    `json:"misses"`
		Revalidated int64    `json:"revalidated"`
		HitRatio    *float64 `json:"hit_ratio"`
	} `json:"cache"`
	Policy *struct {
		Decisions int64 `json:"decisions"`
		Allowed   int64 `json:"allowed"`
		Denied    int64 `json:"denied"`
		Errors    int64 `json:"errors"`
	} `json:"policy"`
	Redis struct {
		Configured bool     `json:"configured"`
		Kind       string   `json:"kind"`
		Hosts      []string `json:"hosts"`
		InUse      bool     `json:"in_use"`
		Reachable  *bool    `json:"reachable"`
		Error      string   `json:"error"`
	} `json:"redis"`
}

// Right after start, a remote backend nothing has called yet is probed:
// on a dead port it is not ready, though its breaker is closed.
func TestStatusReadyProbesAnUntriedBackend(t *testing.T) {
	dead := freeAddr(t) // nothing listens there
	_, admin := statusGateway(t, map[string]any{"catalogs": []any{remote("gone", "http://"+dead, nil)}})
	status, rd := ready(t, admin)
	assert.Equal(t, http.StatusServiceUnavailable, status, "%+v", rd)
	require.Len(t, rd.Catalogs, 1)
	assert.False(t, rd.Catalogs[0].Ready)
	assert.Equal(t, "closed", rd.Catalogs[0].Breaker)
	assert.Equal(t, "failed", rd.Catalogs[0].Probe)
	status, _ = readyAt(t, admin, "?catalog=gone")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	status, body := fetch(t, http.MethodGet, admin+"/lakegate/health/ready?catalog=nope")
	assert.Equal(t, http.StatusNotFound, status, string(body))
}

// A load the backend revalidates with 304 is answered with the cache's
// copy: the hit ratio counts it as a hit, not as the miss it was counted
// as (a lookup that had to ask the backend).
func TestStatusHitRatioCountsRevalidations(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{cached("always", b.url, map[string]any{}, nil)}})
	path := base + "/v1/always/namespaces/ns/tables/t"
	assert.Equal(t, "miss", getTable(t, path).how())
	for range 3 {
		assert.Equal(t, "revalidated", getTable(t, path).how())
	}
	doc, _ := statusOf(t, admin)
	require.NotNil(t, doc.Cache)
	assert.Equal(t, int64(4), doc.Cache.Misses, "every lookup asked the backend")
	assert.Equal(t, int64(3), doc.Cache.Revalidated)
	require.NotNil(t, doc.Cache.HitRatio)
	assert.InDelta(t, 3.0/4, *doc.Cache.HitRatio, 1e-9)
}

// The status shows each catalog's last minutes: the JSON's history and
// the page's inline charts, from the process's own samples.
func TestStatusHistoryCharts(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{cached("charted", b.url, map[string]any{"max_age": "1m"}, nil)}})
	// Samples an hour ahead of the clock: the process's own ticks, which
	// come earlier, are then no interval and cannot split this one.
	t0 := time.Now().Add(time.Hour)
	telemetry.SampleHistory(t0)
	path := base + "/v1/charted/namespaces/ns/tables/t"
	assert.Equal(t, "miss", getTable(t, path).how())
	for range 3 {
		assert.Equal(t, "hit-l1", getTable(t, path).how())
	}
	telemetry.SampleHistory(t0.Add(10 * time.Second))

	doc, _ := statusOf(t, admin)
	h := doc.Catalogs[catalogIn(t, doc, "charted")].History
	require.NotEmpty(t, h)
	last := h[len(h)-1]
	assert.InDelta(t, 0.4, last.RequestsPerSecond, 1e-9, "4 loads in 10 s")
	require.NotNil(t, last.CacheHitRatio)
	assert.InDelta(t, 0.75, *last.CacheHitRatio, 1e-9)
	require.NotNil(t, last.BackendP99, "one backend call")

	html := page(t, admin)
	assert.Contains(t, html, `<table id="history">`)
	assert.Contains(t, html, `<svg class="spark"`)
	assert.Contains(t, html, `<polyline points="`)
	assert.Contains(t, html, "75.0%", "the newest cache hit ratio beside its chart")
}

// statusOf reads /lakegate/status; raw is the body as sent.
func statusOf(t *testing.T, admin string) (doc statusDoc, raw string) {
	t.Helper()
	status, body := fetch(t, http.MethodGet, admin+"/lakegate/status")
	require.Equal(t, http.StatusOK, status, string(body))
	require.NoError(t, json.Unmarshal(body, &doc), string(body))
	return doc, string(body)
}

func page(t *testing.T, admin string) string {
	t.Helper()
	status, body := fetch(t, http.MethodGet, admin+"/lakegate/")
	require.Equal(t, http.StatusOK, status, string(body))
	return string(body)
}

// catalogIn finds the catalog named name in a status document.
func catalogIn(t *testing.T, doc statusDoc, name string) int {
	t.Helper()
	for i, c := range doc.Catalogs {
		if c.Name == name {
			return i
		}
	}
	t.Fatalf("catalog %q not in the status", name)
	return -1
}

func embeddedCatalog(t *testing.T, name string) map[string]any {
	dir := t.TempDir()
	return map[string]any{"name": name, "embedded": map[string]any{
		"dsn": filepath.Join(dir, "catalog.db"), "warehouse": filepath.Join(dir, "warehouse")}}
}

// Liveness needs no lakegate app; readiness does.
func TestStatusLiveWithoutLakegate(t *testing.T) {
	_, admin := statusGateway(t, nil)
	status, body := fetch(t, http.MethodGet, admin+"/lakegate/health/live")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))

	status, doc := ready(t, admin)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "not ready", doc.Status)
	assert.Contains(t, doc.Reason, "not configured")

	status, _ = fetch(t, http.MethodGet, admin+"/lakegate/status")
	assert.Equal(t, http.StatusNotFound, status)
}

// The whole life of a remote catalog as health and status tell it:
// ready while its breaker is closed; its cache and replay counters; not
// ready once its backend is gone and the breaker open, with the last
// error shown; ready again as soon as a probe reaches it, before the
// breaker closes. No secret ever shows.
func TestStatusHealthReadyAndStatus(t *testing.T) {
	const token, urlPassword, redisPassword = "tok-s3cr3t-9f2e", "url-s3cr3t-77ab", "redis-s3cr3t-41cd"
	secretsShown := []string{token, urlPassword, redisPassword}
	t.Setenv("LG_STATUS_TOKEN", token)
	t.Setenv("LG_STATUS_REDIS_PASSWORD", redisPassword)
	m := miniredis.RunT(t)
	m.RequireAuth(redisPassword)

	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	backend := &restartable{t: t, addr: "127.0.0.1:0", h: cat}
	backend.start()
	t.Cleanup(backend.stop)

	lake := remote("lake", "http://ops:"+urlPassword+"@"+backend.addr, map[string]any{
		"auth": map[string]any{"mode": "bearer", "token": "{env.LG_STATUS_TOKEN}"},
		// Two failures open it, and it stays open for the test: only a
		// probe can say the backend is back.
		"breaker": map[string]any{"failures": 2, "timeout": int64(time.Hour)},
	})
	lake["cache"] = map[string]any{"max_age": int64(time.Hour)}
	lake["idempotency"] = map[string]any{}
	base, admin := statusGateway(t, map[string]any{
		"redis":    "redis://:{env.LG_STATUS_REDIS_PASSWORD}@" + m.Addr() + "/0",
		"catalogs": []any{embeddedCatalog(t, "emb"), lake},
	})
	noSecrets := func(what, body string) {
		t.Helper()
		for _, s := range secretsShown {
			assert.NotContains(t, body, s, "%s shows a secret", what)
		}
	}

	status, body := fetch(t, http.MethodGet, admin+"/lakegate/health/live")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))
	status, rd := ready(t, admin)
	require.Equal(t, http.StatusOK, status, "%+v", rd)
	require.Len(t, rd.Catalogs, 2)
	for _, c := range rd.Catalogs {
		assert.True(t, c.Ready, c.Name)
		assert.Equal(t, "closed", c.Breaker, c.Name)
	}
	// Before any call, a closed breaker says nothing of the remote
	// backend: it is probed. The embedded one is in process.
	assert.Empty(t, rd.Catalogs[0].Probe, "emb")
	assert.Equal(t, "ok", rd.Catalogs[1].Probe, "lake, before any call")

	// three loads: a miss, then two hits; a keyed commit sent twice is
	// replayed once
	lakeURL := base + "/v1/lake"
	seedTables(t, lakeURL, "ns", "t")
	assert.Equal(t, "miss", getTable(t, lakeURL+"/namespaces/ns/tables/t").how())
	assert.Equal(t, "hit-l1", getTable(t, lakeURL+"/namespaces/ns/tables/t").how())
	assert.Equal(t, "hit-l1", getTable(t, lakeURL+"/namespaces/ns/tables/t").how())
	key := uuid.Must(uuid.NewV7()).String()
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"status"}}]}`
	for range 2 {
		code, out, _ := post(t, lakeURL+"/namespaces/ns/tables/t", key, commit)
		require.Equal(t, http.StatusOK, code, out)
	}

	// Now that the backend has answered, the closed breaker decides alone.
	status, rd = ready(t, admin)
	require.Equal(t, http.StatusOK, status, "%+v", rd)
	assert.Empty(t, rd.Catalogs[1].Probe, "a closed breaker that has seen answers needs no probe")

	doc, raw := statusOf(t, admin)
	noSecrets("/lakegate/status", raw)
	assert.Equal(t, lakegate.Version(), doc.Version)
	assert.Equal(t, lakegate.VersionLine(), doc.VersionLine)
	assert.False(t, doc.StartedAt.IsZero())
	require.NotNil(t, doc.ConfigLoadedAt)
	assert.WithinDuration(t, time.Now(), *doc.ConfigLoadedAt, time.Minute)
	emb, lk := doc.Catalogs[catalogIn(t, doc, "emb")], doc.Catalogs[catalogIn(t, doc, "lake")]
	assert.Equal(t, "embedded", emb.Kind)
	assert.Equal(t, "closed", emb.Breaker)
	assert.False(t, emb.Cache)
	assert.Equal(t, "remote", lk.Kind)
	assert.Equal(t, "http://"+backend.addr, lk.URL, "no user info")
	assert.Equal(t, "closed", lk.Breaker)
	assert.Nil(t, lk.LastError)
	assert.True(t, lk.Cache)
	assert.True(t, lk.Idempotency)
	require.NotNil(t, lk.Replay)
	assert.Equal(t, int64(1), lk.Replay.Replays)
	require.NotNil(t, doc.Cache)
	// The commit evicted the table; nothing loaded it since.
	assert.Equal(t, int64(1), doc.Cache.Misses)
	assert.Equal(t, int64(2), doc.Cache.L1Hits)
	require.NotNil(t, doc.Cache.HitRatio)
	assert.InDelta(t, 2.0/3, *doc.Cache.HitRatio, 1e-9)
	assert.True(t, doc.Redis.Configured)
	assert.Equal(t, "standalone", doc.Redis.Kind)
	assert.Equal(t, []string{m.Addr()}, doc.Redis.Hosts)
	assert.True(t, doc.Redis.InUse)
	require.NotNil(t, doc.Redis.Reachable)
	assert.True(t, *doc.Redis.Reachable, doc.Redis.Error)
	html := page(t, admin)
	noSecrets("the page", html)
	assert.Contains(t, html, "66.7%")

	// the backend goes; failing requests open the breaker
	backend.stop()
	require.Eventually(t, func() bool {
		return strings.Contains(hit(lakeURL+"/namespaces").message, "circuit breaker open")
	}, 10*time.Second, 10*time.Millisecond, "the breaker opens")
	status, rd = ready(t, admin)
	assert.Equal(t, http.StatusOK, status, "emb still serves: the replica stays in rotation")
	assert.Equal(t, "degraded", rd.Status)
	for _, c := range rd.Catalogs {
		switch c.Name {
		case "emb":
			assert.True(t, c.Ready)
		case "lake":
			assert.False(t, c.Ready)
			assert.Equal(t, "open", c.Breaker)
			assert.Equal(t, "failed", c.Probe)
			assert.Contains(t, c.Reason, "probe failed")
		}
	}
	_, readyBody := fetch(t, http.MethodGet, admin+"/lakegate/health/ready")
	noSecrets("/lakegate/health/ready", string(readyBody))

	doc, raw = statusOf(t, admin)
	noSecrets("/lakegate/status", raw)
	lk = doc.Catalogs[catalogIn(t, doc, "lake")]
	assert.Equal(t, "open", lk.Breaker)
	require.NotNil(t, lk.LastError)
	assert.NotEmpty(t, lk.LastError.Operation)
	assert.NotEmpty(t, lk.LastError.Message)
	assert.WithinDuration(t, time.Now(), lk.LastError.At, time.Minute)
	html = page(t, admin)
	noSecrets("the page", html)
	assert.Regexp(t, `class="state open">open<`, html)

	// the backend is back and a probe reaches it, but the breaker is
	// still open (an hour) and refuses requests: not ready
	backend.start()
	status, rd = readyAt(t, admin, "?catalog=lake")
	assert.Equal(t, http.StatusServiceUnavailable, status, "%+v", rd)
	for _, c := range rd.Catalogs {
		if c.Name == "lake" {
			assert.False(t, c.Ready)
			assert.Equal(t, "open", c.Breaker)
			assert.Equal(t, "ok", c.Probe)
			assert.Contains(t, c.Reason, "breaker open")
		}
	}
	assert.Contains(t, hit(lakeURL+"/namespaces").message, "circuit breaker open", "requests are refused, as ready says")

	// Redis goes: reachable no, and its error names no password
	m.Close()
	doc, raw = statusOf(t, admin)
	noSecrets("/lakegate/status", raw)
	require.NotNil(t, doc.Redis.Reachable)
	assert.False(t, *doc.Redis.Reachable)
	assert.NotEmpty(t, doc.Redis.Error)
	noSecrets("the page", page(t, admin))
}

// Readiness follows what the breaker lets through: while it is open the
// catalog is never ready, even with the backend back; once it is
// half-open a probe that reaches the backend makes it ready.
func TestStatusReadyFollowsTheBreaker(t *testing.T) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	backend := &restartable{t: t, addr: "127.0.0.1:0", h: cat}
	backend.start()
	t.Cleanup(backend.stop)
	flaky := remote("flaky", "http://"+backend.addr, map[string]any{
		"breaker": map[string]any{"failures": 1, "timeout": int64(200 * time.Millisecond)}})
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{flaky}})

	backend.stop()
	require.Eventually(t, func() bool {
		return strings.Contains(hit(base+"/v1/flaky/namespaces").message, "circuit breaker open")
	}, 10*time.Second, 10*time.Millisecond, "the breaker opens")
	backend.start()
	require.Eventually(t, func() bool {
		status, rd := ready(t, admin)
		require.Len(t, rd.Catalogs, 1)
		c := rd.Catalogs[0]
		if c.Breaker == "open" {
			assert.False(t, c.Ready, "ready while the breaker is open: %+v", c)
			assert.Equal(t, http.StatusServiceUnavailable, status)
		}
		return status == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond, "ready once half-open and the probe answers")
	status, rd := ready(t, admin)
	require.Equal(t, http.StatusOK, status, "%+v", rd)
	assert.Equal(t, "half-open", rd.Catalogs[0].Breaker)
	assert.Equal(t, "ok", rd.Catalogs[0].Probe)
}

// The admin routes under /lakegate/: the old ones still answer, unknown
// paths are 404 rather than the page, and the new ones only read.
func TestStatusRoutes(t *testing.T) {
	_, admin := statusGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "emb")}})
	for path, want := range map[string]int{
		"/lakegate/":               http.StatusOK,
		"/lakegate/status":         http.StatusOK,
		"/lakegate/health/live":    http.StatusOK,
		"/lakegate/health/ready":   http.StatusOK,
		"/lakegate/cache/stats":    http.StatusOK,
		"/lakegate/xyz":            http.StatusNotFound,
		"/lakegate/health/":        http.StatusNotFound,
		"/lakegate/health/startup": http.StatusNotFound,
		"/lakegate/status/x":       http.StatusNotFound,
	} {
		status, body := fetch(t, http.MethodGet, admin+path)
		assert.Equal(t, want, status, "%s: %s", path, body)
	}
	status, _ := fetch(t, http.MethodPost, admin+"/lakegate/status")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	status, _ = fetch(t, http.MethodHead, admin+"/lakegate/health/live")
	assert.Equal(t, http.StatusOK, status)
	status, _ = fetch(t, http.MethodGet, admin+"/lakegate/cache/purge")
	assert.Equal(t, http.StatusMethodNotAllowed, status, "purge still only takes POST")
}

// serveJunk is a backend that answers every request with an HTML script
// and the request's Authorization header, where a status line should be:
// what a broken or hostile backend can put into an error message.
func serveJunk(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go answerJunk(c)
		}
	}()
	return "http://" + l.Addr().String()
}

func answerJunk(c net.Conn) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	// No space: net/http then quotes the whole line in its error.
	fmt.Fprintf(c, "<script>alert('lakegate')</script>%s\r\n\r\n", strings.ReplaceAll(req.Header.Get("Authorization"), " ", "="))
}

// A backend's error message reaches the status as it was, scrubbed of the
// credential it echoed, and the page escapes it.
func TestStatusPageEscapesBackendErrors(t *testing.T) {
	const token = "tok-junk-s3cr3t-5e1a"
	t.Setenv("LG_STATUS_JUNK_TOKEN", token)
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{
		remote("junk", serveJunk(t), map[string]any{"auth": map[string]any{"mode": "bearer", "token": "{env.LG_STATUS_JUNK_TOKEN}"}}),
	}})
	assert.GreaterOrEqual(t, hit(base+"/v1/junk/namespaces").status, 500)

	doc, raw := statusOf(t, admin)
	assert.NotContains(t, raw, token)
	junk := doc.Catalogs[catalogIn(t, doc, "junk")]
	require.NotNil(t, junk.LastError)
	assert.Contains(t, junk.LastError.Message, "<script>alert('lakegate')</script>")
	assert.Contains(t, junk.LastError.Message, "Bearer=[redacted]")

	html := page(t, admin)
	assert.NotContains(t, html, token)
	assert.NotContains(t, html, "<script")
	assert.Contains(t, html, "&lt;script&gt;alert(&#39;lakegate&#39;)&lt;/script&gt;")
}

// The page as an operator's browser renders it: every catalog with its
// breaker state, the cache hit ratio and the version, and a screenshot.
func TestStatusPageInChromium(t *testing.T) {
	bin := uitest.Chromium(t)
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	lake := remote("lake", b.url, nil)
	lake["cache"] = map[string]any{"max_age": int64(time.Hour)}
	gone := remote("gone", "http://"+freeAddr(t), map[string]any{
		"breaker": map[string]any{"failures": 1, "timeout": int64(time.Hour)}})
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "emb"), lake, gone}})
	for range 4 {
		require.Equal(t, http.StatusOK, getTable(t, base+"/v1/lake/namespaces/ns/tables/t").status)
	}
	require.Eventually(t, func() bool {
		return strings.Contains(hit(base+"/v1/gone/namespaces").message, "circuit breaker open")
	}, 10*time.Second, 10*time.Millisecond)
	doc, _ := statusOf(t, admin)
	require.NotNil(t, doc.Cache)
	ratio := fmt.Sprintf("%.1f%%", *doc.Cache.HitRatio*100)

	// Through lakegate_status on the HTTP site: Caddy's admin endpoint
	// itself turns a browser's navigation away (TestStatusHandler).
	dom := string(uitest.Run(t, bin, "--dump-dom", base+"/lakegate/"))
	require.Contains(t, dom, "lakegate status", dom)
	rows := regexp.MustCompile(`(?s)<tr class="catalog">.*?</tr>`).FindAllString(dom, -1)
	want := map[string]string{"emb": "closed", "lake": "closed", "gone": "open"}
	require.Len(t, rows, len(want), dom)
	for name, state := range want {
		found := false
		for _, row := range rows {
			if strings.Contains(row, `<td class="name">`+name+`</td>`) {
				found = true
				assert.Contains(t, row, `>`+state+`</span>`, "catalog %s", name)
			}
		}
		assert.True(t, found, "catalog %s is on the page", name)
	}
	assert.Contains(t, dom, `<td class="num" id="hit-ratio">`+ratio+`</td>`)
	assert.Equal(t, "75.0%", ratio, "one miss, three hits")
	assert.Contains(t, dom, lakegate.Version())
	assert.NotContains(t, dom, "<script")

	shot := filepath.Join(t.TempDir(), "status.png")
	uitest.Run(t, bin, "--screenshot="+shot, "--window-size=1280,900", base+"/lakegate/")
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	assert.Greater(t, len(png), 1000)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "a PNG")
}

// A browser's navigation (Sec-Fetch-Mode, no Origin) is refused by Caddy's
// admin endpoint and served by lakegate_status on the gateway's site, for
// loopback host names only; other paths pass on to the next handler.
func TestStatusHandler(t *testing.T) {
	base, admin := statusGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "emb")}})
	navigate := func(url, host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Header.Set("Sec-Fetch-Mode", "navigate")
		req.Header.Set("Sec-Fetch-Dest", "document")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	status, _ := navigate(admin+"/lakegate/", "")
	assert.Equal(t, http.StatusForbidden, status, "Caddy's admin endpoint turns browsers away")

	port := base[strings.LastIndex(base, ":")+1:]
	for _, host := range []string{"", "localhost:" + port, "[::1]:" + port} {
		status, body := navigate(base+"/lakegate/", host)
		assert.Equal(t, http.StatusOK, status, host)
		assert.Contains(t, body, "lakegate status", host)
	}
	status, body := navigate(base+"/lakegate/", "rebound.example.com:"+port)
	assert.Equal(t, http.StatusForbidden, status)
	assert.JSONEq(t, `{"error":"host not allowed: rebound.example.com:`+port+`"}`, body)
	status, body = navigate(base+"/lakegate/nothing", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, `"error":"no such lakegate endpoint: /lakegate/nothing"`)
	status, body = navigate(base+"/lakegate/health/ready", "")
	assert.Equal(t, http.StatusOK, status, body)
	// Probes name the gateway by its address, not a loopback name.
	for _, path := range []string{"/lakegate/health/ready", "/lakegate/health/live"} {
		status, body = navigate(base+path, "10.0.0.5:"+port)
		assert.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
	status, _ = navigate(base+"/lakegate/status", "10.0.0.5:"+port)
	assert.Equal(t, http.StatusForbidden, status, "the status itself stays loopback-only")
	status, _ = navigate(base+"/v1/config?warehouse=emb", "")
	assert.Equal(t, http.StatusOK, status, "the Iceberg door still answers the rest")

	adapted := adapt(t, []byte("http://:8181 {\n\tlakegate_status lake.internal\n\tlakegate_iceberg\n}\n"))
	assert.Contains(t, string(adapted), `{"handler":"lakegate_status","hosts":["lake.internal"]}`)
}

// A unified catalog is ready only when its members are (issue 39): with
// its one member's backend down, ?catalog=<unified> is 503 and names it.
func TestStatusReadyUnifiedFollowsItsMembers(t *testing.T) {
	dead := freeAddr(t) // nothing listens there
	_, admin := statusGateway(t, map[string]any{"catalogs": []any{
		remote("gone", "http://"+dead, nil),
		map[string]any{"name": "all", "unified": map[string]any{"default": "gone"}},
	}})
	status, rd := readyAt(t, admin, "?catalog=all")
	assert.Equal(t, http.StatusServiceUnavailable, status, "%+v", rd)
	require.Len(t, rd.Catalogs, 1)
	assert.False(t, rd.Catalogs[0].Ready)
	assert.Equal(t, "members", rd.Catalogs[0].Breaker)
	assert.Contains(t, rd.Catalogs[0].Reason, "member gone: breaker closed, probe failed")

	_, admin = statusGateway(t, map[string]any{"catalogs": []any{
		embeddedCatalog(t, "here"),
		map[string]any{"name": "all", "unified": map[string]any{"default": "here"}},
	}})
	status, rd = readyAt(t, admin, "?catalog=all")
	assert.Equal(t, http.StatusOK, status, "%+v", rd)
	assert.True(t, rd.Catalogs[0].Ready)
}
