package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backendSignerToken is the secret a backend's remote-signing-config
// names as a header for its own signer: no client of a storage catalog
// ever sees it.
const backendSignerToken = "Bearer BACKEND-SIGNER-TOKEN"

// withBackendSigner is the LoadTable answer of a backend whose own
// remote signing settings it carries: config keys that send a client to
// the backend's signer, and the spec's remote-signing-config with a
// static header that authenticates to it.
func withBackendSigner(load map[string]any) {
	cfg, _ := load["config"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["s3.remote-signing-enabled"] = "true"
	cfg["signer.uri"], cfg["signer.endpoint"] = "http://backend-signer.invalid", "v1/sign"
	load["config"] = cfg
	load["remote-signing-config"] = map[string]any{
		"properties": map[string]string{"backend-table-id": "t-1"},
		"headers":    map[string][]string{"Authorization": {backendSignerToken}},
	}
}

// A storage catalog's client signs with the gateway's signer or reads
// with the gateway's vended keys, never through the backend's signer:
// the backend's remote-signing-config and signer keys are gone from
// every answer, and the header that authenticates to that signer is never
// given out (issue 40; the spec's RemoteSigningConfig).
func TestStorageCatalogDropsTheBackendsSigner(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	backend, warehouse := storeBackend(t, st, "wh")
	front := answerProxy(t, backend, map[string]func(map[string]any){"t": withBackendSigner})
	lake := storeCatalog(t, "lake", front.URL, warehouse, st, sts.URL, true)
	base := gateway(t, map[string]any{"catalogs": []any{lake}})

	status, b := do(t, http.MethodPost, backend+"/v1/namespaces", "", `{"namespace":["sales"]}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	status, b = do(t, http.MethodPost, backend+"/v1/namespaces/sales/tables", "",
		`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", b)

	table := base + "/v1/lake/namespaces/sales/tables/t"
	answer := func(delegation string) (map[string]string, map[string]json.RawMessage, string) {
		t.Helper()
		var headers map[string]string
		if delegation != "" {
			headers = map[string]string{"X-Iceberg-Access-Delegation": delegation}
		}
		status, body := do(t, http.MethodGet, table, "", "", headers)
		require.Equal(t, http.StatusOK, status, "%s", body)
		assert.NotContains(t, string(body), "BACKEND-SIGNER-TOKEN", delegation)
		assert.NotContains(t, string(body), "backend-signer.invalid", delegation)
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(body, &doc))
		var config map[string]string
		require.NoError(t, json.Unmarshal(doc["config"], &config))
		return config, doc, string(body)
	}

	// No delegation asked: no keys and no signer at all.
	config, doc, _ := answer("")
	assert.NotContains(t, doc, "remote-signing-config")
	for _, k := range []string{"s3.secret-access-key", "s3.remote-signing-enabled", "signer.uri", "signer.endpoint"} {
		assert.NotContains(t, config, k)
	}

	// Remote signing: the gateway's signer, with no backend settings.
	config, doc, _ = answer("remote-signing")
	assert.NotContains(t, doc, "remote-signing-config")
	assert.Equal(t, "true", config["s3.remote-signing-enabled"])
	assert.Equal(t, base, strings.TrimSuffix(config["signer.uri"], "/"))
	assert.Equal(t, "v1/lake/namespaces/sales/tables/t/sign", config["signer.endpoint"])

	// Vended credentials: the gateway's keys, and nothing sending the
	// client to any signer.
	config, doc, body := answer("vended-credentials")
	assert.NotContains(t, doc, "remote-signing-config")
	assert.Contains(t, body, fakeVendedSecret)
	for _, k := range []string{"s3.remote-signing-enabled", "signer.uri", "signer.endpoint", "s3.signer.uri"} {
		assert.NotContains(t, config, k)
	}
}
