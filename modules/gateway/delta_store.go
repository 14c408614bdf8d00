package gateway

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/lakegate/lakegate/translate/delta"
)

// deltaStore returns the Delta translator's shared store: Redis when the
// app has one (replicas then share staging tables and update locks), else
// process memory kept in the pool across config reloads. It returns the
// pool key to release.
func (a *App) deltaStore() (delta.Store, string, error) {
	if a.Redis != "" {
		client, err := redisClient(a.Redis)
		if err != nil {
			return nil, "", err
		}
		return delta.NewRedisStore(client, "lakegate:delta:"), redisPoolKey(a.Redis), nil
	}
	v, _, err := sharedPool.LoadOrNew("delta|memory", func() (caddy.Destructor, error) {
		return pooledDeltaStore{delta.NewMemoryStore()}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(pooledDeltaStore).MemoryStore, "delta|memory", nil
}

type pooledDeltaStore struct{ *delta.MemoryStore }

func (pooledDeltaStore) Destruct() error { return nil }
