package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// secretRef writes value to a file of its own and returns the {file.*}
// placeholder lakegate's config takes for it: secrets are never literals.
func secretRef(t testing.TB, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(p, []byte(value+"\n"), 0o600))
	return "{file." + p + "}"
}

// TestSecretsStayPlaceholders: secrets given as {env.*} / {file.*} are
// used at run time (the gateway authenticates to its backend with them,
// and signs its own tokens) while the adapted JSON and the admin API show
// only the placeholders.
func TestSecretsStayPlaceholders(t *testing.T) {
	const clientSecret, signing = "gw-client-secret-7f3a", "signing-secret-that-is-32-bytes-long!!"
	t.Setenv("LG_TEST_SIGNING_SECRET", signing)
	t.Setenv("LG_TEST_REDIS_PASSWORD", "redis-pass-9c1")
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Auth = embedded.AuthConfig{Clients: map[string]string{"lakegate": clientSecret}}
	backend := embeddedtest.Serve(t, cfg)
	addr, admin := freeAddr(t), freeAddr(t)
	caddyfile := fmt.Sprintf(`{
	admin %s
	lakegate {
		redis redis://:{env.LG_TEST_REDIS_PASSWORD}@127.0.0.1:1/0
		identity {
			issuer {
				signing_secret {env.LG_TEST_SIGNING_SECRET}
				client_secret svc svc-secret svc
			}
		}
		catalog secure {
			remote %s {
				auth oauth2 {
					client_id lakegate
					client_secret %s
				}
			}
		}
	}
}
http://%s {
	lakegate_iceberg
}`, admin, backend.URL, secretRef(t, clientSecret), addr)
	adapted := adapt(t, []byte(caddyfile))
	for _, s := range []string{clientSecret, signing, "redis-pass-9c1", "svc-secret\""} {
		assert.NotContains(t, string(adapted), s)
	}
	assert.Contains(t, string(adapted), "{env.LG_TEST_SIGNING_SECRET}")
	base := serveOn(t, addr, adapted)

	// The backend accepted the resolved client secret.
	cl := gatewayClient(t, base, "secure")
	require.NoError(t, cl.CreateNamespace(context.Background(), table.Identifier{"ns"}, nil))
	// lakegate signs its own tokens with the resolved signing secret.
	rsp, err := http.PostForm(base+"/v1/oauth/tokens", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {"svc"}, "client_secret": {"svc-secret"}})
	require.NoError(t, err)
	body, _ := io.ReadAll(rsp.Body)
	rsp.Body.Close()
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", body)

	rsp, err = http.Get("http://" + admin + "/config/")
	require.NoError(t, err)
	shown, _ := io.ReadAll(rsp.Body)
	rsp.Body.Close()
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	for _, s := range []string{clientSecret, signing, "redis-pass-9c1"} {
		assert.NotContains(t, string(shown), s, "the admin API shows a secret")
	}
	assert.Contains(t, string(shown), "{env.LG_TEST_SIGNING_SECRET}")
	assert.Contains(t, string(shown), "{env.LG_TEST_REDIS_PASSWORD}")
	assert.Contains(t, string(shown), "{file.")
}

// TestSecretsRefusedAsLiterals: a literal secret, or a placeholder that
// resolves to nothing, stops the config from loading with an error that
// names the field and never the value.
func TestSecretsRefusedAsLiterals(t *testing.T) {
	for name, tc := range map[string]struct {
		app  map[string]any
		want string
	}{
		"literal client secret": {map[string]any{"catalogs": []any{remote("r", "http://127.0.0.1:9",
			map[string]any{"auth": map[string]any{"mode": "oauth2", "client_id": "c", "client_secret": "literal-s3cret"}})}},
			`catalog "r": remote auth client_secret must be a placeholder`},
		"literal bearer token": {map[string]any{"catalogs": []any{remote("r", "http://127.0.0.1:9",
			map[string]any{"auth": map[string]any{"mode": "bearer", "token": "literal-s3cret"}})}},
			"remote auth token must be a placeholder"},
		"literal sigv4 secret": {map[string]any{"catalogs": []any{remote("r", "http://127.0.0.1:9",
			map[string]any{"auth": map[string]any{"mode": "sigv4", "region": "us-east-1", "service": "glue",
				"access_key_id": "AKID", "secret_access_key": "literal-s3cret"}})}},
			"remote auth secret_access_key must be a placeholder"},
		"literal redis password": {map[string]any{"redis": "redis://:literal-s3cret@127.0.0.1:6379/0"},
			"redis password must be a placeholder"},
		"literal signing secret": {map[string]any{"identity": map[string]any{"issuer": map[string]any{
			"signing_secret": "literal-s3cret-literal-s3cret-literal-s3cret"}}},
			"identity issuer signing_secret must be a placeholder"},
		"literal storage secret": {map[string]any{"catalogs": []any{map[string]any{"name": "e", "embedded": map[string]any{
			"dsn": filepath.Join(t.TempDir(), "c.db"), "warehouse": t.TempDir(),
			"properties": map[string]string{"s3.secret-access-key": "literal-s3cret"}}}}},
			"embedded property s3.secret-access-key must be a placeholder"},
		"literal storage s3 secret": {map[string]any{"catalogs": []any{storageCatalog(map[string]any{
			"region": "us-east-1", "access_key_id": "AKID", "secret_access_key": "literal-s3cret"})}},
			`catalog "r": storage s3 secret_access_key must be a placeholder`},
		"literal storage s3 session token": {map[string]any{"catalogs": []any{storageCatalog(map[string]any{
			"region": "us-east-1", "access_key_id": "AKID", "secret_access_key": "{env.HOME}", "session_token": "literal-s3cret"})}},
			`catalog "r": storage s3 session_token must be a placeholder`},
		"literal postgres password": {map[string]any{"catalogs": []any{map[string]any{"name": "e", "embedded": map[string]any{
			"database": "postgres", "dsn": "postgres://lakegate:literal-s3cret@127.0.0.1:9/cat", "warehouse": t.TempDir()}}}},
			"embedded dsn password must be a placeholder"},
		"unset variable": {map[string]any{"catalogs": []any{remote("r", "http://127.0.0.1:9",
			map[string]any{"auth": map[string]any{"mode": "bearer", "token": "{env.LG_TEST_NOT_SET_ANYWHERE}"}})}},
			"remote auth token: {env.LG_TEST_NOT_SET_ANYWHERE} is unset, empty or unreadable"},
		"unreadable file": {map[string]any{"catalogs": []any{remote("r", "http://127.0.0.1:9",
			map[string]any{"auth": map[string]any{"mode": "bearer", "token": "{file./nonexistent/token}"}})}},
			"{file./nonexistent/token} is unset, empty or unreadable"},
	} {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			err := caddy.Load(caddyJSON(t, addr, tc.app), true)
			t.Cleanup(func() { _ = caddy.Stop() })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "literal-s3cret")
			assert.False(t, strings.Contains(err.Error(), "s3cret"))
		})
	}
}
