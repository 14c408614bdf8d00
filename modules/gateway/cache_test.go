package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// countingBackend is an embedded catalog that counts the LoadTable
// requests (GET .../tables/{t}) reaching it.
type countingBackend struct {
	cat  *embedded.Catalog
	name string // the embedded catalog's name, also its prefix
	url  string // set once served

	loads       atomic.Int64 // GET loadTable requests
	conditional atomic.Int64 // of them, with If-None-Match
	notModified atomic.Int64 // of them, answered 304

	// hold, when set, is called after a load was answered and before the
	// answer is sent: the response is then already decided.
	hold atomic.Pointer[func()]
}

// newCountingBackend opens an embedded catalog with the given catalog
// properties, not yet served.
func newCountingBackend(t *testing.T, props map[string]string) *countingBackend {
	t.Helper()
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Properties = props
	cat, err := embedded.Open(context.Background(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	return &countingBackend{cat: cat, name: cat.Name()}
}

// serveCounting serves a new counting backend on its own loopback port.
func serveCounting(t *testing.T, props map[string]string) *countingBackend {
	b := newCountingBackend(t, props)
	b.url = newLoopbackServer(t, b)
	return b
}

func isLoadTable(r *http.Request) bool {
	_, rest, ok := strings.Cut(r.URL.Path, "/tables/")
	return r.Method == http.MethodGet && ok && rest != "" && !strings.Contains(rest, "/")
}

func (b *countingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isLoadTable(r) {
		b.cat.ServeHTTP(w, r)
		return
	}
	b.loads.Add(1)
	if r.Header.Get("If-None-Match") != "" {
		b.conditional.Add(1)
	}
	rec := httptest.NewRecorder()
	b.cat.ServeHTTP(rec, r)
	if rec.Code == http.StatusNotModified {
		b.notModified.Add(1)
	}
	if h := b.hold.Load(); h != nil {
		(*h)()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// prefixURL is the backend's own /v1/{prefix}.
func (b *countingBackend) prefixURL() string { return b.url + "/v1/" + b.name }

var tableSchema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

// seedTables creates namespace ns (if needed) and the tables under base
// (a /v1/{prefix} URL, of a backend or of the gateway).
func seedTables(t *testing.T, base, ns string, tables ...string) {
	t.Helper()
	status, body, _ := post(t, base+"/namespaces", "", `{"namespace":["`+ns+`"]}`)
	require.Contains(t, []int{http.StatusOK, http.StatusConflict}, status, body)
	for _, tbl := range tables {
		status, body, _ = post(t, base+"/namespaces/"+ns+"/tables", "", `{"name":"`+tbl+`","schema":`+tableSchema+`}`)
		require.Equal(t, http.StatusOK, status, body)
	}
}

// setProperty commits a set-properties update to the table at url.
func setProperty(t *testing.T, url, k, v string) {
	t.Helper()
	status, body, _ := post(t, url, "", `{"requirements":[],"updates":[{"action":"set-properties","updates":{"`+k+`":"`+v+`"}}]}`)
	require.Equal(t, http.StatusOK, status, body)
}

// loaded is one LoadTable answer.
type loaded struct {
	status   int
	header   http.Header
	body     []byte
	location string
	props    map[string]string
	creds    []map[string]any
}

func (l loaded) how() string  { return l.header.Get("Lakegate-Cache") }
func (l loaded) etag() string { return l.header.Get("ETag") }

// getTable GETs url with the given header name/value pairs.
func getTable(t *testing.T, url string, hdr ...string) loaded {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := loaded{status: resp.StatusCode, header: resp.Header, body: body}
	if resp.StatusCode == http.StatusOK {
		var doc struct {
			Location string `json:"metadata-location"`
			Metadata struct {
				Properties map[string]string `json:"properties"`
			} `json:"metadata"`
			Creds []map[string]any `json:"storage-credentials"`
		}
		require.NoError(t, json.Unmarshal(body, &doc), string(body))
		out.location, out.props, out.creds = doc.Location, doc.Metadata.Properties, doc.Creds
	}
	return out
}

var uniq atomic.Int64

// uniqueName is a catalog name no other test (or process sharing the
// real Redis of LAKEGATE_TEST_REDIS) uses, so cache keys never collide.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s%x%d", prefix, time.Now().UnixNano(), uniq.Add(1))
}

// cached is a remote catalog with a LoadTable cache.
func cached(name, url string, cacheCfg, extra map[string]any) map[string]any {
	c := remote(name, url, extra)
	c["cache"] = cacheCfg
	return c
}

var vended = []string{"X-Iceberg-Access-Delegation", "vended-credentials"}

func with(hdr []string, more ...string) []string { return append(append([]string{}, hdr...), more...) }

// Two gateway processes share one Redis: a table one replica cached is an
// L2 hit on the other, and a commit through either is never followed by
// a stale read through the other, however soon.
func TestCacheAcrossReplicas(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	app := map[string]any{
		"redis":    redistest.URL(t),
		"catalogs": []any{cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil)},
	}
	a, bb := replica(t, app), replica(t, app)
	path := "/v1/" + name + "/namespaces/ns/tables/t"

	first := getTable(t, bb+path)
	require.Equal(t, http.StatusOK, first.status, string(first.body))
	assert.Equal(t, "miss", first.how())
	assert.Equal(t, int64(1), b.loads.Load())

	again := getTable(t, bb+path)
	assert.Equal(t, "hit-l1", again.how())
	assert.Equal(t, first.body, again.body)
	assert.Equal(t, int64(1), b.loads.Load(), "an L1 hit does not reach the backend")

	other := getTable(t, a+path)
	require.Equal(t, http.StatusOK, other.status)
	assert.Equal(t, "hit-l2", other.how(), "the other replica finds the table in Redis")
	assert.Equal(t, first.body, other.body)
	assert.Equal(t, first.etag(), other.etag())
	assert.Equal(t, int64(1), b.loads.Load())

	// a write through one replica, then at once a read through the other
	for i := 0; i < 10; i++ {
		writer, reader := a, bb
		if i%2 == 1 {
			writer, reader = bb, a
		}
		require.Equal(t, "hit-l1", getTable(t, reader+path).how(), "round %d: cached before the write", i)
		setProperty(t, writer+path, "owner", fmt.Sprint("round ", i))
		got := getTable(t, reader+path)
		require.Equal(t, http.StatusOK, got.status)
		require.Equal(t, fmt.Sprint("round ", i), got.props["owner"], "round %d: stale read after a write through the other replica", i)
		assert.NotEqual(t, first.etag(), got.etag())
		// the writer sees it too (from L2, filled by the reader, or the backend)
		require.Equal(t, fmt.Sprint("round ", i), getTable(t, writer+path).props["owner"])
	}
}

// Within max_age a table is served from cache even if it changed at the
// backend behind the gateway's back; past max_age the change shows.
func TestCacheFreshness(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	base := gateway(t, map[string]any{"catalogs": []any{
		cached(name, b.url, map[string]any{"max_age": int64(time.Second)}, nil)}})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"

	first := getTable(t, path)
	loadedAt := time.Now()
	require.Equal(t, http.StatusOK, first.status)
	require.Equal(t, "miss", first.how())

	setProperty(t, b.prefixURL()+"/namespaces/ns/tables/t", "owner", "direct")
	for time.Since(loadedAt) < 700*time.Millisecond {
		got := getTable(t, path)
		if time.Since(loadedAt) >= 900*time.Millisecond {
			break // too close to call
		}
		assert.Equal(t, "hit-l1", got.how(), "within max_age")
		assert.Equal(t, first.location, got.location, "within max_age the old metadata may be served")
		assert.NotContains(t, got.props, "owner")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, int64(1), b.loads.Load())

	time.Sleep(time.Until(loadedAt.Add(1100 * time.Millisecond)))
	got := getTable(t, path)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, "direct", got.props["owner"], "past max_age the change shows")
	assert.NotEqual(t, first.location, got.location)
	assert.Equal(t, "miss", got.how(), "the backend's ETag changed: a full answer")
	assert.Equal(t, int64(1), b.conditional.Load(), "the second load was conditional")
	assert.Zero(t, b.notModified.Load())
}

// Clients that never send If-None-Match (iceberg-go) are served from
// cache; clients that do (Java) get 304 for the ETag the gateway gave,
// until a commit changes it. With max_age 0 every load is revalidated
// with the backend's own ETag, which the backend answers with 304.
func TestCacheETagsAndNotModified(t *testing.T) {
	ctx := context.Background()
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name, always := uniqueName("lake"), uniqueName("always")
	base := gateway(t, map[string]any{"catalogs": []any{
		cached(name, b.url, map[string]any{"max_age": int64(time.Minute)}, nil),
		cached(always, b.url, map[string]any{}, nil),
	}})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"

	first := getTable(t, path)
	require.Equal(t, http.StatusOK, first.status)
	assert.Equal(t, "miss", first.how())
	assert.True(t, strings.HasPrefix(first.etag(), `W/"`), "a weak ETag: %q", first.etag())
	assert.Equal(t, "application/json", first.header.Get("Content-Type"))
	for i := 0; i < 5; i++ {
		got := getTable(t, path)
		assert.Equal(t, "hit-l1", got.how())
		assert.Equal(t, first.etag(), got.etag())
		assert.Equal(t, first.body, got.body)
	}
	assert.Equal(t, int64(1), b.loads.Load(), "repeated loads reach the backend once")

	// iceberg-go's REST client (which asks for vended credentials: another
	// representation, cached on its own)
	cl := gatewayClient(t, base, name)
	tbl, err := cl.LoadTable(ctx, table.Identifier{"ns", "t"})
	require.NoError(t, err)
	assert.Equal(t, first.location, tbl.MetadataLocation())
	n := b.loads.Load()
	assert.LessOrEqual(t, n, int64(2))
	for i := 0; i < 3; i++ {
		tbl, err = cl.LoadTable(ctx, table.Identifier{"ns", "t"})
		require.NoError(t, err)
		assert.Equal(t, first.location, tbl.MetadataLocation())
	}
	assert.Equal(t, n, b.loads.Load(), "iceberg-go's loads are cache hits")

	// Java: If-None-Match with the gateway's ETag
	nm := getTable(t, path, "If-None-Match", first.etag())
	assert.Equal(t, http.StatusNotModified, nm.status)
	assert.Equal(t, first.etag(), nm.etag())
	assert.Empty(t, nm.body)
	assert.Equal(t, "hit-l1", nm.how())
	assert.Equal(t, n, b.loads.Load())
	// a list with the tag in it, and the strong form, match too
	assert.Equal(t, http.StatusNotModified, getTable(t, path, "If-None-Match", `"other", `+first.etag()).status)
	assert.Equal(t, http.StatusNotModified, getTable(t, path, "If-None-Match", strings.TrimPrefix(first.etag(), "W/")).status)
	assert.Equal(t, http.StatusOK, getTable(t, path, "If-None-Match", `W/"other"`).status)
	// the gateway's tag is per representation
	refs := getTable(t, path+"?snapshots=refs", "If-None-Match", first.etag())
	assert.Equal(t, http.StatusOK, refs.status)
	assert.NotEqual(t, first.etag(), refs.etag())

	// a commit through the gateway changes the tag
	setProperty(t, path, "owner", "gw")
	after := getTable(t, path, "If-None-Match", first.etag())
	require.Equal(t, http.StatusOK, after.status)
	assert.Equal(t, "gw", after.props["owner"])
	assert.NotEqual(t, first.etag(), after.etag())
	assert.Equal(t, "miss", after.how())
	assert.Equal(t, http.StatusNotModified, getTable(t, path, "If-None-Match", after.etag()).status)

	// max_age 0: every load asks the backend, with its ETag, and gets 304
	alwaysPath := base + "/v1/" + always + "/namespaces/ns/tables/t"
	loads, cond, nms := b.loads.Load(), b.conditional.Load(), b.notModified.Load()
	full := getTable(t, alwaysPath)
	require.Equal(t, http.StatusOK, full.status)
	assert.Equal(t, "miss", full.how())
	assert.Equal(t, loads+1, b.loads.Load())
	assert.Equal(t, cond, b.conditional.Load(), "nothing cached yet: an unconditional load")
	for i := int64(1); i <= 3; i++ {
		got := getTable(t, alwaysPath)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, "revalidated", got.how())
		assert.Equal(t, full.body, got.body)
		assert.Equal(t, full.etag(), got.etag())
		assert.Equal(t, loads+1+i, b.loads.Load(), "every load reaches the backend")
		assert.Equal(t, cond+i, b.conditional.Load(), "with If-None-Match")
		assert.Equal(t, nms+i, b.notModified.Load(), "which answers 304")
	}
	nm = getTable(t, alwaysPath, "If-None-Match", full.etag())
	assert.Equal(t, http.StatusNotModified, nm.status)
	assert.Equal(t, "revalidated", nm.how())
	assert.Empty(t, nm.body)
}

