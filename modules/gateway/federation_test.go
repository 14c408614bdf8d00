package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// caddyJSON is a Caddy config serving lakegate on addr with the given
// lakegate app config (admin off, errors-only logs).
func caddyJSON(t testing.TB, addr string, app map[string]any) []byte {
	t.Helper()
	return caddyJSONHandlers(t, addr, app, map[string]any{"handler": "lakegate_iceberg"})
}

// caddyJSONHandlers is caddyJSON with the given handler chain (front
// doors) instead of the Iceberg one alone.
func caddyJSONHandlers(t testing.TB, addr string, app map[string]any, handlers ...any) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"admin":   map[string]any{"disabled": true},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{
			"lakegate": app,
			"http": map[string]any{"servers": map[string]any{"lakegate": map[string]any{
				"listen":            []string{addr},
				"listener_wrappers": []any{map[string]any{"wrapper": "lakegate_handoff"}},
				"routes":            []any{map[string]any{"handle": handlers}},
				"automatic_https":   map[string]any{"disable": true},
			}}},
		},
	})
	require.NoError(t, err)
	return raw
}

// gateway starts lakegate in-process with the given lakegate app config
// and returns its base URL once it listens.
func gateway(t testing.TB, app map[string]any) string {
	t.Helper()
	addr := freeAddr(t)
	return serveOn(t, addr, caddyJSON(t, addr, app))
}

// serveOn starts Caddy with cfg and waits until addr listens.
func serveOn(t testing.TB, addr string, cfg []byte) string {
	t.Helper()
	startCaddy(t, cfg)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "gateway did not listen on %s", addr)
	return "http://" + addr
}

func remote(name, url string, extra map[string]any) map[string]any {
	r := map[string]any{"url": url}
	for k, v := range extra {
		r[k] = v
	}
	return map[string]any{"name": name, "remote": r}
}

// gatewayClient is iceberg-go's REST client pointed only at the gateway,
// choosing a catalog by warehouse name.
func gatewayClient(t *testing.T, base, warehouse string) *rest.Catalog {
	return embeddedtest.Client(t, base, rest.WithWarehouseLocation(warehouse))
}

// Three independent backends on their own ports, one of which requires
// OAuth2 client credentials, behind one gateway: iceberg-go's conformance
// suite passes against each catalog name, through the gateway only.
func TestFederationConformance(t *testing.T) {
	alpha := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	beta := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	secureCfg := embeddedtest.Config(t, embedded.SQLite)
	secureCfg.Auth = embedded.AuthConfig{Clients: map[string]string{"lakegate": "gw-secret"}}
	secure := embeddedtest.Serve(t, secureCfg)

	base := gateway(t, map[string]any{"catalogs": []any{
		remote("alpha", alpha.URL, nil),
		remote("beta", beta.URL, nil),
		remote("secure", secure.URL, map[string]any{"auth": map[string]any{
			"mode": "oauth2", "client_id": "lakegate", "client_secret": secretRef(t, "gw-secret")}}),
	}})

	for _, name := range []string{"alpha", "beta", "secure"} {
		t.Run(name, func(t *testing.T) {
			catalogtest.RunCatalogTests(t, catalogtest.Config{
				SupportsNamespaceProperties: true,
				NewCatalog: func(t *testing.T) catalog.Catalog {
					return gatewayClient(t, base, name)
				},
			})
		})
	}

	// what went through the gateway under one name lives only in that backend
	ctx := context.Background()
	require.NoError(t, gatewayClient(t, base, "alpha").CreateNamespace(ctx, table.Identifier{"only_alpha"}, nil))
	ok, err := embeddedtest.Client(t, alpha.URL).CheckNamespaceExists(ctx, table.Identifier{"only_alpha"})
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = embeddedtest.Client(t, beta.URL).CheckNamespaceExists(ctx, table.Identifier{"only_alpha"})
	require.NoError(t, err)
	assert.False(t, ok)
}

