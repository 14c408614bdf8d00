// Package cache is the LoadTable cache: L1 in process memory (an LRU
// bounded by entries and bytes), L2 in Redis (shared by every replica,
// optional), and an invalidation bus (Redis pub/sub) so a write through one
// replica evicts the table everywhere.
package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Entry is one cached LoadTable response (stored in Redis as
// encodeEntry frames it).
type Entry struct {
	Body        []byte
	ContentType string
	// MetadataLocation is the metadata file the response describes.
	MetadataLocation string
	// BackendETag is the backend's own ETag, for revalidation.
	BackendETag string
	// ETag is what lakegate answers the entry with, computed once when it
	// is stored rather than on every hit.
	ETag string
	// Credentials marks a response that carries vended credentials or
	// secret config; such entries are keyed by principal.
	Credentials bool
	Stored      time.Time
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
	// Revalidated counts revalidations the backend answered 304: the
	// cached copy was served (they are among Misses, which count lookups
	// that had to ask the backend).
	Revalidated   int64 `json:"revalidated"`
	NotModified   int64 `json:"not_modified"`
	Invalidations int64 `json:"invalidations"`
	Stale         int64 `json:"stale"`
	// L2Refused counts entries Redis would not store (maxmemory reached
	// under noeviction): those are served from L1 and the backend.
	L2Refused int64 `json:"l2_refused"`
	L1Entries int   `json:"l1_entries"`
	L1Bytes   int64 `json:"l1_bytes"`
}

// drop is one L1 invalidation: its generation and normalized prefix.
type drop struct {
	gen    uint64
	prefix string
}

// Cache is safe for concurrent use.
type Cache struct {
	cfg Config
	log *zap.Logger

	mu    sync.Mutex // guards bytes accounting with the LRU, recent and lookup
	l1    *lru.Cache[string, *Entry]
	bytes int64
	// lookup is where Get spells an L1 key to look it up: the LRU's Get
	// keeps no key, so a hit costs no string of its own.
	lookup []byte
	gen    atomic.Uint64 // bumped (under mu) by every L1 drop, local or from the bus
	// recent are the latest drops, at index gen % len: what PutIf checks.
	recent [64]drop

	// fill is held shared by a PutIf until its Redis write is done, and
	// taken exclusively by an invalidation (local or from the bus) to bump
	// gen: a fill that passed its check before has then landed in Redis,
	// where the invalidation deletes it; one after it fails the check.
	fill sync.RWMutex

	rdb    redis.UniversalClient // nil: memory only
	l2Down atomic.Bool
	// recovering: a recoverL2 loop runs (at most one).
	recovering atomic.Bool
	sub        *redis.PubSub
	done       chan struct{}
	id         string // tags this cache's bus messages, which it ignores

	acksMu sync.Mutex
	acks   map[string]chan struct{} // by message: one send per replica's ack

	// pending holds invalidations Redis missed while it was down; they are
	// applied (and published) before Redis is used again.
	pendMu     sync.Mutex
	pending    map[string]bool
	pendingAll bool // too many to remember: drop every table from L2

	l1Hits, l2Hits, misses, revalidations, revalidated, notModified, invalidations, stale, l2Refused atomic.Int64
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
	c := &Cache{cfg: cfg, log: log, rdb: rdb, done: make(chan struct{}), pending: map[string]bool{}, id: newID(), acks: map[string]chan struct{}{}}
	l1, err := lru.NewWithEvict(cfg.MaxEntries, func(_ string, e *Entry) { c.bytes -= e.size() })
	if err != nil {
		return nil, err
	}
	c.l1 = l1
	if rdb != nil {
		// The invalidation channel first: on a Redis Cluster, go-redis
		// subscribes on the master of the first channel's slot, which is
		// where bus publishes.
		c.sub = rdb.Subscribe(context.Background(), c.channel(), c.ackChannel(c.id))
		// Wait (briefly) for both subscriptions: every later confirmation
		// is a reconnection, after which L1 may hold what the bus missed.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		for {
			msg, err := c.sub.Receive(ctx)
			if err != nil {
				c.markDown(err)
				break
			}
			if s, ok := msg.(*redis.Subscription); ok && s.Count >= 2 {
				break
			}
		}
		cancel()
		go c.listen()
	}
	return c, nil
}

func (c *Cache) channel() string { return c.cfg.Prefix + "cache:invalidate" }