// A response with vended credentials is cached for its principal only:
// another principal never gets it, from L1 or L2; a load without
// delegation gets metadata only, cached apart and shared.
func TestCacheCredentialIsolation(t *testing.T) {
	b := serveCounting(t, map[string]string{
		"s3.access-key-id": "AK", "s3.secret-access-key": "SK", "s3.region": "us-east-1"})
	seedTables(t, b.prefixURL(), "ns", "t")
	name, always := uniqueName("lake"), uniqueName("always")
	base := gateway(t, map[string]any{
		"redis": redistest.URL(t),
		"catalogs": []any{
			cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil),
			cached(always, b.url, map[string]any{}, nil),
		},
	})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"
	one := with(vended, "Authorization", "Bearer one")
	two := with(vended, "Authorization", "Bearer two")

	p1 := getTable(t, path, one...)
	require.Equal(t, http.StatusOK, p1.status, string(p1.body))
	assert.Equal(t, "miss", p1.how())
	require.Len(t, p1.creds, 1, "the backend vends credentials")
	assert.Equal(t, map[string]any{"s3.access-key-id": "AK", "s3.secret-access-key": "SK", "s3.region": "us-east-1"},
		p1.creds[0]["config"])
	again := getTable(t, path, one...)
	assert.Equal(t, "hit-l1", again.how(), "the principal's own entry")
	assert.Equal(t, p1.body, again.body)
	assert.Equal(t, int64(1), b.loads.Load())

	for i := 0; i < 3; i++ {
		p2 := getTable(t, path, two...)
		require.Equal(t, http.StatusOK, p2.status)
		if i == 0 {
			assert.Equal(t, "miss", p2.how(), "never principal one's entry")
			assert.Equal(t, int64(2), b.loads.Load())
		} else {
			assert.Equal(t, "hit-l1", p2.how(), "principal two's own entry")
		}
		assert.Len(t, p2.creds, 1)
	}
	anon := getTable(t, path, vended...)
	assert.Equal(t, "miss", anon.how(), "nor an anonymous caller")
	assert.Equal(t, int64(3), b.loads.Load())

	// metadata only: a separate entry, with no credentials, shared
	meta := getTable(t, path, "Authorization", "Bearer one")
	require.Equal(t, http.StatusOK, meta.status)
	assert.Equal(t, "miss", meta.how())
	assert.Empty(t, meta.creds)
	assert.NotContains(t, string(meta.body), "SK")
	assert.Equal(t, int64(4), b.loads.Load())
	shared := getTable(t, path, "Authorization", "Bearer two")
	assert.Equal(t, "hit-l1", shared.how())
	assert.Empty(t, shared.creds)
	assert.Equal(t, int64(4), b.loads.Load())

	// after a commit, principal two again gets its own fresh answer
	setProperty(t, path, "owner", "x")
	p2 := getTable(t, path, two...)
	assert.Equal(t, "miss", p2.how())
	assert.Equal(t, "x", p2.props["owner"])
	assert.Equal(t, "hit-l1", getTable(t, path, two...).how())
	assert.Equal(t, "miss", getTable(t, path, one...).how())

	// vended credentials expire: with max_age 0 a credentialed entry is
	// fetched again in full, never extended by a 304, while a
	// metadata-only one is revalidated
	alwaysPath := base + "/v1/" + always + "/namespaces/ns/tables/t"
	cond := b.conditional.Load()
	for i := 0; i < 3; i++ {
		got := getTable(t, alwaysPath, one...)
		require.Equal(t, http.StatusOK, got.status)
		assert.Equal(t, "miss", got.how())
		assert.Len(t, got.creds, 1)
	}
	assert.Equal(t, cond, b.conditional.Load())
	getTable(t, alwaysPath)
	assert.Equal(t, "revalidated", getTable(t, alwaysPath).how())
	assert.Equal(t, cond+1, b.conditional.Load())
}

