package gateway

import (
	"context"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lakegate/lakegate/cache/replay"
)

// sharedPool keeps state that must survive a config reload: Redis clients
// (by URL) and the in-process replay store (keys in flight during a
// reload must stay claimed).
var sharedPool = caddy.NewUsagePool()

type pooledRedis struct{ redis.UniversalClient }

func (p pooledRedis) Destruct() error { return p.Close() }

type pooledReplay struct{ replay.Store }

func (p pooledReplay) Destruct() error { return p.Close() }

// redisClient returns the pooled client for url; the caller must release
// the key "redis|"+url when done.
func redisClient(url string) (redis.UniversalClient, error) {
	v, _, err := sharedPool.LoadOrNew("redis|"+url, func() (caddy.Destructor, error) {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		return pooledRedis{redis.NewClient(opts)}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(pooledRedis).UniversalClient, nil
}

// replayStore returns the app's replay store: Redis when a Redis URL is
// configured (shared by replicas), else process memory. It also returns
// the pool key to release.
func (a *App) replayStore() (replay.Store, string, error) {
	if a.Redis != "" {
		client, err := redisClient(a.Redis)
		if err != nil {
			return nil, "", err
		}
		if err := client.Ping(context.Background()).Err(); err != nil {
			// Not fatal: keyed writes get 503 until Redis answers.
			a.log.Warn("redis is not answering yet; keyed writes will get 503 until it does")
		}
		return replay.NewRedis(client, "lakegate:replay:"), "redis|" + a.Redis, nil
	}
	v, _, err := sharedPool.LoadOrNew("replay|memory", func() (caddy.Destructor, error) {
		return pooledReplay{replay.NewMemory()}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(pooledReplay).Store, "replay|memory", nil
}
