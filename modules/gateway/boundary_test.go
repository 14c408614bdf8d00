package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// faultyProxy stands between lakegate and a real catalog, as the worst
// backends behave: it can hold a commit past the gateway's timeout and
// apply it afterwards (a server that does not cancel on disconnect),
// garble answers, quote the credentials it got, and crash on a body. It
// counts the commits the catalog applied.
type faultyProxy struct {
	backend string // the catalog's base URL

	mu      sync.Mutex
	hold    time.Duration // the next commit is held this long, then applied
	held    chan struct{} // closed once a held commit reached the catalog
	garble  bool          // LoadTable answers garbage metadata
	quote   bool          // every request but /v1/config gets a 500 quoting its Authorization
	applied atomic.Int64  // commits and transactions the catalog applied (2xx)
}

func (p *faultyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	hold, garble, quote := p.hold, p.garble, p.quote
	commit := r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/transactions/commit") ||
		strings.Contains(r.URL.Path, "/tables/") && !strings.HasSuffix(r.URL.Path, "/metrics"))
	if commit {
		p.hold = 0
	}
	p.mu.Unlock()
	switch {
	case quote && r.URL.Path != "/v1/config":
		msg, _ := json.Marshal("rejected credentials " + r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":`+string(msg)+`,"type":"InternalServerError","code":500}}`)
		return
	case bytes.Contains(body, []byte("crash")):
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	case garble && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/tables/"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"metadata-location":"file:///evil/v1.metadata.json","metadata":{"garbage":true}}`)
		return
	case commit && hold > 0:
		// The gateway gives up meanwhile; the commit still lands.
		time.Sleep(hold)
		status, _, _ := p.forward(context.Background(), r, body)
		if status/100 == 2 {
			p.applied.Add(1)
		}
		p.mu.Lock()
		close(p.held)
		p.mu.Unlock()
		return
	}
	status, h, out := p.forward(r.Context(), r, body)
	if commit && status/100 == 2 {
		p.applied.Add(1)
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

func (p *faultyProxy) forward(ctx context.Context, r *http.Request, body []byte) (int, http.Header, []byte) {
	req, err := http.NewRequestWithContext(ctx, r.Method, p.backend+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, nil, nil
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return http.StatusBadGateway, nil, nil
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	h.Del("Content-Length")
	return resp.StatusCode, h, out
}

// holdNextCommit makes the next commit land after d, long after the
// gateway's write timeout; the returned channel closes when it landed.
func (p *faultyProxy) holdNextCommit(d time.Duration) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold, p.held = d, make(chan struct{})
	return p.held
}

func (p *faultyProxy) set(f func(p *faultyProxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

// boundary is two gateway replicas sharing a real Redis, in front of the
// faulty proxy and a real embedded catalog, with a 1 s write timeout.
type boundary struct {
	proxy    *faultyProxy
	replicas []string
	prefix   string // the catalog's URL path, /v1/<name>
	location string // the table's location
}

func newBoundary(t *testing.T, catalog map[string]any) *boundary {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	p := &faultyProxy{backend: newLoopbackServer(t, cat)}
	remote := map[string]any{"url": newLoopbackServer(t, p), "write_timeout": int64(time.Second)}
	name := uniqueName("boundary") // cache keys of its own on the shared Redis
	lake := map[string]any{"name": name, "remote": remote, "idempotency": map[string]any{}}
	for k, v := range catalog {
		if k == "remote" {
			for rk, rv := range v.(map[string]any) {
				remote[rk] = rv
			}
			continue
		}
		lake[k] = v
	}
	app := map[string]any{"redis": redistest.URL(t), "catalogs": []any{lake}}
	b := &boundary{proxy: p, replicas: []string{replica(t, app), replica(t, app)}, prefix: "/v1/" + name}
	status, body, _ := post(t, b.replicas[0]+b.prefix+"/namespaces", "", `{"namespace":["ns"]}`)
	require.Equal(t, http.StatusOK, status, body)
	b.location = b.createTable(t, "t")
	return b
}

// createTable creates table ns.name and returns its location.
func (b *boundary) createTable(t *testing.T, name string) string {
	t.Helper()
	status, body, _ := post(t, b.replicas[0]+b.prefix+"/namespaces/ns/tables", "",
		`{"name":"`+name+`","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`)
	require.Equal(t, http.StatusOK, status, body)
	var created struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	return created.Metadata.Location
}

// tableState is what the catalog holds of the table.
func (b *boundary) tableState(t *testing.T) (snapshots []int64, props map[string]string, metadataLog int) {
	return b.stateOf(t, "t")
}

func (b *boundary) stateOf(t *testing.T, table string) (snapshots []int64, props map[string]string, metadataLog int) {
	t.Helper()
	resp, err := http.Get(b.proxy.backend + "/v1/namespaces/ns/tables/" + table)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m struct {
		Metadata struct {
			Snapshots []struct {
				ID int64 `json:"snapshot-id"`
			} `json:"snapshots"`
			Properties  map[string]string `json:"properties"`
			MetadataLog []any             `json:"metadata-log"`
		} `json:"metadata"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	for _, s := range m.Metadata.Snapshots {
		snapshots = append(snapshots, s.ID)
	}
	return snapshots, m.Metadata.Properties, len(m.Metadata.MetadataLog)
}

// appendCommit adds snapshot id (sequence number seq) on main, asserting
// main is at parent (0: main does not exist yet), as engines commit an
// append.
func (b *boundary) appendCommit(id, parent, seq int64) string {
	ref := `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}`
	parentField := ""
	if parent != 0 {
		ref = `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":` + strconv.FormatInt(parent, 10) + `}`
		parentField = `"parent-snapshot-id":` + strconv.FormatInt(parent, 10) + `,`
	}
	ids := strconv.FormatInt(id, 10)
	return `{"requirements":[` + ref + `],"updates":[` +
		`{"action":"add-snapshot","snapshot":{"snapshot-id":` + ids + `,` + parentField + `"sequence-number":` + strconv.FormatInt(seq, 10) + `,` +
		`"timestamp-ms":` + strconv.FormatInt(time.Now().UnixMilli(), 10) + `,"manifest-list":"` + b.location +
		`/metadata/snap-` + ids + `.avro","summary":{"operation":"append"},"schema-id":0}},` +
		`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":` + ids + `}]}`
}

// A keyed commit the backend applies after the gateway timed out (504) is
// never applied a second time by its retry through the other replica,
// whatever the commit: a property change, which lakegate cannot find in
// the table, is answered CommitStateUnknownException; an append is found
// by its snapshot id and answered as applied; an append retried while
// the first copy is still held is run again, and the backend applies
// whichever copy comes first, once.
func TestExactlyOnceAgainstASlowBackend(t *testing.T) {
	b := newBoundary(t, nil)
	gw0, gw1 := b.replicas[0]+b.prefix+"/namespaces/ns/tables/t", b.replicas[1]+b.prefix+"/namespaces/ns/tables/t"

	t.Run("a property change applied late is not applied again", func(t *testing.T) {
		key := uuid.Must(uuid.NewV7()).String()
		body := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"late":"yes"}}]}`
		landed := b.proxy.holdNextCommit(1500 * time.Millisecond)
		before := b.proxy.applied.Load()
		_, logBefore := func() (map[string]string, int) { _, p, n := b.tableState(t); return p, n }()
		status, answer, _ := post(t, gw0, key, body)
		assert.Equal(t, http.StatusGatewayTimeout, status, answer)
		assert.Contains(t, answer, "CommitStateUnknownException")
		<-landed
		status, answer, h := post(t, gw1, key, body)
		assert.Equal(t, http.StatusInternalServerError, status, answer)
		assert.Contains(t, answer, "CommitStateUnknownException")
		assert.Empty(t, h.Get("Idempotent-Replayed"))
		assert.Equal(t, before+1, b.proxy.applied.Load(), "the backend applied the commit twice")
		_, props, logAfter := b.tableState(t)
		assert.Equal(t, "yes", props["late"])
		assert.Equal(t, logBefore+1, logAfter, "one metadata file per apply")
	})

	var main int64
	t.Run("an append applied late is found and answered as applied", func(t *testing.T) {
		key := uuid.Must(uuid.NewV7()).String()
		id := time.Now().UnixNano() & (1<<62 - 1)
		body := b.appendCommit(id, 0, 1)
		landed := b.proxy.holdNextCommit(1500 * time.Millisecond)
		before := b.proxy.applied.Load()
		status, answer, _ := post(t, gw0, key, body)
		assert.Equal(t, http.StatusGatewayTimeout, status, answer)
		<-landed
		status, answer, h := post(t, gw1, key, body)
		require.Equal(t, http.StatusOK, status, answer)
		assert.Equal(t, "true", h.Get("Idempotent-Replayed"))
		assert.Contains(t, answer, strconv.FormatInt(id, 10))
		again, answer2, _ := post(t, gw0, key, body)
		assert.Equal(t, http.StatusOK, again)
		assert.Equal(t, answer, answer2, "the resolved answer is replayed")
		assert.Equal(t, before+1, b.proxy.applied.Load())
		snaps, _, _ := b.tableState(t)
		assert.Equal(t, []int64{id}, snaps)
		main = id
	})

	t.Run("an append retried while its first copy is held applies once", func(t *testing.T) {
		require.NotZero(t, main)
		key := uuid.Must(uuid.NewV7()).String()
		id := main + 1
		body := b.appendCommit(id, main, 2)
		landed := b.proxy.holdNextCommit(2500 * time.Millisecond)
		before := b.proxy.applied.Load()
		status, answer, _ := post(t, gw0, key, body)
		assert.Equal(t, http.StatusGatewayTimeout, status, answer)
		status, answer, _ = post(t, gw1, key, body) // the first copy is still held
		require.Equal(t, http.StatusOK, status, answer)
		<-landed // and is refused by its requirement when it arrives
		assert.Equal(t, before+1, b.proxy.applied.Load(), "both copies were applied")
		snaps, _, _ := b.tableState(t)
		assert.Equal(t, []int64{main, id}, snaps)
	})

	t.Run("a transaction applied late is found and answered 204", func(t *testing.T) {
		b.createTable(t, "tx1")
		b.createTable(t, "tx2")
		id := main + 100
		change := func(table string, snap int64) string {
			return `{"identifier":{"namespace":["ns"],"name":"` + table + `"},` + b.appendCommit(snap, 0, 1)[1:]
		}
		body := `{"table-changes":[` + change("tx1", id) + `,` + change("tx2", id+1) + `]}`
		txURL := func(replica string) string { return replica + b.prefix + "/transactions/commit" }
		key := uuid.Must(uuid.NewV7()).String()
		landed := b.proxy.holdNextCommit(1500 * time.Millisecond)
		before := b.proxy.applied.Load()
		status, answer, _ := post(t, txURL(b.replicas[0]), key, body)
		assert.Equal(t, http.StatusGatewayTimeout, status, answer)
		<-landed
		status, answer, h := post(t, txURL(b.replicas[1]), key, body)
		assert.Equal(t, http.StatusNoContent, status, answer)
		assert.Equal(t, "true", h.Get("Idempotent-Replayed"))
		assert.Equal(t, before+1, b.proxy.applied.Load(), "the transaction was applied twice")
		for table, snap := range map[string]int64{"tx1": id, "tx2": id + 1} {
			snaps, _, _ := b.stateOf(t, table)
			assert.Equal(t, []int64{snap}, snaps, table)
		}
	})
}

// Wrong, hostile or crashing backends: a garbled LoadTable is a 502 and is
// never cached or served stale; a backend quoting lakegate's credentials
// shows them to nobody; requests that crash the backend do not open the
// breaker for another caller's reads.
func TestHostileBackendAnswers(t *testing.T) {
	t.Setenv("LAKEGATE_TEST_BACKEND_TOKEN", "boundary-backend-token-4f9a")
	b := newBoundary(t, map[string]any{
		"cache":  map[string]any{"max_age": int64(50 * time.Millisecond), "stale_if_error": int64(time.Hour)},
		"remote": map[string]any{"auth": map[string]any{"mode": "bearer", "token": "{env.LAKEGATE_TEST_BACKEND_TOKEN}"}},
	})
	gw := b.replicas[0] + b.prefix

	t.Run("garbled metadata is refused and never cached", func(t *testing.T) {
		b.proxy.set(func(p *faultyProxy) { p.garble = true })
		a := getTable(t, gw+"/namespaces/ns/tables/t", "If-None-Match", "")
		assert.Equal(t, http.StatusBadGateway, a.status, string(a.body))
		assert.NotContains(t, string(a.body), "evil")
		b.proxy.set(func(p *faultyProxy) { p.garble, p.quote = false, true }) // now failing: stale is allowed
		a = getTable(t, gw+"/namespaces/ns/tables/t", "If-None-Match", "")
		assert.NotContains(t, string(a.body), "garbage", "the garbled answer was served from the cache")
		b.proxy.set(func(p *faultyProxy) { p.quote = false })
	})

	t.Run("a backend quoting credentials shows them to nobody", func(t *testing.T) {
		b.proxy.set(func(p *faultyProxy) { p.quote = true })
		defer b.proxy.set(func(p *faultyProxy) { p.quote = false })
		for _, url := range []string{gw + "/namespaces/ns", gw + "/namespaces/ns/tables/nope"} {
			a := getTable(t, url)
			assert.GreaterOrEqual(t, a.status, 500)
			assert.NotContains(t, string(a.body), "boundary-backend-token", "a backend credential reached the client")
			assert.Contains(t, string(a.body), "[redacted]")
		}
		status, body, _ := post(t, gw+"/namespaces", "", `{"namespace":["quoted"]}`)
		assert.GreaterOrEqual(t, status, 500)
		assert.NotContains(t, body, "boundary-backend-token")
	})

	t.Run("crashing requests do not open the breaker for others", func(t *testing.T) {
		for i := range 6 {
			status, body, _ := post(t, gw+"/namespaces", "", `{"namespace":["crash`+strconv.Itoa(i)+`"]}`)
			assert.Equal(t, http.StatusBadGateway, status, body)
		}
		a := getTable(t, gw+"/namespaces/ns/tables/t", "If-None-Match", "")
		assert.Equal(t, http.StatusOK, a.status, "another caller's read was turned away: %s", a.body)
		assert.NotEqual(t, "stale", a.how())
	})
}

// A Delta data commit against the worst backend: the catalog takes longer
// than the gateway's write timeout and applies the commit after the
// gateway gave up. The client (delta-spark retries) sends the same
// add-commit again; it must land exactly once: one Iceberg snapshot, the
// rows once, one applied commit at the catalog.
func TestDeltaDataCommitExactlyOnceAgainstASlowBackend(t *testing.T) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	p := &faultyProxy{backend: newLoopbackServer(t, cat)}
	name := uniqueName("slowdelta")
	lake := map[string]any{"name": name, "idempotency": map[string]any{},
		"remote": map[string]any{"url": newLoopbackServer(t, p), "write_timeout": int64(time.Second)}}
	app := map[string]any{"redis": redistest.URL(t), "catalogs": []any{lake}}
	addr := freeAddr(t)
	base := runReplica(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	status, body, _ := post(t, base+"/v1/"+name+"/namespaces", "", `{"namespace":["sales"]}`)
	require.Equal(t, http.StatusOK, status, body)

	tables := base + deltaAPI + "/catalogs/" + name + "/schemas/sales/tables"
	code, st := call(t, http.MethodPost, base+deltaAPI+"/catalogs/"+name+"/schemas/sales/staging-tables", map[string]any{"name": "events"})
	require.Equal(t, http.StatusOK, code, "%v", st)
	loc, id := st["location"].(string), st["table-id"].(string)
	code, out := call(t, http.MethodPost, tables, map[string]any{
		"name": "events", "location": loc, "table-type": "MANAGED",
		"columns":           json.RawMessage(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"region","type":"string","nullable":true,"metadata":{}}]}`),
		"partition-columns": []string{"region"},
		"protocol":          map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties":        map[string]string{}, "last-commit-timestamp-ms": time.Now().UnixMilli(),
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	applied := p.applied.Load() // the create's assert-create commit
	dir := strings.TrimPrefix(loc, "file://")
	a := writeIDs(t, dir, "region=eu/part-slow.parquet", 1, 2, 3)
	commit := dataCommit(id, stagedCommit(t, dir, 1, addLine(a, "eu", 3)), 1, 0)

	landed := p.holdNextCommit(3 * time.Second)
	code, out = call(t, http.MethodPost, tables+"/events", commit)
	assert.GreaterOrEqual(t, code, 500, "the gateway gave up before the catalog answered: %v", out)
	<-landed
	code, out = call(t, http.MethodPost, tables+"/events", commit)
	require.Equal(t, http.StatusOK, code, "the retry: %v", out)
	assert.EqualValues(t, 1, out["latest-table-version"])

	assert.Equal(t, applied+1, p.applied.Load(), "the catalog applied the data commit once")
	ice := gatewayClient(t, base, name)
	assert.Equal(t, map[int64]string{1: "eu", 2: "eu", 3: "eu"}, icebergRows(t, ice, "events"))
	tbl, err := ice.LoadTable(context.Background(), table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), 1, "one snapshot for one Delta version")
}