// Arrow data appended through the gateway reads back row for row, and
// the backend holds the same table.
func TestFederationDataRoundTrip(t *testing.T) {
	ctx := context.Background()
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	base := gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})
	cat := gatewayClient(t, base, "lake")

	id := table.Identifier{"rt", "events"}
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"rt"}, nil))
	tbl, err := cat.CreateTable(ctx, id, embeddedtest.EventSchema)
	require.NoError(t, err)
	var want []embeddedtest.Row
	for i := int64(0); i < 3; i++ {
		data, rows := embeddedtest.Batch(t, tbl, i*50, i*50+50)
		tbl, err = tbl.AppendTable(ctx, data, 32, nil)
		data.Release()
		require.NoError(t, err)
		want = append(want, rows...)
	}
	viaGateway, err := cat.LoadTable(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want, embeddedtest.ScanAll(t, viaGateway))

	direct, err := embeddedtest.Client(t, backend.URL).LoadTable(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, viaGateway.MetadataLocation(), direct.MetadataLocation())
}

// /v1/config is the gateway's: its catalog name as prefix, the backend's
// separator, and only endpoints both serve.
func TestFederationConfigRewrite(t *testing.T) {
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	base := gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}, "default_catalog": "lake"})
	for _, url := range []string{base + "/v1/config?warehouse=lake", base + "/v1/config"} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		var cfg struct {
			Overrides map[string]string `json:"overrides"`
			Endpoints []string          `json:"endpoints"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&cfg))
		resp.Body.Close()
		assert.Equal(t, "lake", cfg.Overrides["prefix"])
		assert.Equal(t, "%1F", cfg.Overrides["namespace-separator"])
		assert.NotContains(t, cfg.Overrides, "uri")
		assert.Contains(t, cfg.Endpoints, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}")
	}
	// the prefix-less form reaches the default catalog
	resp, err := http.Get(base + "/v1/namespaces")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// /v1/config takes GET only: any other method gets the 405 every route
// gives (Allow, UnsupportedOperationException), not the config.
func TestFederationConfigOnlyGet(t *testing.T) {
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	base := gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "HEAD"} {
		req, err := http.NewRequest(method, base+"/v1/config?warehouse=lake", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s: %s", method, b)
		assert.Equal(t, "GET", resp.Header.Get("Allow"), method)
		if method != "HEAD" {
			assert.Equal(t, "UnsupportedOperationException", errorType(b), "%s: %s", method, b)
		}
	}
	status, b := do(t, "GET", base+"/v1/config?warehouse=lake", "", "", nil)
	assert.Equal(t, http.StatusOK, status, "%s", b)
}

// A backend that lists no endpoints (Nessie) gets none listed by the
// gateway either: clients then apply their own defaults, as they would
// talking to it directly (Java's view-endpoints-supported only applies to
// an absent list).
func TestFederationConfigWithoutEndpoints(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"defaults":{"prefix":"main"},"overrides":{}}`)
	}))
	t.Cleanup(backend.Close)
	base := gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})
	resp, err := http.Get(base + "/v1/config?warehouse=lake")
	require.NoError(t, err)
	defer resp.Body.Close()
	var cfg map[string]json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&cfg))
	assert.NotContains(t, cfg, "endpoints")
	assert.JSONEq(t, `{"prefix":"lake","namespace-separator":"%1F"}`, string(cfg["overrides"]))
}

// countingGateway is a gateway with catalog "lake" in front of a backend
// that answers every request past /v1/config with success (a body every
// operation accepts) and counts them.
func countingGateway(t *testing.T) (string, *atomic.Int32) {
	hits := new(atomic.Int32)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, `{"defaults":{},"overrides":{"prefix":"up"}}`)
			return
		}
		hits.Add(1)
		_, _ = io.WriteString(w, `{"namespace":["x"],"metadata-location":"s3://b/m.json","metadata":{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}}`)
	}))
	t.Cleanup(backend.Close)
	return gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}}), hits
}

