// Package cache is the LoadTable cache: L1 in process memory (an LRU
// bounded by entries and bytes), L2 in Redis (shared by every replica,
// optional), and an invalidation bus (Redis pub/sub) so a write through one
// replica evicts the table everywhere.
package cache

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Entry is one cached LoadTable response.
type Entry struct {
	Body        []byte `json:"body"`
	ContentType string `json:"content_type,omitempty"`
	// MetadataLocation is the metadata file the response describes.
	MetadataLocation string `json:"metadata_location"`
	// BackendETag is the backend's own ETag, for revalidation.
	BackendETag string `json:"backend_etag,omitempty"`
	// Credentials marks a response that carries vended credentials or
	// secret config; such entries are keyed by principal.
	Credentials bool      `json:"credentials,omitempty"`
	Stored      time.Time `json:"stored"`
}

func (e *Entry) size() int64 {
	return int64(len(e.Body) + len(e.MetadataLocation) + len(e.BackendETag) + 128)
}

// Config bounds the cache.
type Config struct {
	// MaxEntries and MaxBytes bound L1 (defaults 10,000 and 256 MiB).
	MaxEntries int
	MaxBytes   int64
	// L2TTL is how long entries live in Redis (default 1h).
	L2TTL time.Duration
	// Prefix namespaces Redis keys and the bus channel (default "lakegate:").
	Prefix string
}

// Level tells where a hit came from.
type Level int

// Cache levels.
const (
	Miss Level = iota
	L1
	L2
)

// Stats are the cache's counters.
type Stats struct {
	L1Hits        int64 `json:"l1_hits"`
	L2Hits        int64 `json:"l2_hits"`
	Misses        int64 `json:"misses"`
	Revalidations int64 `json:"revalidations"`
	NotModified   int64 `json:"not_modified"`
	Invalidations int64 `json:"invalidations"`
	Stale         int64 `json:"stale"`
	L1Entries     int   `json:"l1_entries"`
	L1Bytes       int64 `json:"l1_bytes"`
}

// Cache is safe for concurrent use.
type Cache struct {
	cfg Config
	log *zap.Logger

	mu    sync.Mutex // guards bytes accounting with the LRU
	l1    *lru.Cache[string, *Entry]
	bytes int64

	rdb    redis.UniversalClient // nil: memory only
	l2Down atomic.Bool
	sub    *redis.PubSub
	done   chan struct{}

	lastProbe atomic.Int64 // unix nanos of the last health check of a down Redis

	l1Hits, l2Hits, misses, revalidations, notModified, invalidations, stale atomic.Int64
}

// New returns a cache; rdb may be nil for memory only. With Redis, the
// cache subscribes to the invalidation bus until Close.
func New(cfg Config, rdb redis.UniversalClient, log *zap.Logger) (*Cache, error) {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 10000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 256 << 20
	}
	if cfg.L2TTL <= 0 {
		cfg.L2TTL = time.Hour
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "lakegate:"
	}
	if log == nil {
		log = zap.NewNop()
	}
	c := &Cache{cfg: cfg, log: log, rdb: rdb, done: make(chan struct{})}
	l1, err := lru.NewWithEvict(cfg.MaxEntries, func(_ string, e *Entry) { c.bytes -= e.size() })
	if err != nil {
		return nil, err
	}
	c.l1 = l1
	if rdb != nil {
		c.sub = rdb.Subscribe(context.Background(), c.channel())
		go c.listen()
	}
	return c, nil
}

func (c *Cache) channel() string { return c.cfg.Prefix + "cache:invalidate" }

// hashKey is the Redis hash holding every variant of one table.
func (c *Cache) hashKey(table string) string { return c.cfg.Prefix + "lt:" + table }

// Get looks key up in L1, then L2 (filling L1 on an L2 hit).
func (c *Cache) Get(ctx context.Context, table, key string) (*Entry, Level) {
	c.mu.Lock()
	e, ok := c.l1.Get(table + "\x00" + key)
	c.mu.Unlock()
	if ok {
		return e, L1
	}
	if e := c.getL2(ctx, table, key); e != nil {
		c.putL1(table+"\x00"+key, e)
		return e, L2
	}
	return nil, Miss
}

// Put stores e in L1 and L2.
func (c *Cache) Put(ctx context.Context, table, key string, e *Entry) {
	c.putL1(table+"\x00"+key, e)
	if c.rdb == nil || c.l2Down.Load() && !c.probe(ctx) {
		return
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return
	}
	pipe := c.rdb.TxPipeline()
	pipe.HSet(ctx, c.hashKey(table), key, raw)
	pipe.Expire(ctx, c.hashKey(table), c.cfg.L2TTL)
	_, err = pipe.Exec(ctx)
	c.l2Result(err)
}

