package redisurl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/redisurl"
)

const secret = "s3cr3t-pw"

func TestParseStandalone(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                  "127.0.0.1:6379",
		"rediss://:" + secret + "@redis.internal/2": "redis.internal:6379",
		"unix:///run/redis.sock?db=1":               "/run/redis.sock",
	} {
		got, err := redisurl.Parse(raw)
		require.NoError(t, err, raw)
		require.NotNil(t, got.Simple, raw)
		assert.Equal(t, want, got.Simple.Addr, raw)
	}
}

func TestParseCluster(t *testing.T) {
	got, err := redisurl.Parse("redis+cluster://u:" + secret + "@10.0.0.1:7000,10.0.0.2,[::1]:7002/?dial_timeout=3s&max_redirects=5")
	require.NoError(t, err)
	o := got.Cluster
	require.NotNil(t, o)
	assert.Equal(t, []string{"10.0.0.1:7000", "10.0.0.2:6379", "[::1]:7002"}, o.Addrs)
	assert.Equal(t, "u", o.Username)
	assert.Equal(t, secret, o.Password)
	assert.Equal(t, 3*time.Second, o.DialTimeout)
	assert.Equal(t, 5, o.MaxRedirects)
	assert.Nil(t, o.TLSConfig)

	got, err = redisurl.Parse("rediss+cluster://:p%40ss%3Aw%2Frd@redis-cfg.example:6380")
	require.NoError(t, err)
	require.NotNil(t, got.Cluster)
	assert.Equal(t, []string{"redis-cfg.example:6380"}, got.Cluster.Addrs, "one seed is still a cluster")
	assert.Equal(t, "p@ss:w/rd", got.Cluster.Password, "an escaped password, as secrets.go writes it")
	require.NotNil(t, got.Cluster.TLSConfig)
	assert.Equal(t, "cluster", got.Kind())
}

func TestParseSentinel(t *testing.T) {
	got, err := redisurl.Parse("redis+sentinel://:" + secret + "@s1:26380,s2/mymaster/3?sentinel_password=sp&pool_size=7")
	require.NoError(t, err)
	o := got.Failover
	require.NotNil(t, o)
	assert.Equal(t, "mymaster", o.MasterName)
	assert.Equal(t, []string{"s1:26380", "s2:26379"}, o.SentinelAddrs)
	assert.Equal(t, 3, o.DB)
	assert.Equal(t, secret, o.Password, "the userinfo is the master's")
	assert.Equal(t, "sp", o.SentinelPassword)
	assert.Equal(t, 7, o.PoolSize)

	got, err = redisurl.Parse("rediss+sentinel://s1:26379/my%20master")
	require.NoError(t, err)
	assert.Equal(t, "my master", got.Failover.MasterName)
	assert.Zero(t, got.Failover.DB)
	assert.Empty(t, got.Failover.SentinelPassword)
	require.NotNil(t, got.Failover.TLSConfig)
	assert.Equal(t, "sentinel", got.Kind())
}

// Bad URLs get an error that says what is wrong, and never the password.
func TestParseRejects(t *testing.T) {
	pw := ":" + secret + "@"
	for name, tc := range map[string]struct{ raw, says string }{
		"no scheme":                   {"127.0.0.1:6379", "not a Redis URL"},
		"unknown scheme":              {"memcached://" + pw + "h:11211", `unknown Redis URL scheme "memcached"`},
		"cluster spelled wrong":       {"redis-cluster://" + pw + "h:7000", "unknown Redis URL scheme"},
		"standalone with seeds":       {"redis://" + pw + "h1:7000?addr=h2:7000", "redis+cluster://host1:6379,host2:6379"},
		"standalone unknown option":   {"redis://" + pw + "h:6379/0?colour=blue", "unexpected option: colour"},
		"standalone bad port":         {"redis://" + pw + "h:port/0", "bad URL"},
		"cluster with no hosts":       {"redis+cluster://" + pw, "names no host"},
		"cluster with no hosts, path": {"redis+cluster:///", "names no host"},
		"cluster empty host":          {"redis+cluster://" + pw + "h1:7000,,h2:7000", "empty host"},
		"cluster bad port":            {"redis+cluster://" + pw + "h1:70000", "bad port"},
		"cluster port missing":        {"redis+cluster://h1:", "bad port"},
		"cluster with a database":     {"redis+cluster://" + pw + "h1:7000/2", "only database 0"},
		"cluster addr option":         {"redis+cluster://" + pw + "h1:7000?addr=h2:7000", "comma-separated"},
		"cluster reads replicas":      {"redis+cluster://h1:7000?read_only=true", "masters only"},
		"cluster routes randomly":     {"redis+cluster://h1:7000?route_randomly=true", "masters only"},
		"cluster unknown option":      {"redis+cluster://" + pw + "h1:7000?colour=blue", "unexpected option: colour"},
		"cluster bad timeout":         {"redis+cluster://" + pw + "h1:7000?dial_timeout=soon", "dial_timeout"},
		"sentinel without master":     {"redis+sentinel://" + pw + "s1:26379", "names no master"},
		"sentinel slash, no master":   {"redis+sentinel://" + pw + "s1:26379/", "names no master"},
		"sentinel master in query":    {"redis+sentinel://s1:26379?master_name=m", "names no master"},
		"sentinel master and query":   {"redis+sentinel://s1:26379/m?master_name=m", "as the path"},
		"sentinel bad database":       {"redis+sentinel://" + pw + "s1:26379/m/x", `database "x"`},
		"sentinel long path":          {"redis+sentinel://s1:26379/m/0/extra", "nothing more"},
		"sentinel with no hosts":      {"redis+sentinel:///m", "names no host"},
		"sentinel password in query":  {"redis+sentinel://s1:26379/m?password=" + secret, "user:password"},
		"sentinel replica reads":      {"redis+sentinel://s1:26379/m?replica_only=true", "masters only"},
		"sentinel route by latency":   {"redis+sentinel://s1:26379/m?route_by_latency=true", "masters only"},
		"sentinel unknown option":     {"redis+sentinel://" + pw + "s1:26379/m?colour=blue", "unexpected option: colour"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := redisurl.Parse(tc.raw)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), secret, "the error shows the password")
		})
	}
}

// A password placeholder, as the Caddyfile holds it before secrets are
// resolved, parses: the URL is checked when the config is adapted.
func TestParsePlaceholderPassword(t *testing.T) {
	for _, raw := range []string{
		"redis://:{env.REDIS_PASSWORD}@h:6379/0",
		"rediss://me:{file./run/secrets/redis}@h:6379/0",
		"redis+cluster://:{env.REDIS_PASSWORD}@h1:7000,h2:7000",
		"redis+sentinel://:{file./run/pw}@s1:26379/m?sentinel_password={env.SENTINEL_PASSWORD}",
	} {
		_, err := redisurl.Parse(raw)
		assert.NoError(t, err, raw)
	}
}