// ackChannel is where the cache with that id hears other replicas confirm
// they applied its invalidation.
func (c *Cache) ackChannel(id string) string { return c.cfg.Prefix + "cache:ack:" + id }

// hashKey is the Redis hash holding every variant of one table.
func (c *Cache) hashKey(table string) string { return c.cfg.Prefix + "lt:" + table }

// Get looks the keys (variants of one table, by preference) up in L1,
// then in L2 in one round trip (filling L1 on an L2 hit), and returns the
// first found: an L1 hit never waits on Redis.
func (c *Cache) Get(ctx context.Context, table string, keys ...string) (*Entry, Level) {
	c.mu.Lock()
	for _, key := range keys {
		c.lookup = append(append(append(c.lookup[:0], table...), 0), key...)
		// A view of lookup, valid while mu is held: Get only compares it.
		if e, ok := c.l1.Get(unsafe.String(unsafe.SliceData(c.lookup), len(c.lookup))); ok {
			c.mu.Unlock()
			return e, L1
		}
	}
	c.mu.Unlock()
	gen := c.Generation()
	if key, e := c.getL2(ctx, table, keys); e != nil {
		c.putL1(table, key, e, gen)
		return e, L2
	}
	return nil, Miss
}

// Put stores e in L1 and L2.
func (c *Cache) Put(ctx context.Context, table, key string, e *Entry) {
	c.PutIf(ctx, table, key, e, c.Generation())
}

// Generation is a token to take before asking the backend for what will
// be stored with PutIf.
func (c *Cache) Generation() uint64 { return c.gen.Load() }

// PutIf stores e in L1 and L2 unless an invalidation of the table ran
// (here, or on another replica as far as the bus has told) since gen was
// taken: e may then predate a write. It reports whether e was stored.
func (c *Cache) PutIf(ctx context.Context, table, key string, e *Entry, gen uint64) bool {
	c.fill.RLock()
	defer c.fill.RUnlock()
	if !c.putL1(table, key, e, gen) {
		return false
	}
	if !c.usable() {
		return true
	}
	raw, err := encodeEntry(e)
	if err != nil {
		return true
	}
	pipe := c.rdb.TxPipeline()
	pipe.HSet(ctx, c.hashKey(table), key, raw)
	pipe.Expire(ctx, c.hashKey(table), c.cfg.L2TTL)
	_, err = pipe.Exec(ctx)
	if redis.IsOOMError(err) {
		// Redis is up but full (noeviction): not an outage. Its deletes
		// and publishes, the invalidations, still work.
		c.l2Refused.Add(1)
		return true
	}
	c.markDown(err)
	return true
}

func (c *Cache) putL1(table, key string, e *Entry, gen uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	fits := e.size() <= c.cfg.MaxBytes
	if now := c.gen.Load(); now != gen {
		if now-gen > uint64(len(c.recent)) {
			return false // too many since: assume the table was among them
		}
		for g := gen + 1; g <= now; g++ {
			if d := c.recent[g%uint64(len(c.recent))]; d.gen != g || strings.HasPrefix(table+"\x00", d.prefix) {
				return false
			}
		}
	}
	k := table + "\x00" + key
	if !fits {
		// Larger than all of L1: adding it would evict everything, then
		// itself. Its older copy goes, so L1 never serves that.
		c.l1.Remove(k)
		return true
	}
	if old, ok := c.l1.Peek(k); ok {
		c.bytes -= old.size()
	}
	c.l1.Add(k, e)
	c.bytes += e.size()
	for c.bytes > c.cfg.MaxBytes && c.l1.Len() > 0 {
		c.l1.RemoveOldest()
	}
	return true
}

func (c *Cache) getL2(ctx context.Context, table string, keys []string) (string, *Entry) {
	if len(keys) == 0 || !c.usable() {
		return "", nil
	}
	vals, err := c.rdb.HMGet(ctx, c.hashKey(table), keys...).Result()
	if err != nil {
		c.markDown(err)
		return "", nil
	}
	for i, v := range vals {
		raw, ok := v.(string)
		if !ok {
			continue // not there
		}
		if e, err := decodeEntry(raw); err == nil {
			return keys[i], e
		}
	}
	return "", nil
}

// markDown records a failed Redis call: Redis is skipped (logged once)
// until the recovery loop finds it back. Only the loop marks it up again,
// once the invalidations it missed are delivered.
func (c *Cache) markDown(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	if !c.l2Down.Swap(true) {
		c.log.Warn("redis unavailable: the cache serves from memory until it returns", zap.Error(err))
	}
	// One recovery loop at a time: two overlapping probes could mark Redis
	// up while the other still delivers the missed invalidations.
	if c.recovering.CompareAndSwap(false, true) {
		go c.recoverL2()
	}
}

