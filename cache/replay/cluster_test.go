package replay_test

import (
	"testing"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/cache/replay"
)

// The Redis store keeps its contract on a real three-master Redis Cluster
// and behind a real Sentinel: every script touches one key, so none is
// refused with CROSSSLOT.
func TestStoresOnClusterAndSentinel(t *testing.T) {
	for name, start := range map[string]func(t *testing.T) string{
		"cluster":  func(t *testing.T) string { return redistest.Cluster(t) },
		"sentinel": func(t *testing.T) string { return redistest.Sentinel(t, "") },
	} {
		t.Run(name, func(t *testing.T) {
			url := start(t)
			storeContract(t, func(t *testing.T) replay.Store {
				return replay.NewRedis(redistest.ClientAt(t, url), redistest.Prefix(t))
			})
		})
	}
}