// Names no catalog can hold faithfully (NUL and other control characters,
// invalid UTF-8, "." and "..") get a 400 at the gateway, in the path or in
// the body, and never reach the backend.
func TestFederationRefusesBadNames(t *testing.T) {
	base, hits := countingGateway(t)
	schema := `"schema":{"type":"struct","fields":[]}`
	id := func(ns, name string) string { return `{"namespace":["` + ns + `"],"name":"` + name + `"}` }
	for _, tc := range []struct{ name, method, path, body string }{
		{"NUL in a namespace (path)", "GET", "/v1/lake/namespaces/a%00b", ""},
		{"control character in a table (path)", "GET", "/v1/lake/namespaces/ns/tables/t%07", ""},
		{"invalid UTF-8 in a view (path)", "GET", "/v1/lake/namespaces/ns/views/%FF", ""},
		{"dot-dot table (path)", "DELETE", "/v1/lake/namespaces/ns/tables/..", ""},
		{"NUL in a new namespace", "POST", "/v1/lake/namespaces", `{"namespace":["a\u0000b"]}`},
		{"invalid UTF-8 in a new namespace", "POST", "/v1/lake/namespaces", "{\"namespace\":[\"a\xffb\"]}"},
		{"control character in a new table", "POST", "/v1/lake/namespaces/ns/tables", `{"name":"t\u001b",` + schema + `}`},
		{"dot-dot new view", "POST", "/v1/lake/namespaces/ns/views", `{"name":".."}`},
		{"NUL in a registered table", "POST", "/v1/lake/namespaces/ns/register", `{"name":"t\u0000","metadata-location":"s3://b/m.json"}`},
		{"NUL in a rename destination", "POST", "/v1/lake/tables/rename", `{"source":` + id("ns", "t") + `,"destination":` + id("ns", "t\u0000") + `}`},
		{"control character in a transaction", "POST", "/v1/lake/transactions/commit",
			`{"table-changes":[{"identifier":` + id("n\u0001s", "t") + `,"requirements":[],"updates":[]}]}`},
		{"malformed create body", "POST", "/v1/lake/namespaces/ns/tables", `{"name":`},
	} {
		status, body := do(t, tc.method, base+tc.path, "", tc.body, nil)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, body)
		assert.Equal(t, "BadRequestException", errorType(body), "%s: %s", tc.name, body)
	}
	assert.Zero(t, hits.Load(), "a refused request reached the backend")

	// Plain names, "%" and "/" included, still pass.
	status, body := do(t, "POST", base+"/v1/lake/namespaces", "", `{"namespace":["a%b/c"]}`, nil)
	assert.Equal(t, http.StatusOK, status, "%s", body)
	status, body = do(t, "GET", base+"/v1/lake/namespaces/a%25b%2Fc", "", "", nil)
	assert.Equal(t, http.StatusOK, status, "%s", body)
	assert.Equal(t, int32(2), hits.Load())
}

// Write bodies are checked against their operation's request schema at the
// gateway: null, trailing garbage, invalid UTF-8, NUL, unknown update types
// are a 400 and never reach the backend (one backend took them for empty
// commits).
func TestFederationRefusesBadBodies(t *testing.T) {
	base, hits := countingGateway(t)
	commit := base + "/v1/lake/namespaces/ns/tables/t"
	for _, body := range []string{
		`null`,
		`{"requirements":[],"updates":[]}garbage`,
		"{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"k\":\"\xff\"}}]}",
		"\x00\x00\x00",
		``,
		`{"requirements":[],"updates":[{"action":"drop-everything"}]}`,
		`{"requirements":[{"type":"assert-nothing"}],"updates":[]}`,
		`{"updates":[]}`,
	} {
		status, b := do(t, "POST", commit, "", body, nil)
		assert.Equal(t, http.StatusBadRequest, status, "%q: %s", body, b)
		assert.Equal(t, "BadRequestException", errorType(b), "%q: %s", body, b)
	}
	status, b := do(t, "POST", base+"/v1/lake/namespaces/ns/properties", "", `{"updates":{"k":1}}`, nil)
	assert.Equal(t, http.StatusBadRequest, status, "%s", b)
	assert.Zero(t, hits.Load(), "a refused body reached the backend")

	status, b = do(t, "POST", commit, "",
		`{"requirements":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`, nil)
	assert.Equal(t, http.StatusOK, status, "%s", b)
	assert.Equal(t, int32(1), hits.Load())
}

