package cache_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/cache/replay"
)

// Behind a real Sentinel, a failover (the replica promoted) is followed
// by go-redis: replay records written before it are still there (the
// replica had them), new claims are taken on the new master, and the
// invalidation bus carries on between replicas, whose subscriptions move
// to the new master.
func TestSentinelFailover(t *testing.T) {
	const pw = "failover-pw"
	url := redistest.Sentinel(t, pw)
	prefix := redistest.Prefix(t)
	store := replay.NewRedis(redistest.ClientAt(t, url), prefix+"replay:")
	cfg := cache.Config{Prefix: prefix}
	a := open(t, cfg, redistest.ClientAt(t, url))
	b := open(t, cfg, redistest.ClientAt(t, url))

	_, claimed, err := store.Claim(ctx, "before", replay.Record{Fingerprint: "fp", Owner: "a"}, time.Minute)
	require.NoError(t, err)
	require.True(t, claimed)
	table := cache.TableKey("cat", []string{"ns"}, "t")
	a.Put(ctx, table, "v", entry("before"))

	redistest.Failover(t, pw)

	// Until go-redis hears of the new master a call may fail (and the
	// cache marks Redis down): the first success is awaited.
	require.Eventually(t, func() bool {
		_, claimed, err := store.Claim(ctx, "after", replay.Record{Fingerprint: "fp", Owner: "b"}, time.Minute)
		return err == nil && claimed
	}, 20*time.Second, 100*time.Millisecond, "no claim succeeded after the failover")
	rec, found, err := store.Get(ctx, "before")
	require.NoError(t, err)
	require.True(t, found, "the record from before the failover is gone")
	assert.Equal(t, "a", rec.Owner)
	_, claimed, err = store.Claim(ctx, "before", replay.Record{Fingerprint: "fp", Owner: "c"}, time.Minute)
	require.NoError(t, err)
	assert.False(t, claimed, "a key claimed before the failover was claimed again")

	// The bus: once both caches are back on the new master, a's
	// invalidation drops b's copy, every time.
	round := func() bool {
		a.Put(ctx, table, "v", entry("after"))
		if e, _ := b.Get(ctx, table, "v"); e == nil || string(e.Body) != "after" {
			return false
		}
		if _, level := b.Get(ctx, table, "v"); level != cache.L1 {
			return false
		}
		a.Invalidate(ctx, table)
		e, _ := b.Get(ctx, table, "v")
		return e == nil
	}
	require.Eventually(t, round, 20*time.Second, 200*time.Millisecond,
		"invalidations do not reach the other replica after the failover")
	for i := range 5 {
		require.True(t, round(), "round %d: an invalidation did not reach the other replica", i)
	}
}
