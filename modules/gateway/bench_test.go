package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/caddyserver/caddy/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/identity"
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
// benchBackend is an embedded backend holding bench.events with
// benchSnapshots snapshots.
func benchBackend(b *testing.B) *embeddedtest.Server {
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
	return backend
}

func benchClient(b *testing.B) *http.Client {
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}}
	b.Cleanup(client.CloseIdleConnections)
	return client
}

// parallel runs op from benchParallelism goroutines per core.
func parallel(b *testing.B, name string, bytes int, op func() error) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		if bytes > 0 {
			b.SetBytes(int64(bytes))
		}
		b.SetParallelism(benchParallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkLoadTable: the proxy's cost, against the backend direct.
func BenchmarkLoadTable(b *testing.B) {
	backend := benchBackend(b)
	base := gateway(b, map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}})
	path := "/namespaces/bench/tables/events"
	client := benchClient(b)
	for _, tg := range []struct{ name, url string }{
		{"direct", backend.URL + "/v1/" + backend.Catalog.Name() + path},
		{"gateway", base + "/v1/lake" + path},
	} {
		size := loadOnce(b, client, tg.url) // both answer the same table before anything is timed
		parallel(b, tg.name, size, func() error { return loadTable(client, tg.url, "") })
	}
}

// BenchmarkLoadTablePolicy: authentication plus the role-based OPA
// policy on every request, against the same gateway without them:
// "policy-on" with a static token, "policy-on-issued" with a token of
// lakegate's own issuer (ES256, the key of the process), the same one on
// every request, as a client sends it. Caddy runs one config at a time,
// so the variants are measured one after the other in the same run.
func BenchmarkLoadTablePolicy(b *testing.B) {
	backend := benchBackend(b)
	client := benchClient(b)
	roles := map[string]any{"dir": "../../policies", "package": "lakegate.roles"}
	for _, v := range []struct {
		name   string
		extra  map[string]any
		token  string
		issued bool // token is a client secret: ask the issuer for a token
	}{
		{"policy-off", nil, "", false},
		{"policy-on", map[string]any{
			"identity": map[string]any{"required": true, "tokens": []any{
				map[string]any{"id": "bench", "sha256": identity.HashSecret("bench-token"), "groups": []string{"reader"}}}},
			"policy": roles,
		}, "bench-token", false},
		{"policy-on-issued", map[string]any{
			"identity": map[string]any{"required": true, "issuer": map[string]any{"clients": []any{
				map[string]any{"id": "bench", "secret_sha256": identity.HashSecret("bench-secret"), "groups": []string{"reader"}}}}},
			"policy": roles,
		}, "bench-secret", true},
	} {
		app := map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}}
		for k, val := range v.extra {
			app[k] = val
		}
		base := gateway(b, app)
		url := base + "/v1/lake/namespaces/bench/tables/events"
		token := v.token
		if v.issued {
			token = issuedToken(b, base, "bench", v.token)
		}
		require.NoError(b, loadTable(client, url, token))
		parallel(b, v.name, 0, func() error { return loadTable(client, url, token) })
		require.NoError(b, caddy.Stop())
	}
}

// BenchmarkCommit: keyed commits (Idempotency-Key, memory and Redis
// stores) against unkeyed ones, through the same gateway and backend.
// Each goroutine commits to a table of its own (commits to one table
// from many writers would mostly measure 409s).
func BenchmarkCommit(b *testing.B) {
	backend := embeddedtest.Serve(b, embeddedtest.Config(b, embedded.SQLite))
	cat := embeddedtest.Client(b, backend.URL)
	ctx := context.Background()
	require.NoError(b, cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil))
	const tables = 64
	for i := 0; i < tables; i++ {
		_, err := cat.CreateTable(ctx, table.Identifier{"bench", fmt.Sprintf("t%d", i)}, embeddedtest.EventSchema)
		require.NoError(b, err)
	}
	client := benchClient(b)
	for _, v := range []struct {
		name  string
		redis string
		key   bool
	}{
		{"no-key", "", false},
		{"key-memory", "", true},
		{"key-redis", redistest.URL(b), true},
	} {
		app := map[string]any{"redis": v.redis, "catalogs": []any{map[string]any{
			"name": "lake", "remote": map[string]any{"url": backend.URL}, "idempotency": map[string]any{}}}}
		base := gateway(b, app) + "/v1/lake/namespaces/bench/tables/t"
		var worker, seq atomic.Int64
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				url := fmt.Sprintf("%s%d", base, worker.Add(1)%tables)
				for pb.Next() {
					body := fmt.Sprintf(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"n":"%d"}}]}`, seq.Add(1))
					if err := commitOnce(client, url, body, v.key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		require.NoError(b, caddy.Stop())
	}
}

// loadTable GETs url (with a bearer token when given), reads and closes
// the body, and wants a 200.
func loadTable(client *http.Client, url, token string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
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

// commitOnce POSTs a commit, with a fresh Idempotency-Key when key.
func commitOnce(client *http.Client, url, body string, key bool) error {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	if key {
		req.Header.Set("Idempotency-Key", uuid.Must(uuid.NewV7()).String())
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("commit %s: %d", url, resp.StatusCode)
	}
	return nil
}
