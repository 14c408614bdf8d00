package gateway_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalogListing is GET /lakegate/catalogs's answer.
type catalogListing struct {
	Catalogs []struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		Default bool   `json:"default"`
	} `json:"catalogs"`
}

func listCatalogs(t *testing.T, base, token string) (int, catalogListing, []byte) {
	t.Helper()
	status, body := do(t, http.MethodGet, base+"/lakegate/catalogs", token, "", nil)
	var out catalogListing
	if status == http.StatusOK {
		require.NoError(t, json.Unmarshal(body, &out), "%s", body)
	}
	return status, out, body
}

func catalogNames(l catalogListing) []string {
	out := []string{}
	for _, c := range l.Catalogs {
		out = append(out, c.Name)
	}
	return out
}

// Without a policy every catalog is listed, by name, with its kind and
// which one is the default, and nothing of its backend; only GET is
// answered. lakegate_status ahead of the door on the same site leaves the
// path to it.
func TestDiscoveryListsEveryCatalog(t *testing.T) {
	addr := freeAddr(t)
	t.Setenv("DISCOVERY_BACKEND_TOKEN", "backend-s3cret")
	app := map[string]any{
		"default_catalog": "local",
		"catalogs": []any{
			embeddedCatalog(t, "local"),
			remote("lake", "http://127.0.0.1:9/lake-backend", map[string]any{
				"auth": map[string]any{"mode": "bearer", "token": "{env.DISCOVERY_BACKEND_TOKEN}"}}),
			remote("archive", "http://127.0.0.1:9/archive-backend", map[string]any{"warehouse": "backend-warehouse"}),
		},
	}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_status"}, map[string]any{"handler": "lakegate_iceberg"}))

	status, body := do(t, http.MethodGet, base+"/lakegate/catalogs", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.JSONEq(t, `{"catalogs":[
		{"name":"archive","kind":"remote","default":false},
		{"name":"lake","kind":"remote","default":false},
		{"name":"local","kind":"embedded","default":true}]}`, string(body))
	for _, secret := range []string{"127.0.0.1:9", "backend", "s3cret", "catalog.db", "warehouse"} {
		assert.NotContains(t, string(body), secret, "nothing of a backend is shown")
	}

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodHead} {
		req, err := http.NewRequest(method, base+"/lakegate/catalogs", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var e struct {
			Error struct {
				Type string `json:"type"`
				Code int    `json:"code"`
			} `json:"error"`
		}
		if method != http.MethodHead {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, "UnsupportedOperationException", e.Error.Type, method)
		}
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
		assert.Equal(t, "GET", resp.Header.Get("Allow"), method)
	}

	// GET /v1/config without warehouse still answers the default catalog's config.
	status, cfg := get(t, base+"/v1/config")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "local", cfg["overrides"].(map[string]any)["prefix"])
}

// discoveryPolicy lets alice use the catalogs whose names start with
// "open", bob every catalog, and nobody else any. It replaces the
// observed gateway's policy (same package).
const discoveryPolicy = `package lakegate.telemetry_test

default decision := {"allow": false, "reason": "no grant"}

decision := {"allow": true} if {
	input.principal.id == "alice"
	startswith(input.resource.catalog, "open")
}

decision := {"allow": true} if input.principal.id == "bob"
`

// With a policy, a catalog is listed only when the caller may getConfig
// on it, the decision GET /v1/config?warehouse= makes; each catalog's
// decision is counted (metrics) and the request's record says allow,
// partial or deny. Identity is required as for every Iceberg request.
func TestDiscoveryFilteredByPolicy(t *testing.T) {
	open1, shut, open2 := uniqueName("open"), uniqueName("shut"), uniqueName("open")
	tokens := map[string]string{"alice": "alice-token", "bob": "bob-token", "carol": "carol-token"}
	g := observedConfig(t, map[string]any{
		"default_catalog": shut,
		"catalogs": []any{
			remote(open1, "http://127.0.0.1:9/one", nil), remote(shut, "http://127.0.0.1:9/two", nil),
			remote(open2, "http://127.0.0.1:9/three", nil),
		},
	}, tokens)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(g.accessLog), "p.rego"), []byte(discoveryPolicy), 0o600))
	serveOn(t, g.base[len("http://"):], g.cfg)

	status, got, body := listCatalogs(t, g.base, "alice-token")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Equal(t, slices.Sorted(slices.Values([]string{open1, open2})), catalogNames(got))
	for _, c := range got.Catalogs {
		assert.Equal(t, "remote", c.Kind)
		assert.False(t, c.Default, "the default catalog is not alice's")
	}
	assert.NotContains(t, string(body), "127.0.0.1:9")
	status, _ = do(t, http.MethodGet, g.base+"/v1/config?warehouse="+shut, "alice-token", "", nil)
	assert.Equal(t, http.StatusForbidden, status, "the door refuses what the listing leaves out")

	status, got, body = listCatalogs(t, g.base, "bob-token")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Equal(t, slices.Sorted(slices.Values([]string{open1, shut, open2})), catalogNames(got))
	for _, c := range got.Catalogs {
		assert.Equal(t, c.Name == shut, c.Default, c.Name)
	}

	status, _, body = listCatalogs(t, g.base, "carol-token")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.JSONEq(t, `{"catalogs":[]}`, string(body))

	for name, tok := range map[string]string{"no token": "", "bad token": "not-a-token"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			status, body := do(t, method, g.base+"/lakegate/catalogs", tok, "", nil)
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s", method, name)
			assert.Equal(t, "NotAuthorizedException", errorType(body), "%s %s", method, name)
		}
	}
	status, body = do(t, http.MethodPost, g.base+"/lakegate/catalogs", "bob-token", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, "UnsupportedOperationException", errorType(body))

	m := g.metrics(t)
	decisions := func(catalog, result string) float64 {
		return sample(m, "lakegate_policy_decisions_total",
			map[string]string{"catalog": catalog, "api": "iceberg", "operation": "listCatalogs", "result": result})
	}
	assert.Equal(t, 2.0, decisions(open1, "allow"), "alice and bob")
	assert.Equal(t, 1.0, decisions(open1, "deny"), "carol")
	assert.Equal(t, 1.0, decisions(shut, "allow"), "bob")
	assert.Equal(t, 2.0, decisions(shut, "deny"), "alice and carol")

	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = nil
		for _, l := range accessLines(t, g.accessLog) {
			if rec, _ := l["lakegate"].(map[string]any); rec["operation"] == "listCatalogs" && l["status"] == 200.0 {
				lines = append(lines, l)
			}
		}
		return len(lines) >= 3
	}, 5*time.Second, 20*time.Millisecond)
	decisionOf := map[string]any{}
	for _, l := range lines {
		rec := l["lakegate"].(map[string]any)
		assert.Equal(t, "iceberg", rec["api"])
		assert.NotContains(t, rec, "catalog", "the listing names no one catalog")
		decisionOf[rec["principal"].(string)] = rec["decision"]
	}
	assert.Equal(t, map[string]any{"alice": "partial", "bob": "allow", "carol": "deny"}, decisionOf)
}