// probeEvery is how often a down Redis is probed.
const probeEvery = 250 * time.Millisecond

// recoverL2 probes a down Redis in the background until it answers and
// the invalidations this replica missed are delivered. It runs whether or
// not requests come: a replica that saw a write while Redis was away must
// tell the others when it returns, not on its next write (they would serve
// the table stale until then).
func (c *Cache) recoverL2() {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		for c.l2Down.Load() {
			select {
			case <-c.done:
				c.recovering.Store(false)
				return
			case <-t.C:
				c.probe()
			}
		}
		c.recovering.Store(false)
		// Redis may have gone down again after the last check, while this
		// loop still held the flag: carry on then, else markDown's caller
		// would find a loop running and none would run.
		if !c.l2Down.Load() || !c.recovering.CompareAndSwap(false, true) {
			return
		}
	}
}

// usable tells whether to use Redis now. While it is down, requests never
// wait on it (recoverL2 probes it).
func (c *Cache) usable() bool {
	return c.rdb != nil && !c.l2Down.Load()
}

// probe checks a down Redis and, when it answers, applies the
// invalidations it missed before marking it up.
func (c *Cache) probe() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c.eachMaster(ctx, func(ctx context.Context, node redis.Cmdable) error { return node.Ping(ctx).Err() }) != nil {
		return
	}
	for {
		c.pendMu.Lock()
		all, todo := c.pendingAll, c.pending
		if !all && len(todo) == 0 {
			if c.l2Down.Swap(false) {
				c.log.Info("redis is back: the shared cache is in use again")
			}
			c.pendMu.Unlock()
			return
		}
		c.pendingAll, c.pending = false, map[string]bool{}
		c.pendMu.Unlock()
		if all {
			todo = map[string]bool{"": true}
		}
		for prefix := range todo {
			err := c.dropL2(ctx, prefix)
			if err == nil {
				err = c.publish(ctx, prefix, false)
			}
			if err != nil { // still down: keep what is left for the next probe
				c.pendMu.Lock()
				for p := range todo {
					c.remember(p)
				}
				c.pendMu.Unlock()
				return
			}
			delete(todo, prefix)
		}
	}
}

// maxPending bounds the invalidations remembered while Redis is down.
const maxPending = 10000

