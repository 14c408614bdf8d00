package gateway_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// BenchmarkDeltaLoadTable: the UC Delta API's loadTable of a Delta table
// whose Iceberg answer is in the L1 cache (max_age 1h), so what is
// measured is the door, the translation and the in-process pipeline call,
// not the backend. Compare B/op and allocs/op across commits: they do
// not depend on the machine's load.
func BenchmarkDeltaLoadTable(b *testing.B) {
	cfg, dir := embeddedtest.Config(b, embedded.SQLite), b.TempDir()
	cfg.AllowedLocations = []string{dir}
	backend := embeddedtest.Serve(b, cfg)
	addr := freeAddr(b)
	app := map[string]any{"catalogs": []any{cached("lake", backend.URL, map[string]any{"max_age": int64(time.Hour)}, nil)}}
	base := serveOn(b, addr, caddyJSONHandlers(b, addr, app,
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	post := func(url, body string) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		require.NoError(b, err)
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(b, http.StatusOK, resp.StatusCode, "%s", raw)
	}
	post(base+"/v1/lake/namespaces", `{"namespace":["sales"]}`)
	post(base+deltaAPI+"/catalogs/lake/schemas/sales/tables", `{"name":"events","location":"file://`+filepath.Join(dir, "events")+
		`","table-type":"EXTERNAL","columns":`+eventsColumns+`,"protocol":{"min-reader-version":1,"min-writer-version":2},`+
		`"properties":{},"last-commit-timestamp-ms":1700000000000}`)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/events"
	get := func() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	get() // fills the cache
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
}
