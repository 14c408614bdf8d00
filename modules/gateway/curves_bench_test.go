package gateway_test

// Cost-growth curves (issue 26): the same operation measured at growing
// sizes, so a plot shows where its cost stops growing in proportion.
// examples/bench/curves.sh runs them and draws the plots BENCHMARKS.md
// shows. Nothing here asserts a time: the benchmarks check answers only.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// curveSizes are the LoadTable answer sizes BenchmarkLoadTableCurve
// measures: tables whose metadata holds enough snapshots to reach them.
var curveSizes = []struct {
	label string
	bytes int
}{{"10KB", 10_000}, {"100KB", 100_000}, {"1MB", 1_000_000}, {"10MB", 10_000_000}}

// BenchmarkLoadTableCurve: LoadTable of tables whose metadata is 10 KB to
// 10 MB, grown the way tables grow it: snapshots (one per commit, each
// with its summary, manifest list and snapshot-log entry). Per size:
//
//	direct        the embedded backend itself (loopback HTTP), for reference
//	miss          lakegate, every load a cache miss: no Redis and an L1 too
//	              small for any entry, so each load is fetched, checked,
//	              parsed for the cache and answered
//	l1            lakegate, a hit in process memory (max_age 1h)
//	not-modified  lakegate, If-None-Match with the current ETag: 304 from L1
//	revalidated   lakegate, max_age 0: every load asks the backend with
//	              If-None-Match, the backend says 304, the L1 copy is served
//	l2            lakegate, a hit in Redis (LAKEGATE_TEST_REDIS, else
//	              miniredis): L1 bounded to 1 byte
//
// Names are <variant>/size=<label>; "answer-B" is the answer's size.
// Client, gateway, backend and Redis share the machine's cores, and B/op
// counts every allocation in the process (the backend's too, for direct,
// miss and revalidated).
func BenchmarkLoadTableCurve(b *testing.B) {
	backend := embeddedtest.Serve(b, embeddedtest.Config(b, embedded.SQLite))
	client := benchClient(b)
	tables := curveTables(b, backend, client)
	direct := backend.URL + "/v1/" + backend.Catalog.Name() + "/namespaces/curve/tables/"

	type target struct {
		variant, base, inm string
		status             int
		how                string
	}
	run := func(tg target) {
		for _, size := range curveSizes {
			url := tg.base + tables[size.label]
			// warm: the first load may be the miss that fills the cache
			body, h := cacheBenchGet(b, client, url, "")
			inm := ""
			if tg.inm != "" {
				inm = h.Get("ETag")
			}
			b.Run(tg.variant+"/size="+size.label, func(b *testing.B) {
				var unexpected atomic.Int64
				var first atomic.Value // the first unexpected answer, said once
				b.ReportAllocs()
				b.SetParallelism(cacheBenchParallelism)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						status, how, err := curveGet(client, url, inm)
						if err != nil {
							b.Error(err)
							return
						}
						if status != tg.status || how != tg.how {
							unexpected.Add(1)
							first.CompareAndSwap(nil, fmt.Sprintf("%d %q", status, how))
						}
					}
				})
				b.ReportMetric(float64(len(body)), "answer-B")
				b.ReportMetric(float64(unexpected.Load())/float64(b.N), "unexpected/op")
				if f := first.Load(); f != nil {
					b.Logf("answers not %d %q, the first: %s", tg.status, tg.how, f)
				}
			})
		}
	}
	run(target{"direct", direct, "", http.StatusOK, ""})

	redisURL := redistest.URL(b)
	hot, reval := uniqueName("curvehot"), uniqueName("curvereval")
	// 16 loads at once of a 10 MB table, each a parse and an encoding of
	// the metadata by the backend on 2 shared cores, outlast the default
	// read_timeout (10s); the breaker would then open and fail loads fast.
	// The curve is the cost of loads that succeed.
	slow := map[string]any{"read_timeout": int64(5 * time.Minute)}
	app := func(redis string, limits map[string]any) map[string]any {
		return map[string]any{
			"redis": redis,
			"cache": limits,
			"catalogs": []any{
				cached(hot, backend.URL, map[string]any{"max_age": int64(time.Hour)}, slow),
				cached(reval, backend.URL, map[string]any{}, slow),
			},
		}
	}
	base := gateway(b, app(redisURL, nil))
	prefix := func(name string) string { return base + "/v1/" + name + "/namespaces/curve/tables/" }
	run(target{"l1", prefix(hot), "", http.StatusOK, "hit-l1"})
	run(target{"not-modified", prefix(hot), "etag", http.StatusNotModified, "hit-l1"})
	run(target{"revalidated", prefix(reval), "", http.StatusOK, "revalidated"})

	// the same catalogs, L1 bounded below any entry: the entries stored in
	// Redis above answer every load
	base = gateway(b, app(redisURL, map[string]any{"max_bytes": 1}))
	prefix = func(name string) string { return base + "/v1/" + name + "/namespaces/curve/tables/" }
	run(target{"l2", prefix(hot), "", http.StatusOK, "hit-l2"})

	// no Redis and no room in L1: nothing is ever found
	base = gateway(b, app("", map[string]any{"max_bytes": 1}))
	prefix = func(name string) string { return base + "/v1/" + name + "/namespaces/curve/tables/" }
	run(target{"miss", prefix(hot), "", http.StatusOK, "miss"})
}

