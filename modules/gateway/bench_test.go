package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// benchSnapshots is how many appends (hence snapshots) the benchmarked
// table holds: LoadTable returns them all, so the metadata is not trivial.
const benchSnapshots = 32

// benchParallelism × GOMAXPROCS clients load each target, closed-loop:
// 16 on 2 cores, as examples/bench/run.sh does. With only GOMAXPROCS
// clients the gateway's extra hop shows up as idle time, not as cost.
const benchParallelism = 8

// BenchmarkLoadTable measures LoadTable straight against an embedded
// backend (direct) and through a lakegate remote catalog in front of the
// same backend (gateway), in the same run, so the two are comparable as
// a ratio. Client, gateway and backend share the machine's cores.
func BenchmarkLoadTable(b *testing.B) {
	ctx := context.Background()
	backend := embeddedtest.Serve(b, embeddedtest.Config(b, embedded.SQLite))

	cat := embeddedtest.Client(b, backend.URL)
	id := table.Identifier{"bench", "events"}
	require.NoError(b, cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil))
	tbl, err := cat.CreateTable(ctx, id, embeddedtest.EventSchema)
	require.NoError(b, err)
	for i := int64(0); i < benchSnapshots; i++ {
		data, _ := embeddedtest.Batch(b, tbl, i*10, i*10+10)
		tbl, err = tbl.AppendTable(ctx, data, 16, nil)
		data.Release()
		require.NoError(b, err)
	}
	require.GreaterOrEqual(b, len(tbl.Metadata().Snapshots()), benchSnapshots)

	base := benchGateway(b, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})
	path := "/namespaces/bench/tables/events"
	targets := []struct{ name, url string }{
		{"direct", backend.URL + "/v1/" + backend.Catalog.Name() + path},
		{"gateway", base + "/v1/lake" + path},
	}

	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}}
	b.Cleanup(client.CloseIdleConnections)

	for _, tg := range targets {
		// both answer the same table before anything is timed
		size := loadOnce(b, client, tg.url)
		b.Run(tg.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := loadTable(client, tg.url); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// loadTable GETs url, reads and closes the body, and wants a 200.
func loadTable(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return nil
}

// loadOnce checks url answers a LoadTableResult and returns its size.
func loadOnce(tb testing.TB, client *http.Client, url string) int {
	tb.Helper()
	resp, err := client.Get(url)
	require.NoError(tb, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(tb, err)
	require.Equal(tb, http.StatusOK, resp.StatusCode, string(body))
	var res struct {
		MetadataLocation string `json:"metadata-location"`
	}
	require.NoError(tb, json.Unmarshal(body, &res))
	require.NotEmpty(tb, res.MetadataLocation)
	return len(body)
}

// benchGateway is gateway() for testing.TB: lakegate in-process on a
// loopback port with the given app config; it returns the base URL once
// the listener answers, and stops Caddy when tb ends.
func benchGateway(tb testing.TB, app map[string]any) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	addr := l.Addr().String()
	require.NoError(tb, l.Close())
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{
			"lakegate": app,
			"http": map[string]any{"servers": map[string]any{"lakegate": map[string]any{
				"listen":          []string{addr},
				"routes":          []any{map[string]any{"handle": []any{map[string]any{"handler": "lakegate_iceberg"}}}},
				"automatic_https": map[string]any{"disable": true},
			}}},
		},
	}
	raw, err := json.Marshal(cfg)
	require.NoError(tb, err)
	require.NoError(tb, caddy.Load(raw, true))
	tb.Cleanup(func() { _ = caddy.Stop() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		require.Less(tb, i, 100, "gateway did not listen on %s: %v", addr, err)
		time.Sleep(20 * time.Millisecond)
	}
	return "http://" + addr
}
