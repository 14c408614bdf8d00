package gateway

import (
	"context"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream"
)

func TestIsPlaceholder(t *testing.T) {
	for s, want := range map[string]bool{
		"{env.X}": true, "{file./run/secrets/token}": true,
		"": false, "literal": false, "{env.}": false, "{file.}": false, "{env.X}{env.Y}": false,
		"pre{env.X}": false, "{env.X}post": false, "{$X}": false, "{system.hostname}": false,
		"{http.request.header.Authorization}": false, "{env.X": false, "env.X}": false,
	} {
		assert.Equal(t, want, isPlaceholder(s), "%q", s)
	}
}

func TestResolveURL(t *testing.T) {
	t.Setenv("LG_TEST_PW", "p@ss:w/rd")
	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("from-file\n"), 0o600))
	s := newSecrets()
	for raw, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                    "redis://127.0.0.1:6379/0",
		"redis://user@127.0.0.1:6379/0":               "redis://user@127.0.0.1:6379/0",
		"redis://:{env.LG_TEST_PW}@127.0.0.1:6379/0":  "redis://:p%40ss%3Aw%2Frd@127.0.0.1:6379/0",
		"rediss://me:{env.LG_TEST_PW}@redis.internal": "rediss://me:p%40ss%3Aw%2Frd@redis.internal",
		"redis://:{file." + pwFile + "}@h:6379/0":     "redis://:from-file@h:6379/0",
		"": "",
	} {
		got, err := s.resolveURL("redis", raw)
		require.NoError(t, err, raw)
		assert.Equal(t, want, got, raw)
	}
	for _, raw := range []string{
		"redis://:literal@127.0.0.1:6379/0",
		"redis://:lit/eral@127.0.0.1:6379/0", // a "/" does not hide a literal password
		"redis://u:pre{env.LG_TEST_PW}@h/0",
		"redis://:{env.LG_TEST_UNSET_PW}@h/0",
		"{env.LG_TEST_UNSET_URL}",
	} {
		_, err := s.resolveURL("redis", raw)
		assert.Error(t, err, raw)
	}
}

// TestResolveDSN: a PostgreSQL DSN's password is resolved at run time, so
// neither the adapted JSON nor autosave carries it; a literal one is
// refused; SQLite paths pass as they are.
func TestResolveDSN(t *testing.T) {
	t.Setenv("LG_TEST_PW", "p@ss:w/rd")
	t.Setenv("LG_TEST_DSN", "postgres://u:whole@db:5432/cat")
	s := newSecrets()
	for _, tc := range []struct{ db, raw, want string }{
		{"postgres", "postgres://u:{env.LG_TEST_PW}@db:5432/cat?sslmode=disable", "postgres://u:p%40ss%3Aw%2Frd@db:5432/cat?sslmode=disable"},
		{"postgres", "postgres://u@db/cat?password={env.LG_TEST_PW}", "postgres://u@db/cat?password=p%40ss%3Aw%2Frd"},
		{"postgres", "{env.LG_TEST_DSN}", "postgres://u:whole@db:5432/cat"},
		{"postgres", "postgres://u@db/cat", "postgres://u@db/cat"},
		{"postgres", "host=db user=u dbname=cat", "host=db user=u dbname=cat"},
		{"sqlite", "/data/catalog.db", "/data/catalog.db"},
		{"", ":memory:", ":memory:"},
		{"", "{env.LG_TEST_DSN}", "postgres://u:whole@db:5432/cat"},
	} {
		got, err := s.resolveDSN(tc.db, tc.raw)
		require.NoError(t, err, tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
	}
	for _, raw := range []string{
		"postgres://u:s3cr3t@db/cat",
		"postgres://u@db/cat?password=s3cr3t",
		"host=db user=u password=s3cr3t",
		"host=db user=u PASSWORD={env.LG_TEST_PW}",
		"postgres://u:{env.LG_TEST_UNSET_PW}@db/cat",
		"{env.LG_TEST_UNSET_DSN}",
	} {
		_, err := s.resolveDSN("postgres", raw)
		require.Error(t, err, raw)
		assert.NotContains(t, err.Error(), "s3cr3t", raw)
	}
}

// TestEvictionPolicy: the replay store's warning fires for every policy
// that may evict a record with a TTL, not for noeviction.
func TestEvictionPolicy(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	before, err := rdb.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil { // miniredis, or a managed Redis without CONFIG: nothing known
		policy, evicting := evictionPolicy(ctx, rdb)
		assert.Equal(t, "", policy)
		assert.False(t, evicting)
		t.Skip("this Redis answers no CONFIG GET (miniredis): the policies need a real one (LAKEGATE_TEST_REDIS)")
	}
	t.Cleanup(func() { _ = rdb.ConfigSet(ctx, "maxmemory-policy", before["maxmemory-policy"]).Err() })
	for policy, evicting := range map[string]bool{"noeviction": false, "allkeys-lru": true, "volatile-ttl": true, "volatile-lru": true} {
		require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", policy).Err())
		got, ev := evictionPolicy(ctx, rdb)
		assert.Equal(t, policy, got)
		assert.Equal(t, evicting, ev, policy)
	}
}

// Properties whose values are credentials must be placeholders; access key
// ids and expiry times may stay literal.
func TestResolveProperties(t *testing.T) {
	t.Setenv("LG_TEST_SECRET", "s3cr3t")
	s := newSecrets()
	got, err := s.resolveProperties("catalog", map[string]string{
		"s3.secret-access-key": "{env.LG_TEST_SECRET}", "s3.access-key-id": "AKIA", "s3.region": "eu",
		"gcs.oauth2.token-expires-at": "1700000000000", "s3.session-token-expires-at-ms": "1700000000000",
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"s3.secret-access-key": "s3cr3t", "s3.access-key-id": "AKIA", "s3.region": "eu",
		"gcs.oauth2.token-expires-at": "1700000000000", "s3.session-token-expires-at-ms": "1700000000000"}, got)
	for _, k := range []string{"s3.secret-access-key", "s3.session-token", "gcs.oauth2.token", "adls.sas-token.acct", "jdbc.password"} {
		_, err := s.resolveProperties("catalog", map[string]string{k: "literal"})
		assert.Error(t, err, k)
	}
}

// The status page's scrubber blanks a backend's echo of a configured
// secret in any form: \u-escaped by a JSON encoder, base64 in a quoted
// Basic header, cut short, in a Redis URL's percent-encoded password.
func TestScrubberBlanksEncodedSecrets(t *testing.T) {
	const token, password = "backend-token-0123456789", "p@ss w/rd-redis-42"
	a := &App{Catalogs: []CatalogConfig{{Name: "c", Remote: &upstream.RemoteConfig{
		Auth: upstream.Auth{Mode: upstream.AuthBearer, Token: token}}}},
		Redis: (&url.URL{Scheme: "redis", User: url.UserPassword("", password), Host: "127.0.0.1:6379", Path: "/0"}).String()}
	scrub := a.scrubber()
	for _, msg := range []string{
		`{"detail":"bad token \u0062ackend-token-0123456789"}`,
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("svc:"+token)),
		"token backend-token-012345...",
		"dial redis://:" + url.PathEscape(password) + "@127.0.0.1:6379: refused",
	} {
		got := scrub(msg)
		assert.Contains(t, got, "[redacted]", msg)
		assert.NotContains(t, got, "0123456", msg)
		assert.NotContains(t, got, "w/rd", msg)
		assert.NotContains(t, got, "w%2Frd", msg)
	}
}