// remember records an invalidation for when Redis is back ("": all).
func (c *Cache) remember(prefix string) {
	if prefix == "" || len(c.pending) >= maxPending {
		c.pendingAll = true
		return
	}
	c.pending[prefix] = true
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
// in Redis, and on every replica through the bus. A write has happened by
// now, so the client going away does not cut the invalidation short, and
// while Redis is down it is remembered and applied when Redis is back.
func (c *Cache) Invalidate(ctx context.Context, prefix string) {
	ctx = context.WithoutCancel(ctx)
	c.invalidations.Add(1)
	c.fill.Lock()
	c.dropL1(prefix)
	c.fill.Unlock()
	if c.rdb == nil {
		return
	}
	c.pendMu.Lock()
	down := c.l2Down.Load()
	if down {
		c.remember(prefix)
	}
	c.pendMu.Unlock()
	if down {
		c.usable() // probe
		return
	}
	err := c.dropL2(ctx, prefix)
	if err == nil {
		err = c.publish(ctx, prefix, true)
	}
	if err != nil {
		c.pendMu.Lock()
		c.remember(prefix)
		c.markDown(err)
		c.pendMu.Unlock()
	}
}

// dropL1 drops the tables under prefix from L1; "" drops everything.
func (c *Cache) dropL1(prefix string) {
	if prefix != "" && !strings.HasSuffix(prefix, "\x00") {
		prefix += "\x00" // one table, not every table whose name it begins
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gen.Add(1)
	c.recent[g%uint64(len(c.recent))] = drop{g, prefix}
	for _, k := range c.l1.Keys() {
		if strings.HasPrefix(k, prefix) {
			c.l1.Remove(k)
		}
	}
}

// dropL2 deletes the tables under prefix from Redis; "" deletes them all.
func (c *Cache) dropL2(ctx context.Context, prefix string) error {
	if prefix != "" && !strings.HasSuffix(prefix, "\x00") { // one table: one hash
		return c.rdb.Del(ctx, c.hashKey(prefix)).Err()
	}
	match := escapeGlob(c.hashKey(prefix)) + "*"
	return c.eachMaster(ctx, func(ctx context.Context, node redis.Cmdable) error {
		iter := node.Scan(ctx, 0, match, 256).Iterator()
		for iter.Next(ctx) {
			// Through c.rdb, which finds the key's node even while its
			// slot migrates; SCAN has no such routing.
			if err := c.rdb.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	})
}

// ackWait bounds how long an invalidation waits for the other replicas
// to confirm they applied it.
const ackWait = 250 * time.Millisecond

// publish tells the other replicas, through the bus, to drop prefix and,
// with wait, returns once they all confirmed it (or after ackWait): a
// Redis PUBLISH returns before its subscribers act on it, and a client
// told its write is done may read through another replica at once.
func (c *Cache) publish(ctx context.Context, prefix string, wait bool) error {
	msgID := ""
	var acked chan struct{}
	if wait {
		msgID, acked = newID(), make(chan struct{}, 16)
		c.acksMu.Lock()
		c.acks[msgID] = acked
		c.acksMu.Unlock()
		defer func() {
			c.acksMu.Lock()
			delete(c.acks, msgID)
			c.acksMu.Unlock()
		}()
	}
	bus, err := c.bus(ctx)
	if err != nil {
		return err
	}
	n, err := bus.Publish(ctx, c.channel(), c.id+"\x01"+msgID+"\x01"+prefix).Result()
	if err != nil || !wait {
		return err
	}
	timeout := time.NewTimer(ackWait)
	defer timeout.Stop()
	for got := int64(0); got < n-1; got++ { // every subscriber but this cache
		select {
		case <-acked:
		case <-timeout.C:
			c.log.Warn("replicas did not confirm an invalidation in time; they may serve it stale until they do",
				zap.Int64("confirmed", got), zap.Int64("replicas", n-1))
			return nil
		}
	}
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func escapeGlob(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// listen applies other replicas' invalidations to L1. A table's hash is
// deleted from Redis once more on receipt: a fill this replica had in
// flight may have stored the old response after the writer deleted it.
// After a reconnection, whatever the bus missed while it was down may be
// in L1, so L1 is emptied.
func (c *Cache) listen() {
	ch := c.sub.ChannelWithSubscriptions()
	for {
		select {
		case <-c.done:
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			switch m := msg.(type) {
			case *redis.Message:
				if m.Channel != c.channel() {
					c.acked(m.Payload)
					continue
				}
				from, rest, ok := strings.Cut(m.Payload, "\x01")
				msgID, prefix, ok2 := strings.Cut(rest, "\x01")
				if !ok || !ok2 || from == c.id {
					continue // this cache's own: applied before it was sent
				}
				c.fill.Lock()
				c.dropL1(prefix)
				c.fill.Unlock()
				if prefix != "" && !strings.HasSuffix(prefix, "\x00") && c.usable() {
					c.markDown(c.rdb.Del(context.Background(), c.hashKey(prefix)).Err())
				}
				if msgID != "" && c.usable() {
					c.markDown(c.ack(from, msgID))
				}
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					c.dropL1("")
				}
			}
		}
	}
}

// acked passes another replica's confirmation to the waiting publish.
func (c *Cache) acked(msgID string) {
	c.acksMu.Lock()
	ch := c.acks[msgID]
	c.acksMu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
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

// CountRevalidation, CountRevalidated, CountNotModified and CountStale
// record events.
func (c *Cache) CountRevalidation() { c.revalidations.Add(1) }
func (c *Cache) CountRevalidated()  { c.revalidated.Add(1) }
func (c *Cache) CountNotModified()  { c.notModified.Add(1) }
func (c *Cache) CountStale()        { c.stale.Add(1) }

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	n, b := c.l1.Len(), c.bytes
	c.mu.Unlock()
	return Stats{
		L1Hits: c.l1Hits.Load(), L2Hits: c.l2Hits.Load(), Misses: c.misses.Load(),
		Revalidations: c.revalidations.Load(), Revalidated: c.revalidated.Load(), NotModified: c.notModified.Load(),
		Invalidations: c.invalidations.Load(), Stale: c.stale.Load(), L2Refused: c.l2Refused.Load(),
		L1Entries: n, L1Bytes: b,
	}
}

// Close stops listening to the bus (the Redis client is the caller's).
func (c *Cache) Close() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	close(c.done)
	if c.sub != nil {
		return c.sub.Close()
	}
	return nil
}
