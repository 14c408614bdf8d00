package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/redistest"
)

// The cache on a real three-master Redis Cluster: L2 hits across
// replicas, invalidations that every replica confirmed before Invalidate
// returns, and namespace and catalog purges that reach the keys on every
// master (SCAN walks one node).
func TestCacheOnRedisCluster(t *testing.T) {
	url := redistest.Cluster(t)
	cfg := cache.Config{Prefix: redistest.Prefix(t)}
	a := open(t, cfg, redistest.ClientAt(t, url))
	b := open(t, cfg, redistest.ClientAt(t, url))
	probe := func() *cache.Cache { return open(t, cfg, redistest.ClientAt(t, url)) }

	t.Run("L2 hit on another replica", func(t *testing.T) {
		table := cache.TableKey("cat", []string{"ns"}, "l2")
		a.Put(ctx, table, "v", entry("shared"))
		got, level := b.Get(ctx, table, "v")
		require.NotNil(t, got)
		assert.Equal(t, cache.L2, level)
		assert.Equal(t, "shared", string(got.Body))
	})

	t.Run("invalidation confirmed across replicas", func(t *testing.T) {
		for i := range 20 { // tables on every master, and the bus on one
			table := cache.TableKey("cat", []string{"ns"}, fmt.Sprint("bus", i))
			a.Put(ctx, table, "v", entry("old"))
			_, level := b.Get(ctx, table, "v")
			require.Equal(t, cache.L2, level)
			_, level = b.Get(ctx, table, "v")
			require.Equal(t, cache.L1, level)
			start := time.Now()
			a.Invalidate(ctx, table)
			assert.Less(t, time.Since(start), 200*time.Millisecond, "confirmed, not timed out")
			e, _ := b.Get(ctx, table, "v")
			require.Nil(t, e, "table %d: b still serves it right after a's invalidation returned", i)
		}
	})

	t.Run("purges reach every master", func(t *testing.T) {
		const n = 60
		tables := func(cat, ns string) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = cache.TableKey(cat, []string{ns}, fmt.Sprint("t", i))
			}
			return out
		}
		ns1, ns2, other := tables("purge", "ns1"), tables("purge", "ns2"), tables("kept", "ns1")
		for _, group := range [][]string{ns1, ns2, other} {
			for _, table := range group {
				a.Put(ctx, table, "v", entry(table))
			}
		}
		requireOnEveryMaster(t, redistest.ClientAt(t, url), cfg.Prefix)
		inL2 := func(group []string) int {
			p, found := probe(), 0
			for _, table := range group {
				if e, _ := p.Get(ctx, table, "v"); e != nil {
					found++
				}
			}
			return found
		}
		a.Invalidate(ctx, cache.NamespacePrefix("purge", []string{"ns1"}))
		assert.Zero(t, inL2(ns1), "namespace purge left tables in Redis")
		assert.Equal(t, n, inL2(ns2), "namespace purge took another namespace's tables")
		a.Invalidate(ctx, cache.CatalogPrefix("purge"))
		assert.Zero(t, inL2(ns2), "catalog purge left tables in Redis")
		assert.Equal(t, n, inL2(other), "catalog purge took another catalog's tables")
		for _, table := range ns2 {
			e, _ := b.Get(ctx, table, "v")
			require.Nil(t, e, "the purge did not reach b's L1")
		}
	})
}

// requireOnEveryMaster checks that keys under prefix live on every master:
// else a purge test would pass on one node's SCAN.
func requireOnEveryMaster(t *testing.T, rdb redis.UniversalClient, prefix string) {
	t.Helper()
	cc, ok := rdb.(*redis.ClusterClient)
	require.True(t, ok, "not a cluster client")
	var mu sync.Mutex
	counts := map[string]int{}
	require.NoError(t, cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, _, err := m.Scan(ctx, 0, prefix+"*", 1000).Result()
		mu.Lock()
		counts[m.Options().Addr] = len(keys)
		mu.Unlock()
		return err
	}))
	require.Len(t, counts, 3)
	for addr, n := range counts {
		require.Positive(t, n, "no test keys on master %s", addr)
	}
}
