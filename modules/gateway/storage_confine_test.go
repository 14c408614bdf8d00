package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// A backend's table answer is not trusted with the gateway's keys: a
// remote catalog whose backend answers a table location (or a
// write.data.path) outside the catalog's allowed_locations (another
// catalog's tables, another bucket) has nothing signed and nothing vended
// for that table, in the Iceberg error model, and STS is never asked.
// The backend here is a real embedded catalog allowing more than the
// gateway does (s3://<bucket>/other, where another catalog's tables
// live); a table inside allowed_locations is signed and vended as usual.
func TestStorageConfinedToAllowedLocations(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/wh"
	other := "s3://" + st.bucket + "/other"
	cfg.AllowedLocations = []string{other, "s3://elsewhere-bucket/wh"}
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	backend := embeddedtest.Serve(t, cfg)
	lake := storeCatalog(t, "lake", backend.URL, cfg.Warehouse, st, sts.URL, true)
	base := gateway(t, map[string]any{"catalogs": []any{lake}})

	// The backend's tables, created on it directly (the gateway refuses
	// these locations in a create): "away" lies in another catalog's
	// prefix, "split" in the warehouse with its data written elsewhere.
	schema := `"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}`
	for _, body := range []string{
		`{"name":"in",` + schema + `}`,
		`{"name":"away",` + schema + `,"location":"` + other + `/sales/away"}`,
		`{"name":"split",` + schema + `,"properties":{"write.data.path":"` + other + `/sales/t/data"}}`,
	} {
		if strings.Contains(body, `"in"`) {
			status, b := do(t, http.MethodPost, backend.URL+"/v1/namespaces", "", `{"namespace":["sales"]}`, nil)
			require.Equal(t, http.StatusOK, status, "%s", b)
		}
		status, b := do(t, http.MethodPost, backend.URL+"/v1/namespaces/sales/tables", "", body, nil)
		require.Equal(t, http.StatusOK, status, "%s", b)
	}

	tables := base + "/v1/lake/namespaces/sales/tables/"
	obj := func(key string) string { return st.endpoint + "/" + st.bucket + "/" + key }
	signing := map[string]string{"X-Iceberg-Access-Delegation": "remote-signing"}
	vending := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"}
	refused := func(what string, status int, body []byte) {
		t.Helper()
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", what, body)
		assert.Equal(t, "ForbiddenException", errorType(body), "%s: %s", what, body)
		assert.Contains(t, string(body), "outside the catalog's warehouse and allowed_locations", what)
		assert.NotContains(t, string(body), "Credential=", what)
		assert.NotContains(t, string(body), st.secret, what)
		assert.NotContains(t, string(body), fakeVendedSecret, what)
	}
	for _, c := range []struct{ table, key string }{
		{"away", "other/sales/away/data/f.parquet"},
		{"split", "other/sales/t/data/f.parquet"},
		{"split", "wh/sales.db/split/metadata/f.json"}, // inside, but the answer is not trusted
	} {
		status, body := do(t, http.MethodPost, tables+c.table+"/sign", "", signReq("PUT", obj(c.key)), nil)
		refused("sign "+c.table+" "+c.key, status, body)
		status, body = do(t, http.MethodPost, tables+c.table+"/sign", "", signReq("GET", obj(c.key)), nil)
		refused("sign GET "+c.table+" "+c.key, status, body)
		status, body = do(t, http.MethodGet, tables+c.table, "", "", vending)
		refused("vend "+c.table, status, body)
		status, body = do(t, http.MethodGet, tables+c.table+"/credentials", "", "", nil)
		refused("loadCredentials "+c.table, status, body)
		// Remote signing's table answer is no key: it is given, and
		// every sign under it refused (above).
		status, body = do(t, http.MethodGet, tables+c.table, "", "", signing)
		assert.Equal(t, http.StatusOK, status, "%s", body)
		assert.NotContains(t, string(body), st.secret)
	}
	assert.Empty(t, sts.recorded(), "STS is never asked for a table outside allowed_locations")

	// The table inside allowed_locations: signed and vended.
	status, body := do(t, http.MethodPost, tables+"in/sign", "", signReq("PUT", obj("wh/sales.db/in/data/f.parquet")), nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), "Credential="+st.keyID+"/")
	status, body = do(t, http.MethodGet, tables+"in", "", "", vending)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), fakeVendedSecret)
	assert.Len(t, sts.recorded(), 1)
}

// storeBackend is a real embedded catalog whose warehouse is
// s3://<st's bucket>/<prefix>, writing with st's keys: the backend of a
// remote catalog whose storage the gateway governs.
func storeBackend(t *testing.T, st s3Store, prefix string) (url, warehouse string) {
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/" + prefix
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	return embeddedtest.Serve(t, cfg).URL, cfg.Warehouse
}

// storeCatalog is remote catalog name at backend, confined to
// warehouse, with a storage block on st that vends from sts (and signs
// remotely with signing).
func storeCatalog(t *testing.T, name, backend, warehouse string, st s3Store, sts string, signing bool) map[string]any {
	c := remote(name, backend, nil)
	c["allowed_locations"] = []string{warehouse}
	storage := map[string]any{
		"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
			"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
		"vended_credentials": map[string]any{"role_arn": testRoleARN, "sts_endpoint": sts},
	}
	if signing {
		storage["remote_signing"] = true
	}
	c["storage"] = storage
	return c
}
