package cache_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/redistest"
)

var ctx = context.Background()

// open returns a cache on rdb (nil: memory only), closed with the test.
func open(t *testing.T, cfg cache.Config, rdb redis.UniversalClient) *cache.Cache {
	t.Helper()
	c, err := cache.New(cfg, rdb, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// client is a Redis client for url, closed with the test.
func client(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opts)
	require.NoError(t, c.Ping(ctx).Err())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// replicas are n caches, each with its own Redis client, sharing one
// Redis (redistest: real at LAKEGATE_TEST_REDIS, else miniredis) under a
// key prefix unique to the test.
func replicas(t *testing.T, n int, cfg cache.Config) []*cache.Cache {
	t.Helper()
	url := redistest.URL(t)
	cfg.Prefix = redistest.Prefix(t)
	out := make([]*cache.Cache, n)
	for i := range out {
		out[i] = open(t, cfg, client(t, url))
	}
	return out
}

func entry(body string) *cache.Entry {
	return &cache.Entry{
		Body: []byte(body), ContentType: "application/json",
		MetadataLocation: "file:///wh/" + body + ".metadata.json", Stored: time.Now(),
	}
}

func TestCacheL1Hit(t *testing.T) {
	for name, rdb := range map[string]func(t *testing.T) redis.UniversalClient{
		"memory": func(*testing.T) redis.UniversalClient { return nil },
		"redis":  func(t *testing.T) redis.UniversalClient { return redistest.Client(t) },
	} {
		t.Run(name, func(t *testing.T) {
			c := open(t, cache.Config{Prefix: redistest.Prefix(t)}, rdb(t))
			table := cache.TableKey("cat", []string{"ns"}, "t")
			e, level := c.Get(ctx, table, "v")
			assert.Nil(t, e)
			assert.Equal(t, cache.Miss, level)

			want := entry("one")
			c.Put(ctx, table, "v", want)
			got, level := c.Get(ctx, table, "v")
			require.NotNil(t, got)
			assert.Equal(t, cache.L1, level)
			assert.Equal(t, want.Body, got.Body)
			assert.Equal(t, want.MetadataLocation, got.MetadataLocation)

			// another variant of the same table is another entry
			e, level = c.Get(ctx, table, "other")
			assert.Nil(t, e)
			assert.Equal(t, cache.Miss, level)
			assert.Equal(t, 1, c.Stats().L1Entries)
		})
	}
}

// What one replica stores, another finds in Redis (L2) and then holds in
// its own memory (L1).
func TestCacheL2HitOnAnotherReplica(t *testing.T) {
	rs := replicas(t, 2, cache.Config{})
	a, b := rs[0], rs[1]
	table := cache.TableKey("cat", []string{"ns"}, "t")
	want := entry("shared")
	want.BackendETag = `W/"backend"`
	want.Credentials = true
	a.Put(ctx, table, "v", want)

	got, level := b.Get(ctx, table, "v")
	require.NotNil(t, got)
	assert.Equal(t, cache.L2, level)
	assert.Equal(t, want.Body, got.Body)
	assert.Equal(t, want.ContentType, got.ContentType)
	assert.Equal(t, want.MetadataLocation, got.MetadataLocation)
	assert.Equal(t, want.BackendETag, got.BackendETag)
	assert.True(t, got.Credentials)
	assert.WithinDuration(t, want.Stored, got.Stored, time.Millisecond, "freshness travels with the entry")

	_, level = b.Get(ctx, table, "v")
	assert.Equal(t, cache.L1, level, "an L2 hit fills L1")
	_, level = b.Get(ctx, table, "other")
	assert.Equal(t, cache.Miss, level)
}

func TestCacheByteBoundEvictsOldest(t *testing.T) {
	body := func(s string) string { return s + string(bytes.Repeat([]byte("x"), 1000)) }
	one := entry(body("a"))
	// room for two entries, not three
	c := open(t, cache.Config{MaxBytes: int64(len(one.Body)+len(one.MetadataLocation)+128)*2 + 500}, nil)
	table := cache.TableKey("cat", []string{"ns"}, "t")
	c.Put(ctx, table, "a", one)
	c.Put(ctx, table, "b", entry(body("b")))
	assert.Equal(t, 2, c.Stats().L1Entries)
	_, level := c.Get(ctx, table, "a") // a is now the most recently used
	assert.Equal(t, cache.L1, level)
	c.Put(ctx, table, "c", entry(body("c")))

	s := c.Stats()
	assert.Equal(t, 2, s.L1Entries)
	assert.LessOrEqual(t, s.L1Bytes, int64(len(one.Body)+len(one.MetadataLocation)+128)*2+500)
	_, level = c.Get(ctx, table, "b")
	assert.Equal(t, cache.Miss, level, "the least recently used entry went")
	_, level = c.Get(ctx, table, "a")
	assert.Equal(t, cache.L1, level)
	_, level = c.Get(ctx, table, "c")
	assert.Equal(t, cache.L1, level)

	// replacing an entry accounts for the old one
	before := c.Stats().L1Bytes
	c.Put(ctx, table, "c", entry(body("c")))
	assert.Equal(t, before, c.Stats().L1Bytes)

	// an entry larger than the whole bound is not kept
	c.Put(ctx, table, "huge", entry(string(bytes.Repeat([]byte("y"), 10000))))
	_, level = c.Get(ctx, table, "huge")
	assert.Equal(t, cache.Miss, level)
	assert.LessOrEqual(t, c.Stats().L1Bytes, int64(len(one.Body)+len(one.MetadataLocation)+128)*2+500)
}

func TestCacheEntryBound(t *testing.T) {
	c := open(t, cache.Config{MaxEntries: 3}, nil)
	key := func(i int) string { return cache.TableKey("cat", []string{"ns"}, fmt.Sprintf("t%d", i)) }
	for i := 0; i < 10; i++ {
		c.Put(ctx, key(i), "v", entry(fmt.Sprint(i)))
	}
	s := c.Stats()
	assert.Equal(t, 3, s.L1Entries)
	for i := 0; i < 7; i++ {
		_, level := c.Get(ctx, key(i), "v")
		assert.Equal(t, cache.Miss, level, "t%d", i)
	}
	var bytes int64
	for i := 7; i < 10; i++ {
		e, level := c.Get(ctx, key(i), "v")
		require.Equal(t, cache.L1, level, "t%d", i)
		bytes += int64(len(e.Body) + len(e.MetadataLocation) + len(e.BackendETag) + 128)
	}
	assert.Equal(t, bytes, c.Stats().L1Bytes, "evictions by count release their bytes")
}

// Invalidate drops a table, a namespace's tables, or a catalog's tables,
// from L1 and from L2, and nothing else.
func TestCacheInvalidatePrefixes(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	c := open(t, cache.Config{Prefix: prefix}, client(t, url))
	keys := map[string]string{
		"t":         cache.TableKey("cat", []string{"ns"}, "t"),
		"tx":        cache.TableKey("cat", []string{"ns"}, "tx"), // t is a prefix of its name
		"u":         cache.TableKey("cat", []string{"ns"}, "u"),
		"nested":    cache.TableKey("cat", []string{"ns", "sub"}, "t"),
		"nsx":       cache.TableKey("cat", []string{"nsx"}, "t"), // ns is a prefix of its name
		"glob":      cache.TableKey("cat", []string{"n*"}, "t[1]"),
		"other cat": cache.TableKey("cat2", []string{"ns"}, "t"),
		"catx":      cache.TableKey("catx", []string{"ns"}, "t"),
	}
	fill := func() {
		for name, k := range keys {
			c.Put(ctx, k, "v1", entry(name))
			c.Put(ctx, k, "v2", entry(name))
		}
	}
	// present tells, per table, whether L1 (c) or L2 (seen through a new
	// cache, whose L1 is empty) still holds it.
	present := func(level cache.Level) map[string]bool {
		probe := open(t, cache.Config{Prefix: prefix}, client(t, url))
		out := map[string]bool{}
		for name, k := range keys {
			var e *cache.Entry
			var l cache.Level
			if level == cache.L1 {
				e, l = c.Get(ctx, k, "v1")
			} else {
				e, l = probe.Get(ctx, k, "v2")
			}
			out[name] = e != nil
			if e != nil {
				assert.Equal(t, level, l, name)
			}
		}
		return out
	}
	check := func(gone ...string) {
		t.Helper()
		want := map[string]bool{}
		for name := range keys {
			want[name] = true
		}
		for _, g := range gone {
			want[g] = false
		}
		assert.Equal(t, want, present(cache.L1), "L1")
		assert.Equal(t, want, present(cache.L2), "L2")
	}

	fill()
	check()

	c.Invalidate(ctx, keys["t"])
	check("t")

	fill()
	c.Invalidate(ctx, cache.NamespacePrefix("cat", []string{"ns"}))
	check("t", "tx", "u")

	fill()
	c.Invalidate(ctx, keys["glob"])
	check("glob")

	fill()
	c.Invalidate(ctx, cache.NamespacePrefix("cat", []string{"n*"}))
	check("glob")

	fill()
	c.Invalidate(ctx, cache.CatalogPrefix("cat"))
	check("t", "tx", "u", "nested", "nsx", "glob")
	assert.Equal(t, int64(5), c.Stats().Invalidations)
}

// A write through one replica evicts the table from every replica's L1,
// through the bus, not only from Redis.
func TestCacheInvalidationBus(t *testing.T) {
	rs := replicas(t, 3, cache.Config{})
	a, b, c := rs[0], rs[1], rs[2]
	table := cache.TableKey("cat", []string{"ns"}, "t")
	other := cache.TableKey("cat", []string{"ns"}, "u")
	b.Put(ctx, table, "v", entry("b"))
	b.Put(ctx, other, "v", entry("b"))
	_, level := c.Get(ctx, table, "v")
	require.Equal(t, cache.L2, level)
	_, level = c.Get(ctx, table, "v")
	require.Equal(t, cache.L1, level)

	// the entry now lives in b's and c's L1; a's invalidation deletes it
	// from Redis too, so a Get finds nothing only once the bus dropped it,
	// which every replica confirmed before Invalidate returned
	start := time.Now()
	a.Invalidate(ctx, table)
	assert.Less(t, time.Since(start), 200*time.Millisecond, "confirmed, not timed out")
	for _, r := range []*cache.Cache{b, c} {
		e, _ := r.Get(ctx, table, "v")
		assert.Nil(t, e, "the bus dropped the table from another replica's L1")
	}
	_, level = b.Get(ctx, other, "v")
	assert.Equal(t, cache.L1, level, "other tables stay")

	// a catalog purge travels too
	b.Put(ctx, table, "v", entry("again"))
	a.Invalidate(ctx, cache.CatalogPrefix("cat"))
	e1, _ := b.Get(ctx, table, "v")
	e2, _ := b.Get(ctx, other, "v")
	assert.Nil(t, e1)
	assert.Nil(t, e2)

	// a replica that has gone does not hold writes up for more than a
	// moment
	require.NoError(t, c.Close())
	start = time.Now()
	a.Invalidate(ctx, table)
	assert.Less(t, time.Since(start), time.Second)
}

// With Redis gone the cache keeps working from memory, without errors or
// delays worth the name; once Redis is back (within the ~1s probe), L2 is
// used again.
func TestCacheRedisDownAndBack(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := client(t, "redis://"+m.Addr())
	c := open(t, cache.Config{Prefix: "lg:"}, rdb)
	table := cache.TableKey("cat", []string{"ns"}, "t")
	c.Put(ctx, table, "v", entry("before"))
	require.True(t, m.Exists("lg:lt:"+table))

	m.Close()
	e, level := c.Get(ctx, table, "v")
	require.NotNil(t, e)
	assert.Equal(t, cache.L1, level)
	c.Put(ctx, table, "w", entry("during")) // the first failure marks Redis down
	start := time.Now()
	for i := 0; i < 50; i++ {
		e, level = c.Get(ctx, table, "w")
		require.NotNil(t, e)
		assert.Equal(t, cache.L1, level)
		e, level = c.Get(ctx, table, fmt.Sprint("absent", i))
		assert.Nil(t, e)
		assert.Equal(t, cache.Miss, level)
		c.Put(ctx, cache.TableKey("cat", []string{"ns"}, fmt.Sprint("t", i)), "v", entry("during"))
	}
	c.Invalidate(ctx, cache.TableKey("cat", []string{"ns"}, "t0"))
	_, level = c.Get(ctx, cache.TableKey("cat", []string{"ns"}, "t0"), "v")
	assert.Equal(t, cache.Miss, level, "invalidation works in memory while Redis is down")
	assert.Less(t, time.Since(start), time.Second, "a down Redis is skipped, not waited on")

	require.NoError(t, m.Restart())
	later := cache.TableKey("cat", []string{"ns"}, "later")
	assert.Eventually(t, func() bool {
		c.Put(ctx, later, "v", entry("after"))
		return m.Exists("lg:lt:" + later)
	}, 5*time.Second, 50*time.Millisecond, "L2 is written again once Redis is back")

	// and read: a second cache on the same Redis finds the entry
	d := open(t, cache.Config{Prefix: "lg:"}, client(t, "redis://"+m.Addr()))
	_, level = d.Get(ctx, later, "v")
	assert.Equal(t, cache.L2, level)
}

func TestCacheStats(t *testing.T) {
	c := open(t, cache.Config{}, nil)
	table := cache.TableKey("cat", []string{"ns"}, "t")
	c.Put(ctx, table, "v", entry("x"))
	c.Count(cache.L1)
	c.Count(cache.L1)
	c.Count(cache.L2)
	c.Count(cache.Miss)
	c.Count(cache.Miss)
	c.Count(cache.Miss)
	c.CountRevalidation()
	c.CountNotModified()
	c.CountNotModified()
	c.CountStale()
	c.Invalidate(ctx, cache.CatalogPrefix("none"))
	s := c.Stats()
	assert.Equal(t, cache.Stats{
		L1Hits: 2, L2Hits: 1, Misses: 3, Revalidations: 1, NotModified: 2, Invalidations: 1, Stale: 1,
		L1Entries: 1, L1Bytes: int64(len("x") + len("file:///wh/x.metadata.json") + 128),
	}, s)
	c.Invalidate(ctx, table)
	s = c.Stats()
	assert.Zero(t, s.L1Entries)
	assert.Zero(t, s.L1Bytes)
}

// An invalidation Redis missed while it was down is applied when it is
// back, before L2 is read again: Redis keeps its data across a restart
// (and across a network partition), so the old entry would otherwise be
// served by every replica. A replica whose bus connection dropped empties
// its L1 when it reconnects: it may have missed invalidations.
func TestCacheInvalidationWhileRedisDown(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	a := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	b := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	table := cache.TableKey("cat", []string{"ns"}, "t")
	a.Put(ctx, table, "v", entry("old"))
	_, level := b.Get(ctx, table, "v")
	require.Equal(t, cache.L2, level)

	m.Close()
	a.Put(ctx, table, "w", entry("x")) // a finds Redis down
	a.Invalidate(ctx, table)
	_, level = a.Get(ctx, table, "v")
	assert.Equal(t, cache.Miss, level)
	_, level = b.Get(ctx, table, "v")
	assert.Equal(t, cache.L1, level, "b cannot know yet")

	require.NoError(t, m.Restart())
	assert.Eventually(t, func() bool { return !m.Exists("lg:lt:" + table) }, 5*time.Second, 20*time.Millisecond,
		"the missed invalidation reaches Redis once it is back")
	assert.Eventually(t, func() bool {
		e, _ := b.Get(ctx, table, "v")
		return e == nil
	}, 5*time.Second, 20*time.Millisecond, "b's L1 forgets what it may have missed")
	d := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	_, level = d.Get(ctx, table, "v")
	assert.Equal(t, cache.Miss, level)
}

// A response fetched before an invalidation is not stored after it (a
// load in flight while a write completes holds the old table), on this
// replica or, once the bus has told it, on another.
func TestCacheFillRacingInvalidation(t *testing.T) {
	rs := replicas(t, 2, cache.Config{})
	a, b := rs[0], rs[1]
	table := cache.TableKey("cat", []string{"ns"}, "t")

	gen := a.Generation()
	a.Invalidate(ctx, table) // a write through a while a's load is in flight
	assert.False(t, a.PutIf(ctx, table, "v", entry("old"), gen))
	_, level := a.Get(ctx, table, "v")
	assert.Equal(t, cache.Miss, level, "neither in L1 nor in L2")
	assert.True(t, a.PutIf(ctx, table, "v", entry("new"), a.Generation()))
	e, level := a.Get(ctx, table, "v")
	require.Equal(t, cache.L1, level)
	assert.Equal(t, "new", string(e.Body))

	gen = b.Generation()
	a.Invalidate(ctx, table) // a write through a while b's load is in flight
	assert.Eventually(t, func() bool { return b.Generation() != gen }, 2*time.Second, 5*time.Millisecond)
	assert.False(t, b.PutIf(ctx, table, "v", entry("old"), gen))
	_, level = a.Get(ctx, table, "v")
	assert.Equal(t, cache.Miss, level)

	// an unconditional Put after an invalidation stores
	b.Put(ctx, table, "v", entry("newer"))
	_, level = b.Get(ctx, table, "v")
	assert.Equal(t, cache.L1, level)

	// invalidations of other tables do not stop a fill; of its namespace
	// or catalog they do
	for prefix, stored := range map[string]bool{
		cache.TableKey("cat", []string{"ns"}, "tx"):         true,
		cache.TableKey("cat", []string{"ns"}, "u"):          true,
		cache.NamespacePrefix("cat", []string{"other"}):     true,
		cache.CatalogPrefix("cat2"):                         true,
		cache.NamespacePrefix("cat", []string{"ns"}):        false,
		cache.CatalogPrefix("cat"):                          false,
		cache.TableKey("cat", []string{"ns"}, "t"):          false,
		cache.NamespacePrefix("cat", []string{"ns", "sub"}): true,
	} {
		gen := a.Generation()
		a.Invalidate(ctx, prefix)
		assert.Equal(t, stored, a.PutIf(ctx, table, "v", entry("x"), gen), "%q", prefix)
	}
	// so many invalidations since that the cache cannot tell: not stored
	gen = a.Generation()
	for i := 0; i < 100; i++ {
		a.Invalidate(ctx, cache.TableKey("cat", []string{"ns"}, fmt.Sprint("other", i)))
	}
	assert.False(t, a.PutIf(ctx, table, "v", entry("x"), gen))
}

// Get takes variants by preference: each is looked for in L1 first, so a
// hit there never asks Redis, then all of them in L2 in one round trip.
func TestCacheGetVariantsByPreference(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	a := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	b := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	table := cache.TableKey("cat", []string{"ns"}, "t")
	a.Put(ctx, table, "shared", entry("shared"))

	n := m.CommandCount()
	e, level := a.Get(ctx, table, "private", "shared")
	require.NotNil(t, e)
	assert.Equal(t, cache.L1, level)
	assert.Equal(t, "shared", string(e.Body))
	assert.Equal(t, n, m.CommandCount(), "an L1 hit does not ask Redis about the other variant")

	e, level = b.Get(ctx, table, "private", "shared")
	require.NotNil(t, e)
	assert.Equal(t, cache.L2, level)
	assert.Equal(t, "shared", string(e.Body))
	assert.Equal(t, n+1, m.CommandCount(), "one round trip for both variants")
	_, level = b.Get(ctx, table, "shared")
	assert.Equal(t, cache.L1, level)

	a.Put(ctx, table, "private", entry("private"))
	e, _ = a.Get(ctx, table, "private", "shared")
	assert.Equal(t, "private", string(e.Body), "the first variant wins")
	c := open(t, cache.Config{Prefix: "lg:"}, client(t, url))
	e, level = c.Get(ctx, table, "private", "shared")
	assert.Equal(t, cache.L2, level)
	assert.Equal(t, "private", string(e.Body), "in L2 too")
	e, level = c.Get(ctx, table, "nothing", "shared")
	assert.Equal(t, cache.L2, level)
	assert.Equal(t, "shared", string(e.Body))
	e, level = c.Get(ctx, table, "nothing")
	assert.Nil(t, e)
	assert.Equal(t, cache.Miss, level)
}
