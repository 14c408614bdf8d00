package gateway_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// observedReplica runs an observed gateway as its own lakegate process.
func observedReplica(t *testing.T, app map[string]any, tokens map[string]string) observedGateway {
	t.Helper()
	g := observedConfig(t, app, tokens)
	runReplica(t, strings.TrimPrefix(g.base, "http://"), g.cfg)
	return g
}

// adminJSON reads an admin JSON endpoint into out and returns its status.
func (g observedGateway) adminJSON(t *testing.T, path string, out any) int {
	t.Helper()
	resp, err := http.Get(g.admin + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	return resp.StatusCode
}

// Two gateway processes share one Redis in front of two backends, and get
// mixed traffic: reads (misses, L2 and L1 hits), a keyed commit retried
// through the other replica, a denial, and an outage of one backend. Each
// replica's metrics, status JSON and access log then report exactly what
// it did, and nothing of the tokens.
func TestMixedTrafficIsReportedExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two gateway processes")
	}
	lakeCat, err := embedded.Open(t.Context(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lakeCat.Close() })
	var commits atomic.Int64
	lake := &restartable{t: t, addr: "127.0.0.1:0", h: countCommits(lakeCat, &commits)}
	lake.start()
	t.Cleanup(lake.stop)
	sea := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))

	const alice, bob = "alice-token-0123", "bob-token-4567"
	tokens := map[string]string{"alice": alice, "bob": bob}
	redisURL := redistest.URL(t) // one Redis for both
	app := func() map[string]any {
		return map[string]any{"redis": redisURL, "catalogs": []any{
			map[string]any{"name": "lake", "remote": map[string]any{"url": "http://" + lake.addr,
				"breaker": map[string]any{"failures": 2, "timeout": "10m"}},
				"cache": map[string]any{"max_age": "10m"}, "idempotency": map[string]any{}},
			map[string]any{"name": "sea", "remote": map[string]any{"url": sea.URL}, "cache": map[string]any{"max_age": "10m"}},
		}}
	}
	one, two := observedReplica(t, app(), tokens), observedReplica(t, app(), tokens)

	// Setup through replica one: a table in each catalog.
	for _, c := range []string{"lake", "sea"} {
		status, _ := one.call(t, "POST", "/v1/"+c+"/namespaces", alice, `{"namespace":["ns"]}`)
		require.Equal(t, http.StatusOK, status)
		status, _ = one.call(t, "POST", "/v1/"+c+"/namespaces/ns/tables", alice, `{"name":"t","schema":`+tableSchema+`}`)
		require.Equal(t, http.StatusOK, status)
	}
	load := func(g observedGateway, c string) string {
		status, h := g.call(t, "GET", "/v1/"+c+"/namespaces/ns/tables/t", alice, "")
		require.Equal(t, http.StatusOK, status)
		return h.Get("Lakegate-Cache")
	}
	// Reads.
	require.Equal(t, "miss", load(one, "lake"))
	require.Equal(t, "hit-l2", load(two, "lake"), "replica one's answer, shared through Redis")
	require.Equal(t, "hit-l1", load(two, "lake"))
	require.Equal(t, "miss", load(two, "sea"))
	// A keyed commit, retried through the other replica.
	key := uuid.Must(uuid.NewV7()).String()
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"mixed":"yes"}}]}`
	for _, g := range []observedGateway{one, two} {
		status, _ := g.call(t, "POST", "/v1/lake/namespaces/ns/tables/t", alice, commit, "Idempotency-Key", key)
		require.Equal(t, http.StatusOK, status)
	}
	require.Equal(t, int64(1), commits.Load(), "applied once")
	require.Equal(t, "miss", load(two, "lake"), "the commit through one evicted two's L1 entry")
	// A denial.
	status, _ := two.call(t, "DELETE", "/v1/sea/namespaces/ns/tables/t", bob, "")
	require.Equal(t, http.StatusForbidden, status)
	// An outage: two failures open replica one's breaker, the third fails
	// fast; sea is untouched.
	lake.stop()
	var outage []int
	for range 3 {
		status, _ := one.call(t, "GET", "/v1/lake/namespaces", alice, "")
		outage = append(outage, status)
	}
	require.Equal(t, []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusServiceUnavailable}, outage)
	require.Equal(t, "hit-l2", load(one, "sea"), "two loaded it; one reads it from Redis")

	t.Run("metrics", func(t *testing.T) { mixedMetrics(t, one.metrics(t), two.metrics(t)) })
	t.Run("status", func(t *testing.T) { mixedStatus(t, one, two) })
	t.Run("access log", func(t *testing.T) { mixedAccessLogs(t, one, two, alice, bob) })
}

func mixedMetrics(t *testing.T, one, two map[string]*dto.MetricFamily) {
	type series struct {
		name   string
		labels map[string]string
		one    float64 // replica one's value
		two    float64
	}
	reqs := func(c, op, code string, one, two float64) series {
		return series{"lakegate_requests_total", map[string]string{"catalog": c, "api": "iceberg", "operation": op, "code": code}, one, two}
	}
	cache := func(c, result string, one, two float64) series {
		return series{"lakegate_cache_results_total", map[string]string{"catalog": c, "result": result}, one, two}
	}
	backend := func(c, op, code string, one, two float64) series {
		return series{"lakegate_backend_request_duration_seconds", map[string]string{"catalog": c, "operation": op, "code": code}, one, two}
	}
	for _, s := range []series{
		reqs("lake", "createNamespace", "200", 1, 0), reqs("lake", "createTable", "200", 1, 0),
		reqs("sea", "createNamespace", "200", 1, 0), reqs("sea", "createTable", "200", 1, 0),
		reqs("lake", "loadTable", "200", 1, 3), reqs("sea", "loadTable", "200", 1, 1),
		reqs("lake", "updateTable", "200", 1, 1), reqs("sea", "dropTable", "403", 0, 1),
		reqs("lake", "listNamespaces", "503", 3, 0),
		cache("lake", "miss", 1, 1), cache("lake", "hit-l2", 0, 1), cache("lake", "hit-l1", 0, 1),
		cache("sea", "miss", 0, 1), cache("sea", "hit-l2", 1, 0),
		{"lakegate_cache_invalidations_total", map[string]string{"catalog": "lake"}, 2, 0},
		{"lakegate_cache_invalidations_total", map[string]string{"catalog": "sea"}, 1, 0},
		{"lakegate_replay_outcomes_total", map[string]string{"catalog": "lake", "outcome": "executed"}, 1, 0},
		{"lakegate_replay_outcomes_total", map[string]string{"catalog": "lake", "outcome": "replayed"}, 0, 1},
		{"lakegate_policy_decisions_total", map[string]string{"catalog": "sea", "api": "iceberg", "operation": "dropTable", "result": "deny"}, 0, 1},
		{"lakegate_policy_decisions_total", map[string]string{"catalog": "lake", "api": "iceberg", "operation": "loadTable", "result": "allow"}, 1, 3},
		backend("lake", "getConfig", "200", 1, 1), backend("lake", "loadTable", "200", 1, 1),
		backend("lake", "updateTable", "200", 1, 0), backend("sea", "loadTable", "200", 0, 1),
		backend("lake", "listNamespaces", "0", 2, 0), // the third failed fast: not a backend call
		{"lakegate_breaker_state", map[string]string{"catalog": "lake"}, 2, 0},
		{"lakegate_breaker_state", map[string]string{"catalog": "sea"}, 0, 0},
		{"lakegate_breaker_transitions_total", map[string]string{"catalog": "lake", "to": "open"}, 1, 0},
	} {
		assert.Equal(t, s.one, sample(one, s.name, s.labels), "replica one: %s%v", s.name, s.labels)
		assert.Equal(t, s.two, sample(two, s.name, s.labels), "replica two: %s%v", s.name, s.labels)
	}
}

func mixedStatus(t *testing.T, one, two observedGateway) {
	s1, _ := statusOf(t, one.admin)
	s2, _ := statusOf(t, two.admin)
	lake1, sea1 := s1.Catalogs[catalogIn(t, s1, "lake")], s1.Catalogs[catalogIn(t, s1, "sea")]
	assert.Equal(t, "open", lake1.Breaker)
	require.NotNil(t, lake1.LastError)
	assert.Equal(t, "listNamespaces", lake1.LastError.Operation)
	assert.Equal(t, 0, lake1.LastError.Status, "no answer")
	assert.Contains(t, lake1.LastError.Message, "connection refused")
	assert.Equal(t, "closed", sea1.Breaker)
	assert.Nil(t, sea1.LastError)
	lake2 := s2.Catalogs[catalogIn(t, s2, "lake")]
	assert.Equal(t, "closed", lake2.Breaker, "two sent nothing during the outage")
	require.NotNil(t, lake2.Replay)
	assert.Equal(t, int64(1), lake2.Replay.Replays)
	require.NotNil(t, s1.Cache)
	assert.Equal(t, [3]int64{0, 1, 1}, [3]int64{s1.Cache.L1Hits, s1.Cache.L2Hits, s1.Cache.Misses})
	assert.Equal(t, [3]int64{1, 1, 2}, [3]int64{s2.Cache.L1Hits, s2.Cache.L2Hits, s2.Cache.Misses})
	require.NotNil(t, s2.Cache.HitRatio)
	assert.InDelta(t, 0.5, *s2.Cache.HitRatio, 1e-9)
	require.NotNil(t, s1.Redis.Reachable)
	assert.True(t, *s1.Redis.Reachable)

	var ready struct {
		Status string `json:"status"`
	}
	assert.Equal(t, http.StatusOK, one.adminJSON(t, "/lakegate/health/ready", &ready), "sea still serves")
	assert.Equal(t, "degraded", ready.Status, "lake is gone")
	assert.Equal(t, http.StatusServiceUnavailable, one.adminJSON(t, "/lakegate/health/ready?catalog=lake", &ready),
		"a probe that follows lake")
	assert.Equal(t, http.StatusOK, two.adminJSON(t, "/lakegate/health/ready?catalog=lake", &ready),
		"two's breaker is closed and lake has answered it: ready until its own requests fail")
}

func mixedAccessLogs(t *testing.T, one, two observedGateway, tokens ...string) {
	records := func(g observedGateway, want int) []map[string]any {
		var lines []map[string]any
		require.Eventually(t, func() bool {
			lines = accessLines(t, g.accessLog)
			return len(lines) >= want
		}, 5*time.Second, 20*time.Millisecond)
		require.Len(t, lines, want)
		raw, err := os.ReadFile(g.accessLog)
		require.NoError(t, err)
		for _, tok := range tokens {
			assert.NotContains(t, string(raw), tok)
		}
		return lines
	}
	rec := func(l map[string]any) map[string]any { return l["lakegate"].(map[string]any) }
	l1 := records(one, 10) // 4 setup, a load, the commit, 3 outage calls, a load
	assert.Equal(t, "executed", rec(l1[5])["replay"])
	for i, l := range l1[6:9] {
		assert.Equal(t, 503.0, l["status"], "outage call %d", i)
		assert.Equal(t, "listNamespaces", rec(l)["operation"])
		assert.NotContains(t, rec(l), "backend_status", "no answer")
	}
	assert.Contains(t, rec(l1[6])["backend_error"], "connection refused")
	assert.Contains(t, rec(l1[8])["backend_error"], "circuit breaker open")
	assert.Equal(t, map[string]any{"api": "iceberg", "catalog": "sea", "operation": "loadTable", "principal": "alice",
		"decision": "allow", "cache": "hit-l2"}, rec(l1[9]))

	l2 := records(two, 6) // two lake loads, a sea load, the retried commit, a lake load, the denial
	var got []any
	for _, l := range l2[:5] {
		r := rec(l)
		got = append(got, r["catalog"], r["cache"], r["replay"])
	}
	assert.Equal(t, []any{"lake", "hit-l2", nil, "lake", "hit-l1", nil, "sea", "miss", nil,
		"lake", nil, "replayed", "lake", "miss", nil}, got)
	assert.Equal(t, "bob", l2[5]["user_id"])
	assert.Equal(t, map[string]any{"api": "iceberg", "catalog": "sea", "operation": "dropTable", "principal": "bob",
		"decision": "deny"}, rec(l2[5]))
}
