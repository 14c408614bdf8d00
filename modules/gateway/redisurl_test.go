package gateway_test

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Caddyfile takes the Cluster and Sentinel forms in the same redis and
// replay_redis options, password placeholders and all.
func TestAdaptClusterAndSentinelURLs(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		redis redis+cluster://:{env.REDIS_PASSWORD}@10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000
		replay_redis "redis+sentinel://:{file./run/secrets/redis}@10.0.1.1:26379,10.0.1.2:26379/replay/0?sentinel_password={env.SENTINEL_PASSWORD}"
	}
}
:8080 {
	lakegate_iceberg
}`))
	assert.JSONEq(t, `{
		"redis": "redis+cluster://:{env.REDIS_PASSWORD}@10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000",
		"replay_redis": "redis+sentinel://:{file./run/secrets/redis}@10.0.1.1:26379,10.0.1.2:26379/replay/0?sentinel_password={env.SENTINEL_PASSWORD}"
	}`, appJSON(t, out, "lakegate"))
}

// A bad Redis URL fails the Caddyfile where it is written, and a JSON
// config at load, even when no catalog uses Redis yet; neither error
// shows the password.
func TestBadRedisURLsFailTheConfig(t *testing.T) {
	t.Setenv("LG_TEST_REDIS_PW", "redis-url-s3cret")
	for name, tc := range map[string]struct{ url, want string }{
		"unknown scheme":           {"redis-cluster://:{env.LG_TEST_REDIS_PW}@h:7000", "unknown Redis URL scheme"},
		"cluster with no hosts":    {"redis+cluster://:{env.LG_TEST_REDIS_PW}@/", "names no host"},
		"sentinel without master":  {"redis+sentinel://:{env.LG_TEST_REDIS_PW}@s1:26379,s2:26379", "names no master"},
		"cluster seeds as addr=":   {"redis://:{env.LG_TEST_REDIS_PW}@h1:7000?addr=h2:7000", "redis+cluster://"},
		"cluster with a database":  {"redis+cluster://:{env.LG_TEST_REDIS_PW}@h1:7000/3", "only database 0"},
		"sentinel replica reads":   {"redis+sentinel://:{env.LG_TEST_REDIS_PW}@s1/m?replica_only=true", "masters only"},
		"unknown option":           {"redis+cluster://:{env.LG_TEST_REDIS_PW}@h1:7000?colour=blue", "unexpected option"},
		"sentinel password in URL": {"redis+sentinel://s1/m?password=redis-url-s3cret", "user:password"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, option := range []string{"redis", "replay_redis"} {
				_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(
					"{\n\tlakegate {\n\t\t"+option+" \""+tc.url+"\"\n\t}\n}\n:8080 {\n\tlakegate_iceberg\n}"), nil)
				require.Error(t, err, option)
				assert.Contains(t, err.Error(), option+": ")
				assert.Contains(t, err.Error(), tc.want)
				assert.NotContains(t, err.Error(), "s3cret")

				err = caddy.Load(caddyJSON(t, freeAddr(t), map[string]any{option: tc.url}), true)
				t.Cleanup(func() { _ = caddy.Stop() })
				require.Error(t, err, option)
				assert.Contains(t, err.Error(), option+": ")
				assert.Contains(t, err.Error(), tc.want)
				assert.NotContains(t, err.Error(), "s3cret")
			}
		})
	}
}