// A request is parsed and authorized before anything reaches the backend,
// /v1/config included: a denied caller costs the backend nothing, even
// when the gateway has never fetched its config.
func TestFederationDecidesBeforeTheBackend(t *testing.T) {
	var hits atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"defaults":{},"overrides":{}}`)
	}))
	t.Cleanup(backend.Close)
	base := gateway(t, map[string]any{
		"catalogs": []any{remote("lake", backend.URL, nil)},
		"policy":   testPolicy(t, "package lakegate.denyall\n\ndecision := {\"allow\": false, \"reason\": \"nothing is allowed\"}\n"),
	})
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/config?warehouse=lake", ""},
		{"GET", "/v1/lake/namespaces", ""},
		{"GET", "/v1/lake/namespaces/ns/tables/t", ""},
		{"POST", "/v1/lake/namespaces", `{"namespace":["ns"]}`},
	} {
		status, body := do(t, tc.method, base+tc.path, "", tc.body, nil)
		assert.Equal(t, http.StatusForbidden, status, "%s %s: %s", tc.method, tc.path, body)
		assert.Equal(t, "ForbiddenException", errorType(body), "%s %s: %s", tc.method, tc.path, body)
	}
	assert.Zero(t, hits.Load(), "a denied request reached the backend")
}

// The gateway's namespace separator is its own (the spec's %1F for a
// remote catalog), so it parses a request without the backend's config;
// a backend with another separator gets paths and `parent` re-encoded
// with it.
func TestFederationSeparatorIsTheGateways(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, `{"defaults":{},"overrides":{"prefix":"up","namespace-separator":"."}}`)
			return
		}
		mu.Lock()
		seen = append(seen, r.URL.RequestURI())
		mu.Unlock()
		_, _ = io.WriteString(w, `{"namespaces":[],"namespace":["a","b"]}`)
	}))
	t.Cleanup(backend.Close)
	base := gateway(t, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})

	status, body := do(t, "GET", base+"/v1/config?warehouse=lake", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var cfg struct {
		Overrides map[string]string `json:"overrides"`
	}
	require.NoError(t, json.Unmarshal(body, &cfg))
	assert.Equal(t, "%1F", cfg.Overrides["namespace-separator"])

	status, body = do(t, "GET", base+"/v1/lake/namespaces?parent=a%1Fb", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, body = do(t, "GET", base+"/v1/lake/namespaces/a%1Fb", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/v1/up/namespaces?parent=a.b", "/v1/up/namespaces/a.b"}, seen)
}

// A backend that dedupes Idempotency-Keys is sent one derived from the
// principal the Iceberg door authenticated: two principals sending the
// same key must not share it, or the backend would replay one's answer to
// the other (it sees every caller as lakegate's one credential).
func TestFederationForwardsKeysPerPrincipal(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, `{"defaults":{},"overrides":{"prefix":"up"},"idempotency-key-lifetime":"PT30M"}`)
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"metadata-location":"s3://b/m.json","metadata":{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}}`)
	}))
	t.Cleanup(backend.Close)
	base := gateway(t, map[string]any{
		"catalogs": []any{remote("lake", backend.URL, nil)},
		"identity": map[string]any{"tokens": []any{tokenFor("alice", "alice-token"), tokenFor("bob", "bob-token")}},
	})
	const key = "0190b7e4-7c5c-7f7e-8d2e-5a3b1c2d3e4f"
	for _, token := range []string{"alice-token", "alice-token", "bob-token"} {
		status, body := do(t, "POST", base+"/v1/lake/namespaces/ns/tables/t", token, `{"requirements":[],"updates":[]}`,
			map[string]string{"Idempotency-Key": key})
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, keys, 3)
	assert.Equal(t, keys[0], keys[1], "a retry is sent the same key")
	assert.NotEqual(t, keys[0], keys[2], "two principals' keys collide at the backend")
}