func (c *Cache) putL1(k string, e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.l1.Peek(k); ok {
		c.bytes -= old.size()
	}
	c.l1.Add(k, e)
	c.bytes += e.size()
	for c.bytes > c.cfg.MaxBytes && c.l1.Len() > 0 {
		c.l1.RemoveOldest()
	}
}

func (c *Cache) getL2(ctx context.Context, table, key string) *Entry {
	if c.rdb == nil || c.l2Down.Load() && !c.probe(ctx) {
		return nil
	}
	raw, err := c.rdb.HGet(ctx, c.hashKey(table), key).Bytes()
	if errors.Is(err, redis.Nil) {
		c.l2Result(nil)
		return nil
	}
	c.l2Result(err)
	if err != nil {
		return nil
	}
	var e Entry
	if json.Unmarshal(raw, &e) != nil {
		return nil
	}
	return &e
}

// l2Result tracks Redis health: logged once when it goes, once when back.
func (c *Cache) l2Result(err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		if !c.l2Down.Swap(true) {
			c.log.Warn("redis unavailable: the cache serves from memory until it returns", zap.Error(err))
		}
		return
	}
	if err == nil && c.l2Down.Swap(false) {
		c.log.Info("redis is back: the shared cache is in use again")
	}
}

// probe checks a down Redis at most once a second.
func (c *Cache) probe(ctx context.Context) bool {
	now := time.Now().UnixNano()
	last := c.lastProbe.Load()
	if now-last < int64(time.Second) || !c.lastProbe.CompareAndSwap(last, now) {
		return false
	}
	c.l2Result(c.rdb.Ping(ctx).Err())
	return !c.l2Down.Load()
}

// TableKey names one table of one catalog.
func TableKey(catalog string, namespace []string, table string) string {
	return NamespacePrefix(catalog, namespace) + table
}

// NamespacePrefix covers every table directly in one namespace.
func NamespacePrefix(catalog string, namespace []string) string {
	return CatalogPrefix(catalog) + strings.Join(namespace, "\x1f") + "\x00"
}

// CatalogPrefix covers every table of one catalog.
func CatalogPrefix(catalog string) string { return catalog + "\x00" }

// Invalidate drops every cached variant of the tables under prefix (a
// table key, or a namespace or catalog prefix ending in "\x00"), here,
// in Redis, and on every replica through the bus.
func (c *Cache) Invalidate(ctx context.Context, prefix string) {
	c.invalidations.Add(1)
	c.dropL1(prefix)
	if c.rdb == nil {
		return
	}
	err := c.dropL2(ctx, prefix)
	if err == nil {
		err = c.rdb.Publish(ctx, c.channel(), prefix).Err()
	}
	c.l2Result(err)
}

func (c *Cache) dropL1(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.l1.Keys() {
		if strings.HasPrefix(k, prefix) {
			c.l1.Remove(k)
		}
	}
}

func (c *Cache) dropL2(ctx context.Context, prefix string) error {
	if !strings.HasSuffix(prefix, "\x00") { // one table: one hash
		return c.rdb.Del(ctx, c.hashKey(prefix)).Err()
	}
	iter := c.rdb.Scan(ctx, 0, escapeGlob(c.hashKey(prefix))+"*", 256).Iterator()
	for iter.Next(ctx) {
		if err := c.rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return err
		}
	}
	return iter.Err()
}

func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// listen applies other replicas' invalidations to L1.
func (c *Cache) listen() {
	ch := c.sub.Channel()
	for {
		select {
		case <-c.done:
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			c.dropL1(msg.Payload)
		}
	}
}

// Count records an outcome for Stats.
func (c *Cache) Count(l Level) {
	switch l {
	case L1:
		c.l1Hits.Add(1)
	case L2:
		c.l2Hits.Add(1)
	default:
		c.misses.Add(1)
	}
}

// CountRevalidation, CountNotModified and CountStale record events.
func (c *Cache) CountRevalidation() { c.revalidations.Add(1) }
func (c *Cache) CountNotModified()  { c.notModified.Add(1) }
func (c *Cache) CountStale()        { c.stale.Add(1) }

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	n, b := c.l1.Len(), c.bytes
	c.mu.Unlock()
	return Stats{
		L1Hits: c.l1Hits.Load(), L2Hits: c.l2Hits.Load(), Misses: c.misses.Load(),
		Revalidations: c.revalidations.Load(), NotModified: c.notModified.Load(),
		Invalidations: c.invalidations.Load(), Stale: c.stale.Load(), L1Entries: n, L1Bytes: b,
	}
}

// Close stops listening to the bus (the Redis client is the caller's).
func (c *Cache) Close() error {
	close(c.done)
	if c.sub != nil {
		return c.sub.Close()
	}
	return nil
}
