package gateway

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/unified"
)

// A negative age, lifetime or timeout is refused at validation ("lakegate
// validate" said "Valid configuration" for max_age -5s); the policy's
// negative reload_interval, which turns reloading off, is not.
func TestValidateRefusesNegativeDurations(t *testing.T) {
	neg := duration.Duration(-5 * time.Second)
	for want, app := range map[string]App{
		"catalogs[0].cache.max_age: -5s is negative":        {Catalogs: []CatalogConfig{{Name: "a", Cache: &upstream.CacheConfig{MaxAge: neg}}}},
		"catalogs[0].cache.stale_if_error: -5s is negative": {Catalogs: []CatalogConfig{{Name: "a", Cache: &upstream.CacheConfig{StaleIfError: neg}}}},
		"catalogs[0].idempotency.lease: -5s is negative":    {Catalogs: []CatalogConfig{{Name: "a", Idempotency: &upstream.ReplayConfig{Lease: neg}}}},
		"policy.timeout: -5s is negative":                   {Policy: &policies.Config{Timeout: neg}},
	} {
		err := app.Validate()
		require.Error(t, err, want)
		assert.Equal(t, want, err.Error())
	}
	ok := App{Catalogs: []CatalogConfig{{Name: "a", Cache: &upstream.CacheConfig{MaxAge: duration.Duration(time.Minute)}}},
		Policy: &policies.Config{ReloadInterval: duration.Duration(-time.Second)}}
	assert.NoError(t, ok.Validate())
	assert.ErrorContains(t, (&SharingHandler{URLLifetime: neg}).Validate(), "url_lifetime -5s is negative")
}

// A front door without the lakegate app is a configuration error, not a
// gateway that loads and then answers every request 400.
func TestDoorsNeedTheApp(t *testing.T) {
	for _, door := range []string{"lakegate_iceberg", "lakegate_delta", "lakegate_sharing"} {
		cfg := []byte(`{"admin":{"disabled":true},"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:0"],
			"routes":[{"handle":[{"handler":"` + door + `"}]}]}}}}}`)
		var c caddy.Config
		require.NoError(t, json.Unmarshal(cfg, &c))
		err := caddy.Validate(&c)
		require.Error(t, err, door)
		assert.Contains(t, err.Error(), door+" needs the lakegate app", door)

		// An app that is there but fails to load says why, with no hint to
		// add it (issue 39: the hint came first whatever the error).
		cfg = []byte(`{"admin":{"disabled":true},"apps":{"lakegate":{"catalogs":[{"name":"a"}]},"http":{"servers":{"s":{"listen":["127.0.0.1:0"],
			"routes":[{"handle":[{"handler":"` + door + `"}]}]}}}}}`)
		require.NoError(t, json.Unmarshal(cfg, &c))
		err = caddy.Validate(&c)
		require.Error(t, err, door)
		assert.NotContains(t, err.Error(), "needs the lakegate app", door)
		assert.Contains(t, err.Error(), "no backend configured", door)
	}
}

// Validating a config (what `lakegate validate` does) opens nothing: no
// SQLite file, no warehouse directory. Loading it creates both.
func TestValidateCreatesNoFiles(t *testing.T) {
	dir := t.TempDir()
	app := map[string]any{"catalogs": []any{map[string]any{"name": "v", "embedded": map[string]any{
		"database": "sqlite", "dsn": dir + "/db/catalog.db", "warehouse": dir + "/warehouse"}}}}
	cfg, err := json.Marshal(map[string]any{"admin": map[string]any{"disabled": true},
		"apps": map[string]any{"lakegate": app}})
	require.NoError(t, err)
	var c caddy.Config
	require.NoError(t, json.Unmarshal(cfg, &c))
	require.NoError(t, caddy.Validate(&c))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "validate wrote files")

	require.NoError(t, caddy.Load(cfg, true))
	t.Cleanup(func() { _ = caddy.Stop() })
	assert.FileExists(t, dir+"/db/catalog.db", "a load opens the catalog")
	assert.DirExists(t, dir+"/warehouse")
}

// A unified catalog names catalogs of this gateway that are not unified,
// has no backend of its own and carries no stage its members carry.
func TestValidateUnifiedCatalogs(t *testing.T) {
	emb := CatalogConfig{Name: "m", Embedded: &embedded.Config{}}
	u := func(cc CatalogConfig) App {
		cc.Name = "all"
		if cc.Unified == nil {
			cc.Unified = &unified.Config{Default: "m"}
		}
		return App{Catalogs: []CatalogConfig{emb, cc}}
	}
	for _, tc := range []struct {
		want string
		app  App
	}{
		{`unified member "nope" is not a configured catalog`, u(CatalogConfig{Unified: &unified.Config{Default: "nope"}})},
		{`unified member "all" is itself unified`, u(CatalogConfig{Unified: &unified.Config{Default: "all"}})},
		{"takes no cache, idempotency or allowed_locations", u(CatalogConfig{Cache: &upstream.CacheConfig{}})},
		{"takes no cache, idempotency or allowed_locations", u(CatalogConfig{Idempotency: &upstream.ReplayConfig{}})},
		{"takes no cache, idempotency or allowed_locations", u(CatalogConfig{AllowedLocations: []string{"/x"}})},
		{"configure one backend", u(CatalogConfig{Remote: &upstream.RemoteConfig{URL: "http://x"}})},
		{"route a is configured twice", u(CatalogConfig{Unified: &unified.Config{Routes: []unified.Rule{
			{Namespace: []string{"a"}, Catalog: "m"}, {Namespace: []string{"a"}, Catalog: "m"}}}})},
	} {
		err := tc.app.Validate()
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	fine := u(CatalogConfig{})
	assert.NoError(t, fine.Validate())
}

// prefixless_paths is off or a configured catalog, and never ambiguous.
func TestValidatePrefixlessPaths(t *testing.T) {
	app := func(prefixless string, names ...string) App {
		a := App{PrefixlessPaths: prefixless}
		for _, n := range names {
			a.Catalogs = append(a.Catalogs, CatalogConfig{Name: n, Embedded: &embedded.Config{}})
		}
		return a
	}
	for _, ok := range []App{app("", "a"), app("off", "a", "b"), app("b", "a", "b")} {
		assert.NoError(t, ok.Validate())
	}
	for want, bad := range map[string]App{
		`prefixless_paths "c" is neither off nor a configured catalog`: app("c", "a", "b"),
		`prefixless_paths off is ambiguous: a catalog is named "off"`:  app("off", "a", "off"),
	} {
		err := bad.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
	}
}
