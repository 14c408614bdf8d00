package gateway_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/telemetry/telemetrytest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// telemetryPolicy allows everything but dropTable.
const telemetryPolicy = `package lakegate.telemetry_test

default decision := {"allow": true}

decision := {"allow": false, "reason": "tables are not dropped here"} if input.operation == "dropTable"
`

// observedGateway is a gateway with a policy, static tokens, an access
// log in a file and the admin endpoint (Caddy's /metrics) on loopback.
type observedGateway struct {
	base, admin, accessLog string
	cfg                    []byte
}

func startObserved(t *testing.T, app map[string]any, tokens map[string]string) observedGateway {
	t.Helper()
	g := observedConfig(t, app, tokens)
	serveOn(t, strings.TrimPrefix(g.base, "http://"), g.cfg)
	return g
}

// observedConfig is the Caddy config of an observed gateway on fresh
// loopback ports, not started.
func observedConfig(t *testing.T, app map[string]any, tokens map[string]string) observedGateway {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.rego"), []byte(telemetryPolicy), 0o600))
	var entries []any
	for id, token := range tokens {
		sum := sha256.Sum256([]byte(token))
		entries = append(entries, map[string]any{"id": id, "sha256": hex.EncodeToString(sum[:])})
	}
	app["identity"] = map[string]any{"required": true, "tokens": entries}
	app["policy"] = map[string]any{"dir": dir, "package": "lakegate.telemetry_test", "reload_interval": "-1s"}
	addr, admin := freeAddr(t), freeAddr(t)
	g := observedGateway{base: "http://" + addr, admin: "http://" + admin, accessLog: filepath.Join(dir, "access.log")}
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(caddyJSON(t, addr, app), &cfg))
	cfg["admin"] = map[string]any{"listen": admin, "config": map[string]any{"persist": false}}
	cfg["logging"] = map[string]any{"logs": map[string]any{
		"default": map[string]any{"level": "ERROR", "exclude": []string{"http.log.access"}},
		"access": map[string]any{"include": []string{"http.log.access"}, "encoder": map[string]any{"format": "json"},
			"writer": map[string]any{"output": "file", "filename": g.accessLog}},
	}}
	server := cfg["apps"].(map[string]any)["http"].(map[string]any)["servers"].(map[string]any)["lakegate"].(map[string]any)
	server["logs"] = map[string]any{}
	var err error
	g.cfg, err = json.Marshal(cfg)
	require.NoError(t, err)
	return g
}

// call sends one request with a bearer token and, if set, an
// Idempotency-Key and If-None-Match; it returns the status and headers.
func (g observedGateway) call(t *testing.T, method, path, token, body string, hdr ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, g.base+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// metrics scrapes the admin endpoint's /metrics.
func (g observedGateway) metrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(g.admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// sample is the value of the series of family name with exactly these
// labels, or 0 when there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	return telemetrytest.Value(families[name], labels)
}

// accessLines reads the access log's JSON lines.
func accessLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), sc.Text())
		out = append(out, line)
	}
	return out
}

