package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
)

// cacheBenchParallelism × GOMAXPROCS closed-loop clients per target.
const cacheBenchParallelism = 8

// BenchmarkCachedLoadTable measures, in one run, LoadTable answered by:
//
//	direct       the embedded backend itself (loopback HTTP)
//	ceiling      a bare net/http server writing the same bytes from memory
//	gateway-l1   lakegate, cache hit in process memory (max_age 1h)
//	gateway-304  lakegate, If-None-Match with the current ETag: 304 from L1
//	gateway-l2   lakegate, cache hit in Redis: the gateway is reloaded with
//	             an L1 byte bound (max_bytes 1) smaller than any entry, so
//	             every load misses L1 and is served from L2
//
// Client, gateway, backend and Redis (miniredis in-process, or the server
// at LAKEGATE_TEST_REDIS) share the machine's cores. Every response's
// status and Lakegate-Cache header are checked; "unexpected/op" counts
// the ones that were not the hit the sub-benchmark is about.
func BenchmarkCachedLoadTable(b *testing.B) {
	backend := benchBackend(b)
	client := benchClient(b)

	path := "/namespaces/bench/tables/events"
	directURL := backend.URL + "/v1/" + backend.Catalog.Name() + path
	body, _ := cacheBenchGet(b, client, directURL, "")
	ceiling := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	b.Cleanup(ceiling.Close)

	name := uniqueName("bench")
	redisURL := redistest.URL(b)
	app := func(limits map[string]any) map[string]any {
		return map[string]any{
			"redis":    redisURL,
			"cache":    limits,
			"catalogs": []any{cached(name, backend.URL, map[string]any{"max_age": int64(time.Hour)}, nil)},
		}
	}
	gw := gateway(b, app(nil)) + "/v1/" + name + path
	got, h := cacheBenchGet(b, client, gw, "")
	require.Equal(b, body, got, "the gateway answers the backend's bytes")
	etag := h.Get("ETag")

	type target struct {
		name, url, inm string
		status         int
		how            string
	}
	run := func(tg target) {
		// warm: the first answer may be the miss that fills the cache
		cacheBenchGet(b, client, tg.url, tg.inm)
		b.Run(tg.name, func(b *testing.B) {
			var unexpected atomic.Int64
			b.ReportAllocs()
			if tg.status == http.StatusOK {
				b.SetBytes(int64(len(body))) // a 304 carries none
			}
			b.SetParallelism(cacheBenchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, err := http.NewRequest(http.MethodGet, tg.url, nil)
					if err != nil {
						b.Error(err)
						return
					}
					if tg.inm != "" {
						req.Header.Set("If-None-Match", tg.inm)
					}
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil {
						b.Error(err)
						return
					}
					if resp.StatusCode != tg.status || resp.Header.Get("Lakegate-Cache") != tg.how {
						unexpected.Add(1)
					}
				}
			})
			b.ReportMetric(float64(unexpected.Load())/float64(b.N), "unexpected/op")
		})
	}
	run(target{"direct", directURL, "", http.StatusOK, ""})
	run(target{"ceiling", ceiling.URL, "", http.StatusOK, ""})
	run(target{"gateway-l1", gw, "", http.StatusOK, "hit-l1"})
	run(target{"gateway-304", gw, etag, http.StatusNotModified, "hit-l1"})

	// the same catalog, reloaded with an L1 too small for any entry: the
	// entry stored above in Redis is every load's answer
	l2 := gateway(b, app(map[string]any{"max_bytes": 1})) + "/v1/" + name + path
	_, h = cacheBenchGet(b, client, l2, "")
	require.Equal(b, "hit-l2", h.Get("Lakegate-Cache"))
	run(target{"gateway-l2", l2, "", http.StatusOK, "hit-l2"})
}

// cacheBenchGet GETs url (with If-None-Match inm when set) and wants 200
// or, with inm, 304; it returns the body and headers.
func cacheBenchGet(tb testing.TB, client *http.Client, url, inm string) ([]byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(tb, err)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := client.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	want := http.StatusOK
	if inm != "" {
		want = http.StatusNotModified
	}
	require.Equal(tb, want, resp.StatusCode, fmt.Sprintf("GET %s: %s", url, body))
	return body, resp.Header
}
