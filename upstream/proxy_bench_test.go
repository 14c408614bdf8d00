package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// answerOfSize is a LoadTable answer of about size bytes: tableAnswer
// with as many snapshots as fill it (one is about 340 bytes, the rest 830).
func answerOfSize(size int) []byte {
	return tableAnswer(max(1, (size-830)/341))
}

// memoryBackend is an Iceberg REST backend answering every LoadTable with
// body from memory, as fast as a backend can, so a benchmark or budget
// measures the gateway's cost and not the backend's.
func memoryBackend(tb testing.TB, body []byte) *httptest.Server {
	tb.Helper()
	length := strconv.Itoa(len(body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			_, _ = w.Write([]byte(`{"defaults":{},"overrides":{}}`))
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{length}
		_, _ = w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// proxyPipeline is a remote catalog's pipeline on backend, with an L1
// table cache (max_age 1h) when cached, and a record of commits, as the
// gateway gives every catalog (it must cost a load nothing).
func proxyPipeline(tb testing.TB, backend string, cached bool) *Pipeline {
	tb.Helper()
	remote, err := NewRemote("lake", RemoteConfig{URL: backend}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	journal := commitlog.NewJournal(commitlog.NewMemory(), nil)
	tb.Cleanup(func() { _ = journal.Close() })
	opts := []PipelineOption{WithJournal(journal)}
	if cached {
		c, err := cache.New(cache.Config{}, nil, nil)
		if err != nil {
			tb.Fatal(err)
		}
		opts = append(opts, WithCache(&TableCache{Cache: c, Catalog: "lake",
			Config: CacheConfig{MaxAge: duration.Duration(time.Hour)}}))
	}
	return NewPipeline("lake", remote, opts...)
}

// discardWriter is a ResponseWriter that keeps nothing, as a client
// socket would: what a benchmark counts is the gateway's own work.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

// loadRoute is the LoadTable every proxy benchmark and budget asks for.
var loadRoute = icerest.Route{Operation: icerest.OpLoadTable, Namespace: []string{"ns"}, Table: "t"}

// loadThrough serves one LoadTable through p and wants a whole 200.
func loadThrough(tb testing.TB, p *Pipeline, size int) {
	req := httptest.NewRequest(http.MethodGet, "/v1/namespaces/ns/tables/t", nil).WithContext(context.Background())
	w := &discardWriter{h: http.Header{}}
	serveLoad(tb, p, req, w, size)
}

// serveLoad serves req (a LoadTable) through p into w, which it resets
// first, and wants a whole 200.
func serveLoad(tb testing.TB, p *Pipeline, req *http.Request, w *discardWriter, size int) {
	clear(w.h)
	w.status, w.n = 0, 0
	p.Serve(w, req, loadRoute, "alice")
	if w.status != http.StatusOK || w.n != size {
		tb.Fatalf("LoadTable answered %d with %d bytes, want 200 with %d", w.status, w.n, size)
	}
}

// BenchmarkProxyLoadTable is one LoadTable through a remote catalog's
// pipeline against a backend answering from memory: miss is the plain
// proxy (no cache), hit-l1 the table cache's memory.
func BenchmarkProxyLoadTable(b *testing.B) {
	for _, size := range []int{21 << 10, 10 << 20} {
		body := answerOfSize(size)
		backend := memoryBackend(b, body)
		for _, v := range []struct {
			name   string
			cached bool
		}{{"miss", false}, {"hit-l1", true}} {
			p := proxyPipeline(b, backend.URL, v.cached)
			loadThrough(b, p, len(body))
			b.Run(fmt.Sprintf("%s/%dKB", v.name, len(body)>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					loadThrough(b, p, len(body))
				}
			})
		}
	}
}

// The allocation budgets of a LoadTable through a remote catalog's
// pipeline: per request, allocations and bytes allocated (the backend's,
// in the same process, included), for a miss without a cache (the plain
// proxy) and an L1 hit, at 21 KB and 1 MB. They are set a little above
// what was measured when the answer check became one remembered pass
// (issue 36): a change that parses, copies or buffers answers again
// fails here. Deterministic: counts, no clocks.
func TestLoadTableAllocationBudgets(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation budgets: not in -short")
	}
	budgets := []struct {
		name   string
		size   int
		cached bool
		allocs float64
		bytes  float64
	}{
		// measured: 95 allocations, 7.8 KB (the request, the client's
		// and the backend's HTTP; the answer's buffer is pooled). At 1 MB
		// a pooled buffer lost to a GC now and then adds 1.2 MB to the
		// runs (6 KB a request): the budget is still far below one copy
		// of the answer.
		{"miss/21KB", 21 << 10, false, 105, 12 << 10},
		{"miss/1MB", 1 << 20, false, 105, 32 << 10},
		// measured: 4 allocations, 149 bytes (the table's key and the
		// principal's, the headers in one array, Content-Length's value;
		// L1 is looked up without a key string of its own)
		{"hit-l1/21KB", 21 << 10, true, 5, 250},
		{"hit-l1/1MB", 1 << 20, true, 5, 250},
	}
	for _, b := range budgets {
		t.Run(b.name, func(t *testing.T) {
			body := answerOfSize(b.size)
			p := proxyPipeline(t, memoryBackend(t, body).URL, b.cached)
			req := httptest.NewRequest(http.MethodGet, "/v1/namespaces/ns/tables/t", nil).WithContext(context.Background())
			w := &discardWriter{h: http.Header{}}
			for range 3 { // the connection, the memo, the cache and the pools warm
				serveLoad(t, p, req, w, len(body))
			}
			allocs := testing.AllocsPerRun(50, func() { serveLoad(t, p, req, w, len(body)) })
			bytes := bytesPerRun(200, func() { serveLoad(t, p, req, w, len(body)) })
			t.Logf("%s: %.0f allocations, %.0f bytes per request", b.name, allocs, bytes)
			if allocs > b.allocs {
				t.Errorf("%.0f allocations per request, budget %.0f", allocs, b.allocs)
			}
			if bytes > b.bytes {
				t.Errorf("%.0f bytes allocated per request, budget %.0f", bytes, b.bytes)
			}
		})
	}
}

// bytesPerRun is the mean of the bytes f allocates (TotalAlloc: all
// goroutines, the in-process backend's included), GC aside.
func bytesPerRun(runs int, f func()) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	f() // a GC empties the pools: refill them first
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}