// curveGet GETs url (with If-None-Match inm when set), drains the answer
// and returns its status and Lakegate-Cache header.
func curveGet(client *http.Client, url, inm string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Lakegate-Cache"), err
}

// curveTables registers, in namespace curve of the backend, one table per
// curveSizes entry whose LoadTable answer is about that size, and returns
// their names by label. The metadata is a real table's (one append
// through iceberg-go) with its snapshot repeated as a history: each
// snapshot the child of the one before, a minute apart, every one in the
// snapshot log, as a table that took that many commits would have.
func curveTables(b *testing.B, backend *embeddedtest.Server, client *http.Client) map[string]string {
	ctx := context.Background()
	cat := embeddedtest.Client(b, backend.URL)
	require.NoError(b, cat.CreateNamespace(ctx, table.Identifier{"curve"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"curve", "seed"}, embeddedtest.EventSchema)
	require.NoError(b, err)
	data, _ := embeddedtest.Batch(b, tbl, 0, 10)
	_, err = tbl.AppendTable(ctx, data, 16, nil)
	data.Release()
	require.NoError(b, err)

	tables := backend.URL + "/v1/" + backend.Catalog.Name() + "/namespaces/curve/tables"
	raw, _ := cacheBenchGet(b, client, tables+"/seed", "")
	var seed struct {
		Metadata map[string]any `json:"metadata"`
	}
	require.NoError(b, json.Unmarshal(raw, &seed))
	snaps, _ := seed.Metadata["snapshots"].([]any)
	require.Len(b, snaps, 1, "the seed table has one snapshot")
	loc, _ := seed.Metadata["location"].(string)
	require.NotEmpty(b, loc)

	names := map[string]string{}
	for _, size := range curveSizes {
		name := "t" + strings.ToLower(size.label)
		// grow the history until the answer is the size: snapshots are
		// not all the same length (their ids and times grow), so measure
		n := snapshotsFor(b, seed.Metadata, size.bytes)
		tableLoc := loc + "_" + name
		doc := withHistory(b, seed.Metadata, n, tableLoc)
		file := tableLoc + "/metadata/00000-" + uuid.NewString() + ".metadata.json"
		path := strings.TrimPrefix(file, "file://")
		require.NoError(b, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(b, os.WriteFile(path, doc, 0o644))
		body := fmt.Sprintf(`{"name":%q,"metadata-location":%q}`, name, file)
		resp, err := client.Post(backend.URL+"/v1/"+backend.Catalog.Name()+"/namespaces/curve/register", "application/json", strings.NewReader(body))
		require.NoError(b, err)
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(b, http.StatusOK, resp.StatusCode, "register %s: %s", name, reply)
		names[size.label] = name
	}
	return names
}

// snapshotsFor is how many snapshots make meta's document about want
// bytes, from the length of two histories.
func snapshotsFor(b *testing.B, meta map[string]any, want int) int {
	one := len(withHistory(b, meta, 1, "x"))
	hundred := len(withHistory(b, meta, 101, "x"))
	per := float64(hundred-one) / 100
	return max(1, 1+int(float64(want-one)/per))
}

// withHistory is meta with n snapshots (meta's one, repeated as a chain),
// their snapshot log, the main branch at the last, at location loc.
func withHistory(b *testing.B, meta map[string]any, n int, loc string) []byte {
	doc := make(map[string]any, len(meta))
	for k, v := range meta {
		doc[k] = v
	}
	tmpl := meta["snapshots"].([]any)[0].(map[string]any)
	first := int64(tmpl["snapshot-id"].(float64))
	t0 := int64(tmpl["timestamp-ms"].(float64)) - int64(n)*60_000
	snaps := make([]any, n)
	snapLog := make([]any, n)
	for i := range n {
		s := make(map[string]any, len(tmpl))
		for k, v := range tmpl {
			s[k] = v
		}
		id := first + int64(i)*7919 // distinct, as long as real ids
		s["snapshot-id"] = id
		if i > 0 {
			s["parent-snapshot-id"] = id - 7919
		} else {
			delete(s, "parent-snapshot-id")
		}
		s["sequence-number"] = i + 1
		ts := t0 + int64(i)*60_000
		s["timestamp-ms"] = ts
		s["manifest-list"] = fmt.Sprintf("%s/metadata/snap-%d-1-%s.avro", loc, id, uuid.NewString())
		snaps[i] = s
		snapLog[i] = map[string]any{"snapshot-id": id, "timestamp-ms": ts}
	}
	last := snaps[n-1].(map[string]any)
	doc["snapshots"] = snaps
	doc["snapshot-log"] = snapLog
	doc["current-snapshot-id"] = last["snapshot-id"]
	doc["last-sequence-number"] = n
	doc["last-updated-ms"] = last["timestamp-ms"]
	doc["refs"] = map[string]any{"main": map[string]any{"snapshot-id": last["snapshot-id"], "type": "branch"}}
	doc["metadata-log"] = []any{}
	doc["location"] = loc
	doc["table-uuid"] = uuid.NewString()
	raw, err := json.Marshal(doc)
	require.NoError(b, err)
	return raw
}

// curveFiles are the data file counts of BenchmarkSharingQueryCurve.
var curveFiles = []struct {
	label string
	files int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

// curveFilesPerCommit is how many files each append adds: one manifest
// per append, so 1k files are 1 manifest, 100k files 100, as a table fed
// by regular appends has.
const curveFilesPerCommit = 1_000

// BenchmarkSharingQueryCurve: a Delta Sharing query (POST …/query, every
// NDJSON line read) of tables with 1k, 10k and 100k data files, planned by
// lakegate over the manifests (planning=local) or by the backend
// (planning=auto, server-side scan planning). The files are added as
// Iceberg data files with full column stats (iceberg-go's AddDataFiles:
// manifests only, no Parquet written; a query lists files, it does not
// open them), 1,000 per append, partitioned by identity over 1,000
// values. Names are <planning>/files=<label>; "answer-B" is the answer's
// size.
func BenchmarkSharingQueryCurve(b *testing.B) {
	base, plans := planningGateway(b)
	names := writeCurveFiles(b, base)
	client := benchClient(b)
	for _, mode := range []string{"local", "auto"} {
		for _, size := range curveFiles {
			url := base + "/" + mode + "/shares/demo/schemas/sales/tables/" + names[size.label] + "/query"
			b.Run("planning="+mode+"/files="+size.label, func(b *testing.B) {
				lines, n, err := curveQuery(client, url)
				if err != nil {
					b.Skipf("not measured: %v", err)
				}
				require.Equal(b, size.files+2, lines)
				plans.Store(0)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if got, _, err := curveQuery(client, url); err != nil || got != lines {
						b.Fatalf("%d lines, %v", got, err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(n), "answer-B")
				b.ReportMetric(float64(plans.Load())/float64(b.N), "backend-plans/op")
			})
		}
	}
}

// curveQuery POSTs a query as the recipient and counts the answer's lines
// and bytes without keeping them.
func curveQuery(client *http.Client, url string) (lines, n int, err error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+recipientToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	var lc lineCounter
	_, err = io.Copy(&lc, resp.Body)
	return lc.lines, lc.bytes, err
}

type lineCounter struct{ lines, bytes int }

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, ch := range p {
		if ch == '\n' {
			c.lines++
		}
	}
	c.bytes += len(p)
	return len(p), nil
}

// writeCurveFiles creates sales.files_<label> for each curveFiles entry
// through the gateway at base and returns the table names by label.
func writeCurveFiles(b *testing.B, base string) map[string]string {
	ctx := context.Background()
	cl := embeddedtest.Client(b, base, rest.WithWarehouseLocation("lake"))
	require.NoError(b, cl.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	sch, spec := partitionedByPart()
	names := map[string]string{}
	for _, size := range curveFiles {
		name := "files_" + size.label
		tbl, err := cl.CreateTable(ctx, table.Identifier{"sales", name}, sch, catalog.WithPartitionSpec(&spec))
		require.NoError(b, err)
		for start := 0; start < size.files; start += curveFilesPerCommit {
			files := make([]iceberg.DataFile, 0, curveFilesPerCommit)
			for i := start; i < min(start+curveFilesPerCommit, size.files); i++ {
				files = append(files, curveDataFile(b, spec, tbl.Location(), i))
			}
			tx := tbl.NewTransaction()
			require.NoError(b, tx.AddDataFiles(ctx, files, nil, table.WithoutDuplicateCheck()))
			tbl, err = tx.Commit(ctx)
			require.NoError(b, err, "%s: append at file %d", name, start)
		}
		names[size.label] = name
	}
	return names
}

// curveDataFile is data file i: 1,000 rows, ids i*1000 to i*1000+999, in
// partition part=i%1000, with the stats a Parquet writer records.
func curveDataFile(b *testing.B, spec iceberg.PartitionSpec, loc string, i int) iceberg.DataFile {
	part := int32(i % 1000)
	path := fmt.Sprintf("%s/data/part=%d/%05d-0-%s.parquet", loc, part, i, uuid.NewString())
	bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, path, iceberg.ParquetFile,
		map[int]any{1000: part}, nil, nil, 1000, 8_400)
	require.NoError(b, err)
	le64 := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	le32 := func(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	lo, hi := int64(i)*1000, int64(i)*1000+999
	return bld.ColumnSizes(map[int]int64{1: 8_000, 2: 120}).
		ValueCounts(map[int]int64{1: 1000, 2: 1000}).
		NullValueCounts(map[int]int64{1: 0, 2: 0}).
		LowerBoundValues(map[int][]byte{1: le64(lo), 2: le32(part)}).
		UpperBoundValues(map[int][]byte{1: le64(hi), 2: le32(part)}).
		Build()
}