// With Redis gone the gateway keeps answering loads (L1, else the
// backend); keyed writes, whose replay record lives in Redis, get 503; a
// write meanwhile still evicts the table; once Redis is back the cache
// uses it again and what it missed is applied.
func TestCacheRedisDownAtGateway(t *testing.T) {
	m := miniredis.RunT(t)
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t", "u", "v")
	name := uniqueName("lake")
	cat := cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil)
	cat["idempotency"] = map[string]any{}
	base := gateway(t, map[string]any{"redis": "redis://" + m.Addr(), "catalogs": []any{cat}})
	tableURL := func(tbl string) string { return base + "/v1/" + name + "/namespaces/ns/tables/" + tbl }
	l2Key := func(tbl string) string { return "lakegate:lt:" + cache.TableKey(name, []string{"ns"}, tbl) }

	require.Equal(t, "miss", getTable(t, tableURL("t")).how())
	require.True(t, m.Exists(l2Key("t")), "the entry went to Redis")

	m.Close()
	start := time.Now()
	got := getTable(t, tableURL("t"))
	assert.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, "hit-l1", got.how())
	got = getTable(t, tableURL("u"))
	assert.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, "miss", got.how())
	assert.Equal(t, int64(2), b.loads.Load())
	assert.Equal(t, "hit-l1", getTable(t, tableURL("u")).how())
	assert.Less(t, time.Since(start), 10*time.Second)

	key := uuid.Must(uuid.NewV7()).String()
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"keyed"}}]}`
	status, body, _ := post(t, tableURL("t"), key, commit)
	assert.Equal(t, http.StatusServiceUnavailable, status, body)

	// unkeyed writes go on, and evict
	setProperty(t, tableURL("t"), "owner", "during")
	got = getTable(t, tableURL("t"))
	assert.Equal(t, "during", got.props["owner"])
	assert.Equal(t, "miss", got.how())
	assert.Equal(t, "hit-l1", getTable(t, tableURL("t")).how())

	require.NoError(t, m.Restart())
	// traffic brings the cache back to Redis within its ~1s probe
	i := 0
	assert.Eventually(t, func() bool {
		i++
		setProperty(t, tableURL("v"), "round", fmt.Sprint(i))
		return getTable(t, tableURL("v")).props["round"] == fmt.Sprint(i) && m.Exists(l2Key("v"))
	}, 10*time.Second, 100*time.Millisecond, "entries go to Redis again")
	assert.False(t, m.Exists(l2Key("t")), "the eviction Redis missed was applied")
	assert.Eventually(t, func() bool {
		status, _, _ := post(t, tableURL("t"), key, commit)
		return status == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "keyed writes work again")
}

// Past max_age, while the backend fails, a metadata-only copy is served
// for stale_if_error, marked stale; one with credentials never is.
func TestCacheStaleIfError(t *testing.T) {
	b := newCountingBackend(t, map[string]string{
		"s3.access-key-id": "AK", "s3.secret-access-key": "SK", "s3.region": "us-east-1"})
	flaky := &restartable{t: t, addr: "127.0.0.1:0", h: b}
	flaky.start()
	t.Cleanup(flaky.stop)
	b.url = "http://" + flaky.addr
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	base := gateway(t, map[string]any{"catalogs": []any{cached(name, b.url,
		map[string]any{"max_age": int64(100 * time.Millisecond), "stale_if_error": int64(time.Minute)},
		map[string]any{"breaker": map[string]any{"failures": 100, "timeout": int64(time.Second)}})}})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"
	creds := with(vended, "Authorization", "Bearer one")

	plain := getTable(t, path)
	require.Equal(t, http.StatusOK, plain.status)
	require.Equal(t, "miss", plain.how())
	withCreds := getTable(t, path, creds...)
	require.Equal(t, http.StatusOK, withCreds.status)
	require.Len(t, withCreds.creds, 1)

	flaky.stop()
	time.Sleep(150 * time.Millisecond)
	stale := getTable(t, path)
	require.Equal(t, http.StatusOK, stale.status, string(stale.body))
	assert.Equal(t, "stale", stale.how())
	assert.Contains(t, stale.header.Get("Warning"), "110")
	assert.Equal(t, plain.body, stale.body)
	assert.Equal(t, plain.etag(), stale.etag())
	nm := getTable(t, path, "If-None-Match", plain.etag())
	assert.Equal(t, http.StatusNotModified, nm.status)
	assert.Equal(t, "stale", nm.how())

	denied := getTable(t, path, creds...)
	assert.GreaterOrEqual(t, denied.status, 500, "credentials are never served stale")
	assert.NotEqual(t, "stale", denied.how())
	assert.NotContains(t, string(denied.body), "SK")

	flaky.start()
	assert.Eventually(t, func() bool {
		got := getTable(t, path)
		return got.status == http.StatusOK && got.how() != "stale"
	}, 10*time.Second, 50*time.Millisecond, "fresh answers once the backend is back")
	got := getTable(t, path, creds...)
	assert.Equal(t, http.StatusOK, got.status)
	assert.Len(t, got.creds, 1)
}

// A load in flight while a write through the gateway completes holds the
// old table; it is answered, but not cached over the write.
func TestCacheNoStaleFillDuringWrite(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	base := gateway(t, map[string]any{
		"redis":    redistest.URL(t),
		"catalogs": []any{cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil)},
	})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"

	answered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := func() {
		once.Do(func() {
			close(answered)
			<-release
		})
	}
	b.hold.Store(&hold)
	done := make(chan loaded)
	go func() { done <- getTable(t, path) }()
	<-answered // the backend has read the table: the old version

	setProperty(t, path, "owner", "new")
	close(release)
	old := <-done
	require.Equal(t, http.StatusOK, old.status)
	assert.NotContains(t, old.props, "owner", "the load began before the write")

	got := getTable(t, path)
	assert.Equal(t, "new", got.props["owner"], "the in-flight load was not cached over the write")
	assert.Equal(t, "miss", got.how())
	assert.Equal(t, "hit-l1", getTable(t, path).how())
}

// adminGateway is gateway() with Caddy's admin endpoint on a loopback
// port; it returns the gateway's and the admin endpoint's base URLs.
func adminGateway(t *testing.T, app map[string]any) (string, string) {
	t.Helper()
	addr, admin := freeAddr(t), freeAddr(t)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(caddyJSON(t, addr, app), &cfg))
	cfg["admin"] = map[string]any{"listen": admin, "config": map[string]any{"persist": false}}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	startCaddy(t, raw)
	return "http://" + addr, "http://" + admin
}

type adminStats struct {
	Cache *cache.Stats `json:"cache"`
}

func cacheStats(t *testing.T, admin string) cache.Stats {
	t.Helper()
	var resp *http.Response
	var err error
	for i := 0; i < 50; i++ { // the admin listener may take a moment
		if resp, err = http.Get(admin + "/lakegate/cache/stats"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var s adminStats
	require.NoError(t, json.Unmarshal(body, &s), string(body))
	require.NotNil(t, s.Cache, string(body))
	return *s.Cache
}

func purge(t *testing.T, admin, body string) int {
	t.Helper()
	resp, err := http.Post(admin+"/lakegate/cache/purge", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// The admin API reports the cache's counters and purges a table, a
// namespace or a catalog, after which the next load is a miss.
func TestCacheAdminStatsAndPurge(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t", "u")
	name := uniqueName("lake")
	base, admin := adminGateway(t, map[string]any{"catalogs": []any{
		cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil),
		remote("plain", b.url, nil),
	}})
	path := base + "/v1/" + name + "/namespaces/ns/tables/"

	before := cacheStats(t, admin)
	require.Equal(t, "miss", getTable(t, path+"t").how())
	require.Equal(t, "hit-l1", getTable(t, path+"t").how())
	require.Equal(t, "hit-l1", getTable(t, path+"t").how())
	require.Equal(t, http.StatusNotModified, getTable(t, path+"t", "If-None-Match", getTable(t, path+"t").etag()).status)
	require.Equal(t, "miss", getTable(t, path+"u").how())
	s := cacheStats(t, admin)
	assert.Equal(t, before.Misses+2, s.Misses)
	assert.Equal(t, before.L1Hits+4, s.L1Hits)
	assert.Equal(t, before.NotModified+1, s.NotModified)
	assert.GreaterOrEqual(t, s.L1Entries, 2)
	assert.Positive(t, s.L1Bytes)

	loads := b.loads.Load()
	assert.Equal(t, http.StatusNoContent, purge(t, admin, `{"catalog":"`+name+`","namespace":["ns"],"table":"t"}`))
	assert.Equal(t, "miss", getTable(t, path+"t").how())
	assert.Equal(t, "hit-l1", getTable(t, path+"u").how(), "only that table")
	assert.Equal(t, loads+1, b.loads.Load())

	assert.Equal(t, http.StatusNoContent, purge(t, admin, `{"catalog":"`+name+`","namespace":["ns"]}`))
	assert.Equal(t, "miss", getTable(t, path+"t").how())
	assert.Equal(t, "miss", getTable(t, path+"u").how())

	assert.Equal(t, http.StatusNoContent, purge(t, admin, `{"catalog":"`+name+`"}`))
	assert.Equal(t, "miss", getTable(t, path+"t").how())
	assert.Equal(t, loads+4, b.loads.Load())

	s = cacheStats(t, admin)
	assert.Equal(t, before.Invalidations+3, s.Invalidations)

	assert.Equal(t, http.StatusNotFound, purge(t, admin, `{"catalog":"nope"}`))
	assert.Equal(t, http.StatusBadRequest, purge(t, admin, `{"catalog":"`+name+`","table":"t"}`))
	assert.Equal(t, http.StatusBadRequest, purge(t, admin, `{`))
	// Ambiguous to a decoder that folds case or keeps the last duplicate.
	assert.Equal(t, http.StatusBadRequest, purge(t, admin, `{"catalog":"`+name+`","Catalog":"nope"}`))
	assert.Equal(t, http.StatusBadRequest, purge(t, admin, `{"catalog":"nope","catalog":"`+name+`"}`))
	resp, err := http.Get(admin + "/lakegate/cache/purge")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// The cache key holds only what the spec defines for LoadTable (snapshots
// and the delegation modes): a unique query string per request neither
// misses the cache nor adds entries to Redis; an unknown snapshots mode is a
// 400 (the spec's enum), neither cached nor sent to the backend.
func TestCacheKeyIgnoresUnknownParameters(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	url := redistest.URL(t)
	rdb := redistest.ClientAt(t, url) // the gateway's Redis, miniredis included
	base := gateway(t, map[string]any{
		"redis":    url,
		"catalogs": []any{cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil)},
	})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"
	// entries counts what Redis holds for the catalog: a table is a hash
	// with one field per cached variant.
	entries := func() int64 {
		ctx := context.Background()
		var n int64
		iter := rdb.Scan(ctx, 0, "*"+name+"*", 1000).Iterator()
		for iter.Next(ctx) {
			fields, err := rdb.HLen(ctx, iter.Val()).Result()
			require.NoError(t, err)
			n += fields
		}
		require.NoError(t, iter.Err())
		return n
	}

	first := getTable(t, path)
	require.Equal(t, http.StatusOK, first.status, string(first.body))
	before := entries()
	require.Positive(t, before, "the table is in Redis")
	misses := 0
	for i := range 50 {
		got := getTable(t, fmt.Sprintf("%s?flood=%d&x%d=y", path, i, i),
			"X-Iceberg-Access-Delegation", fmt.Sprintf("bogus-%d", i))
		require.Equal(t, http.StatusOK, got.status)
		if got.how() != "hit-l1" {
			misses++
		}
	}
	assert.Zero(t, misses, "flooding requests missed the cache")
	assert.Equal(t, before, entries(), "unknown parameters added Redis entries")
	assert.Equal(t, int64(1), b.loads.Load())

	// The spec's own variants are cached apart.
	assert.Equal(t, "miss", getTable(t, path+"?snapshots=refs").how())
	assert.Equal(t, "hit-l1", getTable(t, path+"?snapshots=refs&junk=1").how())
	// An unknown snapshots mode is refused before cache and backend.
	loads := b.loads.Load()
	odd := getTable(t, path+"?snapshots=some")
	assert.Equal(t, http.StatusBadRequest, odd.status, string(odd.body))
	assert.Empty(t, odd.how())
	assert.Equal(t, loads, b.loads.Load())
	assert.Equal(t, "hit-l1", getTable(t, path).how())
}

// A hung backend: with the cache on, a stale copy is answered once the
// read timeout passes, instead of after the backend's (or the client's)
// own timeout.
func TestCacheStaleOnReadTimeout(t *testing.T) {
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	base := gateway(t, map[string]any{"catalogs": []any{cached(name, b.url,
		map[string]any{"max_age": int64(100 * time.Millisecond), "stale_if_error": int64(time.Minute)},
		map[string]any{"read_timeout": int64(200 * time.Millisecond)})}})
	path := base + "/v1/" + name + "/namespaces/ns/tables/t"
	first := getTable(t, path)
	require.Equal(t, http.StatusOK, first.status, string(first.body))

	release := make(chan struct{})
	hang := func() { <-release }
	b.hold.Store(&hang)
	t.Cleanup(func() { close(release) })
	time.Sleep(150 * time.Millisecond) // past max_age: the next load asks the backend
	stale := getTable(t, path)
	require.Equal(t, http.StatusOK, stale.status, string(stale.body))
	assert.Equal(t, "stale", stale.how())
	assert.Equal(t, first.body, stale.body)
}

// postWith POSTs body to url with the given header name/value pairs.
func postWith(t *testing.T, url, body string, hdr ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return resp.StatusCode, resp.Header
}

// A create or a commit through the gateway answers with the ETag a
// LoadTable of that version carries, so a client (Java) that sends it as
// If-None-Match gets 304 until the table changes: with the cache on (the
// gateway's tags) or off (the backend's), remote or embedded.
func TestCommitETagIsLoadTableETag(t *testing.T) {
	b := serveCounting(t, nil)
	onRemote, offRemote := uniqueName("cached"), uniqueName("plain")
	onEmbedded := embeddedCatalog(t, uniqueName("embcached"))
	onEmbedded["cache"] = map[string]any{"max_age": int64(time.Minute)}
	offEmbedded := embeddedCatalog(t, uniqueName("emb"))
	base := gateway(t, map[string]any{"catalogs": []any{
		cached(onRemote, b.url, map[string]any{"max_age": int64(time.Minute)}, nil),
		remote(offRemote, b.url, nil), onEmbedded, offEmbedded,
	}})
	names := []string{onRemote, offRemote, onEmbedded["name"].(string), offEmbedded["name"].(string)}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			ns := fmt.Sprintf("ns%d", i) // the two remotes share one backend
			prefix := base + "/v1/" + name
			postWith(t, prefix+"/namespaces", `{"namespace":["`+ns+`"]}`)
			_, created := postWith(t, prefix+"/namespaces/"+ns+"/tables", `{"name":"t","schema":`+tableSchema+`}`)
			path := prefix + "/namespaces/" + ns + "/tables/t"
			require.NotEmpty(t, created.Get("ETag"), "createTable answers with an ETag")
			assert.Equal(t, http.StatusNotModified, getTable(t, path, "If-None-Match", created.Get("ETag")).status)

			commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`
			_, committed := postWith(t, path, commit)
			tag := committed.Get("ETag")
			require.NotEmpty(t, tag, "updateTable answers with an ETag")
			assert.NotEqual(t, created.Get("ETag"), tag)
			assert.Equal(t, http.StatusNotModified, getTable(t, path, "If-None-Match", tag).status)
			assert.Equal(t, http.StatusOK, getTable(t, path, "If-None-Match", created.Get("ETag")).status)
			assert.Equal(t, http.StatusOK, getTable(t, path+"?snapshots=refs", "If-None-Match", tag).status,
				"another representation, another tag")

			// the tag is the load's of the same delegation modes
			_, committed = postWith(t, path, commit, vended...)
			assert.Equal(t, http.StatusNotModified,
				getTable(t, path, with(vended, "If-None-Match", committed.Get("ETag"))...).status)
		})
	}
}
