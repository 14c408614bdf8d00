package gateway

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/internal/redisurl"
	"github.com/lakegate/lakegate/policies"
)

// sharedPool keeps state that must survive a config reload: Redis clients
// (by URL), the in-process replay store (keys in flight during a reload
// must stay claimed) and the counters the status page shows (a reload
// must not reset them: Prometheus' counters carry on too).
var sharedPool = caddy.NewUsagePool()

type pooledRedis struct{ redis.UniversalClient }

func (p pooledRedis) Destruct() error { return p.Close() }

type pooledReplay struct{ replay.Store }

func (p pooledReplay) Destruct() error { return p.Close() }

// redisPoolKey is the shared pool's key of the client for url.
func redisPoolKey(url string) string { return "redis|" + url }

// redisClient returns the pooled client for url; the caller must release
// the key redisPoolKey(url) when done.
func redisClient(url string) (redis.UniversalClient, error) {
	v, _, err := sharedPool.LoadOrNew(redisPoolKey(url), func() (caddy.Destructor, error) {
		t, err := redisurl.Parse(url)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		failFast(t)
		return pooledRedis{t.NewClient()}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(pooledRedis).UniversalClient, nil
}

// redisTimeout bounds each Redis dial, read and write.
const redisTimeout = 500 * time.Millisecond

// failFast tunes t so a Redis that is gone costs a request about a second,
// not go-redis's default seconds of retries: the cache falls back to
// memory and keyed writes get 503 instead of every request waiting.
func failFast(t redisurl.Target) {
	switch {
	case t.Cluster != nil:
		o := t.Cluster
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
		// The cluster client is its own retry loop: it retries a failed
		// command on the same node, then on another, and follows the
		// MOVED/ASK redirects of a resharding or failover, MaxRedirects
		// times in all. Retries inside each node's client would multiply
		// that, so they are off (as go-redis defaults them for clusters);
		// three redirects follow a slot moved mid-migration and bound a
		// frozen master at ~2 s.
		o.MaxRetries = -1
		if o.MaxRedirects == 0 {
			o.MaxRedirects = 3
		}
	case t.Failover != nil:
		o := t.Failover
		o.MaxRetries = 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
	default:
		o := t.Simple
		o.MaxRetries = 1
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = redisTimeout, redisTimeout, redisTimeout
	}
}

// checkRedisURLs fails a config whose Redis URLs do not parse, before any
// catalog needs them (a client is only opened for a catalog that uses
// Redis, and a typo would otherwise show only then, or never).
func (a *App) checkRedisURLs() error {
	for _, f := range []struct{ what, url string }{{"redis", a.Redis}, {"replay_redis", a.ReplayRedis}} {
		if f.url == "" {
			continue
		}
		if _, err := redisurl.Parse(f.url); err != nil {
			return fmt.Errorf("%s: %w", f.what, err)
		}
	}
	return nil
}

// checkRedisURL checks a URL as the Caddyfile gives it: secrets are still
// placeholders then, and a URL that is one placeholder as a whole is only
// known at Provision.
func checkRedisURL(url string) error {
	if url == "" || isPlaceholder(url) {
		return nil
	}
	_, err := redisurl.Parse(url)
	return err
}

// replayStore returns the app's replay store: Redis when a Redis URL is
// configured (shared by replicas), else process memory. It also returns
// the pool key to release.
func (a *App) replayStore() (replay.Store, string, error) {
	url := cmp.Or(a.ReplayRedis, a.Redis)
	if url != "" {
		client, err := redisClient(url)
		if err != nil {
			return nil, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := client.Ping(ctx).Err(); err != nil {
			// Not fatal: keyed writes get 503 until Redis answers.
			a.log.Warn("redis is not answering yet; keyed writes will get 503 until it does")
		} else if policy, evicting := evictionPolicy(ctx, client); evicting {
			a.log.Warn("the replay store's Redis may evict Idempotency-Key records before their lifetime, "+
				"and a retried write could then apply twice: give it maxmemory-policy noeviction "+
				"(or put replay records on their own Redis with replay_redis)",
				zap.String("maxmemory_policy", policy))
		}
		return replay.NewRedis(client, "lakegate:replay:"), redisPoolKey(url), nil
	}
	v, _, err := sharedPool.LoadOrNew("replay|memory", func() (caddy.Destructor, error) {
		return pooledReplay{replay.NewMemory()}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(pooledReplay).Store, "replay|memory", nil
}

// pooledCounters are counters kept across reloads; they hold nothing to
// close.
type pooledCounters[T any] struct{ counters *T }

func (pooledCounters[T]) Destruct() error { return nil }

// sharedCounters are the counters pooled under key, made on first use; the
// app holds them until its Cleanup. A reload's new config takes them
// before the old one lets go, so they count on; they start from zero again
// only once no config has used them.
func sharedCounters[T any](a *App, key string) (*T, error) {
	v, _, err := sharedPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		return pooledCounters[T]{new(T)}, nil
	})
	if err != nil {
		return nil, err
	}
	a.sharedKeys = append(a.sharedKeys, key)
	return v.(pooledCounters[T]).counters, nil
}

// policyCounters are the policy engine's counters (nil without a policy).
func (a *App) policyCounters() (*policies.Counters, error) {
	if a.Policy == nil {
		return nil, nil
	}
	return sharedCounters[policies.Counters](a, "counters|policy")
}

// pooledCache holds its own reference to the Redis client it uses.
type pooledCache struct {
	*cache.Cache
	redisKey string
}

func (p pooledCache) Destruct() error {
	err := p.Close()
	if p.redisKey != "" {
		_, _ = sharedPool.Delete(p.redisKey)
	}
	return err
}

// sharedCache opens the app's LoadTable cache once: L1 in memory, L2 and
// the invalidation bus in Redis when configured. It lives in the pool so
// a config reload keeps what is cached.
func (a *App) sharedCache() (*cache.Cache, error) {
	if a.cache != nil {
		return a.cache, nil
	}
	var limits CacheLimits
	if a.CacheLimits != nil {
		limits = *a.CacheLimits
	}
	key := fmt.Sprintf("cache|%s|%d|%d", a.Redis, limits.MaxEntries, limits.MaxBytes)
	v, _, err := sharedPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		var rdb redis.UniversalClient
		redisKey := ""
		if a.Redis != "" {
			client, err := redisClient(a.Redis)
			if err != nil {
				return nil, err
			}
			rdb, redisKey = client, redisPoolKey(a.Redis)
		}
		c, err := cache.New(cache.Config{MaxEntries: limits.MaxEntries, MaxBytes: limits.MaxBytes}, rdb, a.log.Named("cache"))
		return pooledCache{c, redisKey}, err
	})
	if err != nil {
		return nil, err
	}
	a.cache = v.(pooledCache).Cache
	a.sharedKeys = append(a.sharedKeys, key)
	return a.cache, nil
}

// pooledJournal holds its own reference to the Redis client it uses.
type pooledJournal struct {
	*commitlog.Journal
	redisKey string
}

func (p pooledJournal) Destruct() error {
	err := p.Close()
	if p.redisKey != "" {
		_, _ = sharedPool.Delete(p.redisKey)
	}
	return err
}

// sharedJournal opens the app's record of recent commits once: in Redis
// when the gateway has one (replicas then see each other's commits),
// else in process memory. It lives in the pool so a reload keeps it.
func (a *App) sharedJournal() (*commitlog.Journal, error) {
	if a.journal != nil {
		return a.journal, nil
	}
	url := cmp.Or(a.Redis, a.ReplayRedis)
	key := "commits|" + url
	v, _, err := sharedPool.LoadOrNew(key, func() (caddy.Destructor, error) {
		if url == "" {
			return pooledJournal{Journal: commitlog.NewJournal(commitlog.NewMemory(), a.log.Named("commits"))}, nil
		}
		client, err := redisClient(url)
		if err != nil {
			return nil, err
		}
		store := commitlog.NewRedis(client, "lakegate:commits:")
		return pooledJournal{commitlog.NewJournal(store, a.log.Named("commits")), redisPoolKey(url)}, nil
	})
	if err != nil {
		return nil, err
	}
	a.journal = v.(pooledJournal).Journal
	a.sharedKeys = append(a.sharedKeys, key)
	return a.journal, nil
}

// evictionPolicy reads Redis's maxmemory-policy and reports whether it may
// evict keys with a TTL (every policy but noeviction does, once maxmemory
// is reached). A Redis that refuses CONFIG (managed services often do)
// reports false: nothing is known.
//
// On a Redis Cluster each master has its own policy, and records live on
// every master: any evicting one is reported.
func evictionPolicy(ctx context.Context, client redis.UniversalClient) (string, bool) {
	cc, ok := client.(*redis.ClusterClient)
	if !ok {
		return nodeEvictionPolicy(ctx, client)
	}
	var mu sync.Mutex
	policy, evicting := "", false
	_ = cc.ForEachMaster(ctx, func(ctx context.Context, master *redis.Client) error {
		p, ev := nodeEvictionPolicy(ctx, master)
		mu.Lock()
		defer mu.Unlock()
		if ev || policy == "" {
			policy, evicting = p, evicting || ev
		}
		return nil
	})
	return policy, evicting
}

func nodeEvictionPolicy(ctx context.Context, client redis.Cmdable) (string, bool) {
	cfg, err := client.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		return "", false
	}
	policy := cfg["maxmemory-policy"]
	return policy, policy != "" && policy != "noeviction"
}
