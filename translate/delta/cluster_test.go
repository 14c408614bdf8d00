package delta_test

import (
	"testing"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/translate/delta"
)

// The Redis store keeps its contract on a real three-master Redis Cluster
// (a staging table and its location index hash to different slots, so
// they must never share a command or transaction) and behind a real
// Sentinel.
func TestStoresOnClusterAndSentinel(t *testing.T) {
	for name, start := range map[string]func(t *testing.T) string{
		"cluster":  func(t *testing.T) string { return redistest.Cluster(t) },
		"sentinel": func(t *testing.T) string { return redistest.Sentinel(t, "") },
	} {
		t.Run(name, func(t *testing.T) {
			url := start(t)
			open := func(t *testing.T) delta.Store {
				return delta.NewRedisStore(redistest.ClientAt(t, url), redistest.Prefix(t))
			}
			t.Run("staged", func(t *testing.T) { testStaged(t, open(t)) })
			t.Run("expiry", func(t *testing.T) { testStagedExpiry(t, open(t)) })
			t.Run("lock", func(t *testing.T) { testLock(t, open(t)) })
		})
	}
}
