package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/internal/redisurl"
)

// A Sentinel URL's sentinel_password is a placeholder like the URL's own
// password, and is resolved alongside it.
func TestResolveSentinelURL(t *testing.T) {
	t.Setenv("LG_TEST_PW", "p@ss&w=rd")
	s := newSecrets()
	got, err := s.resolveURL("redis",
		"redis+sentinel://:{env.LG_TEST_PW}@s1:26379,s2:26379/m/0?sentinel_password={env.LG_TEST_PW}&pool_size=3")
	require.NoError(t, err)
	target, err := redisurl.Parse(got)
	require.NoError(t, err)
	assert.Equal(t, "p@ss&w=rd", target.Failover.Password)
	assert.Equal(t, "p@ss&w=rd", target.Failover.SentinelPassword)
	assert.Equal(t, 3, target.Failover.PoolSize)
	assert.Equal(t, []string{"s1:26379", "s2:26379"}, target.Failover.SentinelAddrs)

	for _, raw := range []string{
		"redis+sentinel://s1:26379/m?sentinel_password=literal",
		"redis+sentinel://:{env.LG_TEST_PW}@s1:26379/m?sentinel_password={env.LG_TEST_UNSET_PW}",
	} {
		_, err := s.resolveURL("redis", raw)
		assert.Error(t, err, raw)
	}
}

// Every kind of client fails fast; a cluster's retries are its redirect
// loop, bounded.
func TestFailFast(t *testing.T) {
	for _, raw := range []string{
		"redis://h:6379/0?max_retries=5&read_timeout=10s",
		"redis+cluster://h1:7000,h2:7000?read_timeout=10s",
		"redis+sentinel://s1:26379/m?max_retries=5",
	} {
		target, err := redisurl.Parse(raw)
		require.NoError(t, err)
		failFast(target)
		switch {
		case target.Cluster != nil:
			o := target.Cluster
			assert.Equal(t, []time.Duration{redisTimeout, redisTimeout, redisTimeout}, []time.Duration{o.DialTimeout, o.ReadTimeout, o.WriteTimeout})
			assert.Equal(t, -1, o.MaxRetries, "no node retries under the cluster's own")
			assert.Equal(t, 3, o.MaxRedirects)
		case target.Failover != nil:
			o := target.Failover
			assert.Equal(t, []time.Duration{redisTimeout, redisTimeout, redisTimeout}, []time.Duration{o.DialTimeout, o.ReadTimeout, o.WriteTimeout})
			assert.Equal(t, 1, o.MaxRetries)
		default:
			o := target.Simple
			assert.Equal(t, []time.Duration{redisTimeout, redisTimeout, redisTimeout}, []time.Duration{o.DialTimeout, o.ReadTimeout, o.WriteTimeout})
			assert.Equal(t, 1, o.MaxRetries)
		}
	}
	target, err := redisurl.Parse("redis+cluster://h1:7000?max_redirects=8")
	require.NoError(t, err)
	failFast(target)
	assert.Equal(t, 8, target.Cluster.MaxRedirects, "an operator's max_redirects stands")
}

// On a Redis Cluster the replay store's warning looks at every master:
// one evicting master is enough to lose records.
func TestEvictionPolicyOnCluster(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.ClientAt(t, redistest.Cluster(t))
	policy, evicting := evictionPolicy(ctx, rdb)
	assert.Equal(t, "noeviction", policy)
	assert.False(t, evicting)
	master, err := rdb.(*redis.ClusterClient).MasterForKey(ctx, "any")
	require.NoError(t, err)
	require.NoError(t, master.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	policy, evicting = evictionPolicy(ctx, rdb)
	assert.Equal(t, "allkeys-lru", policy)
	assert.True(t, evicting)
}