// One gateway, one cached and replaying remote catalog, and a sequence of
// requests whose every outcome is known: the metrics on Caddy's registry
// count exactly those outcomes, the access log carries each request's
// record and never the token, and the counts survive a config reload.
func TestTelemetryCountsWhatHappened(t *testing.T) {
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	cat := uniqueName("observed")
	const token = "alice-s3cret-token"
	g := startObserved(t, map[string]any{"catalogs": []any{map[string]any{
		"name": cat, "remote": map[string]any{"url": backend.URL},
		"cache": map[string]any{"max_age": "1m"}, "idempotency": map[string]any{},
	}}}, map[string]string{"alice": token})

	p := "/v1/" + cat
	noCatalog := map[string]string{"catalog": "", "api": "iceberg", "operation": "listNamespaces", "code": "404"}
	before := sample(g.metrics(t), "lakegate_requests_total", noCatalog) // other tests count there too
	status, _ := g.call(t, "POST", p+"/namespaces", token, `{"namespace":["ns"]}`)
	require.Equal(t, http.StatusOK, status)
	for _, tbl := range []string{"t", "keep"} {
		status, _ = g.call(t, "POST", p+"/namespaces/ns/tables", token, `{"name":"`+tbl+`","schema":`+tableSchema+`}`)
		require.Equal(t, http.StatusOK, status)
	}
	status, h := g.call(t, "GET", p+"/namespaces/ns/tables/t", token, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "miss", h.Get("Lakegate-Cache"))
	status, h = g.call(t, "GET", p+"/namespaces/ns/tables/t", token, "")
	require.Equal(t, "hit-l1", h.Get("Lakegate-Cache"))
	status, _ = g.call(t, "GET", p+"/namespaces/ns/tables/t", token, "", "If-None-Match", h.Get("ETag"))
	require.Equal(t, http.StatusNotModified, status)

	key := uuid.Must(uuid.NewV7()).String()
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"telemetry"}}]}`
	for range 2 {
		status, _ = g.call(t, "POST", p+"/namespaces/ns/tables/t", token, commit, "Idempotency-Key", key)
		require.Equal(t, http.StatusOK, status)
	}
	status, _ = g.call(t, "DELETE", p+"/namespaces/ns/tables/keep", token, "")
	require.Equal(t, http.StatusForbidden, status)
	status, _ = g.call(t, "GET", p+"/namespaces", "", "")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = g.call(t, "GET", "/v1/no-such-catalog/namespaces", token, "")
	require.Equal(t, http.StatusNotFound, status)

	m := g.metrics(t)
	req := func(op, code string) float64 {
		return sample(m, "lakegate_requests_total", map[string]string{"catalog": cat, "api": "iceberg", "operation": op, "code": code})
	}
	assert.Equal(t, 2.0, req("loadTable", "200"))
	assert.Equal(t, 1.0, req("loadTable", "304"))
	assert.Equal(t, 2.0, req("updateTable", "200"))
	assert.Equal(t, 1.0, req("dropTable", "403"))
	assert.Equal(t, before+1, sample(m, "lakegate_requests_total", noCatalog),
		"a catalog the gateway does not serve is not a label value; the operation is")
	assert.GreaterOrEqual(t, sample(m, "lakegate_requests_total",
		map[string]string{"catalog": "", "api": "iceberg", "operation": "listNamespaces", "code": "401"}), 1.0,
		"a 401 is counted under its operation")
	assert.Equal(t, 2.0, sample(m, "lakegate_request_duration_seconds",
		map[string]string{"catalog": cat, "api": "iceberg", "operation": "loadTable", "code": "200"}),
		"the front door's latency, per operation")
	cache := func(result string) float64 {
		return sample(m, "lakegate_cache_results_total", map[string]string{"catalog": cat, "result": result})
	}
	assert.Equal(t, 1.0, cache("miss"))
	assert.Equal(t, 2.0, cache("hit-l1"), "the hit and the hit answered 304")
	assert.Equal(t, 1.0, sample(m, "lakegate_cache_not_modified_total", map[string]string{"catalog": cat}))
	assert.Equal(t, 3.0, sample(m, "lakegate_cache_invalidations_total", map[string]string{"catalog": cat}),
		"two creates and the one commit that ran; the replay ran nothing")
	replay := func(outcome string) float64 {
		return sample(m, "lakegate_replay_outcomes_total", map[string]string{"catalog": cat, "outcome": outcome})
	}
	assert.Equal(t, 1.0, replay("executed"))
	assert.Equal(t, 1.0, replay("replayed"))
	assert.Equal(t, 1.0, sample(m, "lakegate_policy_decisions_total",
		map[string]string{"catalog": cat, "api": "iceberg", "operation": "dropTable", "result": "deny"}))
	assert.Equal(t, 3.0, sample(m, "lakegate_policy_decisions_total",
		map[string]string{"catalog": cat, "api": "iceberg", "operation": "loadTable", "result": "allow"}),
		"every load is decided, hits and 304s too")
	assert.Equal(t, 1.0, sample(m, "lakegate_backend_request_duration_seconds",
		map[string]string{"catalog": cat, "operation": "loadTable", "code": "200"}), "only the miss reached the backend")
	assert.Equal(t, 1.0, sample(m, "lakegate_backend_request_duration_seconds",
		map[string]string{"catalog": cat, "operation": "updateTable", "code": "200"}), "the replay did not")
	assert.Equal(t, 0.0, sample(m, "lakegate_breaker_state", map[string]string{"catalog": cat}))
	require.NotNil(t, m["lakegate_breaker_state"], "the breaker's state is there from the start")

	t.Run("access log", func(t *testing.T) {
		var lines []map[string]any
		require.Eventually(t, func() bool {
			lines = accessLines(t, g.accessLog)
			return len(lines) >= 11
		}, 5*time.Second, 20*time.Millisecond)
		raw, err := os.ReadFile(g.accessLog)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), token, "the token never reaches the log")
		byOp := map[string][]map[string]any{}
		for _, l := range lines {
			rec, _ := l["lakegate"].(map[string]any)
			op, _ := rec["operation"].(string)
			byOp[op] = append(byOp[op], l)
		}
		rec := func(l map[string]any) map[string]any { return l["lakegate"].(map[string]any) }
		loads := byOp["loadTable"]
		require.Len(t, loads, 3)
		assert.Equal(t, map[string]any{"api": "iceberg", "catalog": cat, "operation": "loadTable", "principal": "alice",
			"decision": "allow", "cache": "miss", "backend_status": 200.0}, rec(loads[0]))
		assert.Equal(t, "alice", loads[0]["user_id"], "Caddy's own user_id field")
		assert.Equal(t, "hit-l1", rec(loads[1])["cache"])
		assert.NotContains(t, rec(loads[1]), "backend_status", "a hit asks no backend")
		commits := byOp["updateTable"]
		require.Len(t, commits, 2)
		assert.Equal(t, "executed", rec(commits[0])["replay"])
		assert.Equal(t, "invalidated", rec(commits[0])["cache"])
		assert.Equal(t, "replayed", rec(commits[1])["replay"])
		drops := byOp["dropTable"]
		require.Len(t, drops, 1)
		assert.Equal(t, "deny", rec(drops[0])["decision"])
		assert.Equal(t, 403.0, drops[0]["status"])
		var unauthenticated []map[string]any
		for _, l := range lines {
			if l["status"] == 401.0 {
				unauthenticated = append(unauthenticated, l)
			}
		}
		require.Len(t, unauthenticated, 1)
		assert.Equal(t, "", unauthenticated[0]["user_id"])
		assert.Equal(t, map[string]any{"api": "iceberg", "operation": "listNamespaces"}, rec(unauthenticated[0]),
			"nothing is known of a stranger but what was asked")
	})

	t.Run("reload keeps the counts", func(t *testing.T) {
		loads := map[string]string{"catalog": cat, "api": "iceberg", "operation": "loadTable", "code": "200"}
		before, _ := statusOf(t, g.admin)
		require.NotNil(t, before.Policy)
		require.Positive(t, before.Policy.Decisions)
		replays := func(doc statusDoc) int64 {
			c := doc.Catalogs[catalogIn(t, doc, cat)]
			require.NotNil(t, c.Replay)
			return c.Replay.Replays
		}
		require.Equal(t, int64(1), replays(before))
		require.NoError(t, caddy.Load(g.cfg, true))
		http.DefaultClient.CloseIdleConnections() // the old servers close theirs
		var m map[string]*dto.MetricFamily
		require.Eventually(t, func() bool { // the admin endpoint restarts too
			resp, err := http.Get(g.admin + "/metrics")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		}, 5*time.Second, 20*time.Millisecond)
		m = g.metrics(t)
		assert.Equal(t, 2.0, sample(m, "lakegate_requests_total", loads), "the new config's registry, the same counts")
		// A request racing the old server's shutdown may see EOF: retried.
		require.Eventually(t, func() bool {
			req, _ := http.NewRequest(http.MethodGet, g.base+p+"/namespaces/ns/tables/t", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 5*time.Second, 20*time.Millisecond)
		assert.GreaterOrEqual(t, sample(g.metrics(t), "lakegate_requests_total", loads), 3.0, "and counting on")

		// The status page's counters are the process's too: the new
		// config's policy engine and replayer count on from the old ones'.
		after, _ := statusOf(t, g.admin)
		require.NotNil(t, after.Policy)
		assert.Equal(t, int64(1), replays(after), "the replay counted before the reload")
		assert.Equal(t, before.Policy.Denied, after.Policy.Denied, "the dropTable denied before the reload")
		assert.Greater(t, after.Policy.Allowed, before.Policy.Allowed, "the loads since, on top")
		assert.Equal(t, after.Policy.Allowed+after.Policy.Denied, after.Policy.Decisions)
	})
}
