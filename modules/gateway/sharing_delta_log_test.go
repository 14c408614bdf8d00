package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// deltaSharingGateway serves the Delta door, UC's API, Delta Sharing and
// the Iceberg door over one embedded backend whose warehouse may hold the
// returned folder's EXTERNAL tables.
func deltaSharingGateway(t *testing.T) (base, dir string) {
	t.Helper()
	cfg, dir := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
	cfg.AllowedLocations = []string{dir}
	backend := embeddedtest.Serve(t, cfg)
	addr := freeAddr(t)
	app := map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}}
	base = serveOn(t, addr, caddyJSONHandlers(t, addr, app, map[string]any{"handler": "lakegate_delta"},
		sharingHandler(map[string]any{"change_data_dir": t.TempDir()}), map[string]any{"handler": "lakegate_iceberg"}))
	return base, dir
}

// mustRegisterExternal registers an EXTERNAL Delta table at loc through UC's
// createTable without columns, as UC's connectors do.
func mustRegisterExternal(t *testing.T, base, name, loc string) {
	t.Helper()
	code, out := registerExternal(t, base, name, loc)
	require.Equal(t, http.StatusOK, code, "%v", out)
}

// stampCommit sets version v's commit file time: a Delta commit's
// timestamp, with In-Commit Timestamps off, is its file's.
func stampCommit(t *testing.T, loc string, v int64, at time.Time) {
	t.Helper()
	p := filepath.Join(loc, "_delta_log", fmt.Sprintf("%020d.json", v))
	require.NoError(t, os.Chtimes(p, at, at))
}

// fileInfo is one file line of a Sharing answer, in either format.
type fileInfo struct {
	kind      string // file, add, remove
	url       string
	version   int64
	partition map[string]any
}

// sharedFiles reads the file lines of an answer (after its protocol and
// metaData lines), in parquet or delta format.
func sharedFiles(t *testing.T, r reply) []fileInfo {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var out []fileInfo
	for _, l := range r.lines(t) {
		for _, kind := range []string{"file", "add", "remove"} {
			f, ok := l[kind].(map[string]any)
			if !ok {
				continue
			}
			fi := fileInfo{kind: kind}
			if v, ok := f["version"].(float64); ok {
				fi.version = int64(v)
			}
			desc := f
			if act, ok := f["deltaSingleAction"].(map[string]any); ok {
				for _, k := range []string{"add", "remove"} {
					if a, ok := act[k].(map[string]any); ok {
						desc, fi.kind = a, k
						desc["url"] = a["path"]
					}
				}
			}
			fi.url, _ = desc["url"].(string)
			fi.partition, _ = desc["partitionValues"].(map[string]any)
			out = append(out, fi)
		}
	}
	return out
}

// sharedRows downloads every listed file and pairs each row's id with
// the file's region partition value: what a Delta reader makes of them.
func sharedRows(t *testing.T, files []fileInfo) map[int64]any {
	t.Helper()
	out := map[int64]any{}
	for _, f := range files {
		at, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(download(t, f.url)), nil,
			pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err)
		ids := at.Column(0).Data().Chunk(0).(*array.Int64)
		for i := 0; i < ids.Len(); i++ {
			out[ids.Value(i)] = f.partition["region"]
		}
		at.Release()
	}
	return out
}

func metaDataOf(t *testing.T, r reply) map[string]any {
	t.Helper()
	for _, l := range r.lines(t) {
		if md, ok := l["metaData"].(map[string]any); ok {
			if d, ok := md["deltaMetadata"].(map[string]any); ok {
				return d
			}
			return md
		}
	}
	t.Fatalf("no metaData line in %s", r.body)
	return nil
}

func protocolOf(t *testing.T, r reply) map[string]any {
	t.Helper()
	p := r.lines(t)[0]["protocol"].(map[string]any)
	if d, ok := p["deltaProtocol"].(map[string]any); ok {
		return d
	}
	return p
}

// An EXTERNAL table written by a Delta engine (partition columns only in
// the log, never in its Parquet files) is shared as the log has it: its
// partition columns and each file's partition values from the log (in
// both formats, at every version, in the change feed), and the log's
// versions and commit times, not the Iceberg side's metadata versions.
func TestSharingExternalDeltaTableFromItsLog(t *testing.T) {
	base, dir := deltaSharingGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	loc := filepath.Join(dir, "events")
	mustRegisterExternal(t, base, "events", loc)
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	const tp = "/shares/demo/schemas/sales/tables/events"
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := writeIDs(t, loc, "region=eu/part-a.parquet", 1, 2, 3)
	b := writeIDs(t, loc, "region=us/part-b.parquet", 4)
	logCommit(t, loc, 0, protocolLine, metaLine(idRegion), addLine(a, "eu", 3), addLine(b, "us", 1))
	stampCommit(t, loc, 0, t0)
	// A reader between commits makes the Iceberg side sync (and number its
	// metadata files) version by version: its numbers are not the log's.
	require.Equal(t, http.StatusOK, c.do("GET", tp+"/version", nil, "").status)
	cc := writeIDs(t, loc, "region=us/part-c.parquet", 5)
	logCommit(t, loc, 1, addLine(cc, "us", 1))
	stampCommit(t, loc, 1, t0.Add(time.Hour))
	require.Equal(t, http.StatusOK, c.do("GET", tp+"/version", nil, "").status)
	// Version 2 rewrites part-a without change files (an UPDATE with the
	// change data feed off); version 3 appends.
	a2 := writeIDs(t, loc, "region=eu/part-a2.parquet", 1, 3)
	logCommit(t, loc, 2, removeLine(a, "eu"), addLine(a2, "eu", 2))
	stampCommit(t, loc, 2, t0.Add(2*time.Hour))
	d := writeIDs(t, loc, "region=eu/part-d.parquet", 6)
	logCommit(t, loc, 3, addLine(d, "eu", 1))
	stampCommit(t, loc, 3, t0.Add(3*time.Hour))

	r := c.do("GET", tp+"/version", nil, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, int64(3), r.version(t), "the log's latest version")

	latest := map[int64]any{1: "eu", 3: "eu", 4: "us", 5: "us", 6: "eu"}
	for name, caps := range map[string]map[string]string{"parquet": nil, "delta": delta} {
		t.Run("query "+name, func(t *testing.T) {
			r := c.do("POST", tp+"/query", caps, `{}`)
			files := sharedFiles(t, r)
			assert.Equal(t, int64(3), r.version(t))
			assert.Equal(t, []any{"region"}, metaDataOf(t, r)["partitionColumns"])
			assert.Equal(t, latest, sharedRows(t, files), "the partition column comes from the log, never NULL")

			r = c.do("POST", tp+"/query", caps, `{"version":1}`)
			files = sharedFiles(t, r)
			assert.Equal(t, int64(1), r.version(t))
			assert.Equal(t, map[int64]any{1: "eu", 2: "eu", 3: "eu", 4: "us", 5: "us"}, sharedRows(t, files))
			for _, f := range files {
				assert.Equal(t, int64(1), f.version, "time travel lines carry the version read")
			}
		})
	}

	t.Run("timestamps are the log's commit times", func(t *testing.T) {
		r := c.do("POST", tp+"/query", nil, `{"timestamp":"`+t0.Add(90*time.Minute).Format(time.RFC3339)+`"}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, int64(1), r.version(t))
		r = c.do("GET", tp+"/version?startingTimestamp="+t0.Add(90*time.Minute).Format(time.RFC3339), nil, "")
		assert.Equal(t, int64(2), r.version(t))
		r = c.do("POST", tp+"/query", nil, `{"timestamp":"`+t0.Add(-time.Minute).Format(time.RFC3339)+`"}`)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		r = c.do("POST", tp+"/query", nil, `{"version":4}`)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	})

	t.Run("changes", func(t *testing.T) {
		for name, caps := range map[string]map[string]string{"parquet": nil, "delta": delta} {
			r := c.do("GET", tp+"/changes?startingVersion=0&endingVersion=1", caps, "")
			files := sharedFiles(t, r)
			require.Len(t, files, 3, name)
			byVersion := map[int64][]string{}
			for _, f := range files {
				assert.Equal(t, "add", f.kind, name)
				byVersion[f.version] = append(byVersion[f.version], f.partition["region"].(string))
			}
			for _, v := range byVersion {
				sort.Strings(v)
			}
			assert.Equal(t, map[int64][]string{0: {"eu", "us"}, 1: {"us"}}, byVersion, name)
			assert.Equal(t, map[int64]any{1: "eu", 2: "eu", 3: "eu", 4: "us", 5: "us"}, sharedRows(t, files), name)
		}
		// Version 2 rewrote a file without change files: its row-level
		// changes are unknown, so a change feed over it is refused...
		r := c.do("GET", tp+"/changes?startingVersion=1", nil, "")
		assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		assert.Contains(t, string(r.body), "version 2")
		// ...while a query from a starting version replays its files.
		r = c.do("POST", tp+"/query", delta, `{"startingVersion":2}`)
		files := sharedFiles(t, r)
		var kinds []string
		for _, f := range files {
			kinds = append(kinds, fmt.Sprintf("%s@%d:%s", f.kind, f.version, f.partition["region"]))
		}
		assert.ElementsMatch(t, []string{"remove@2:eu", "add@2:eu", "add@3:eu"}, kinds)
	})
}

// A log written with table features (reader 3 / writer 7) is reported
// with its own protocol by the Delta API (once synced) and by Sharing's
// delta format, never as the 1/2 a registration without a protocol
// implies; the parquet format still reads it (deletion vectors are
// refused only in versions whose files have them).
func TestExternalDeltaTableProtocolFromItsLog(t *testing.T) {
	base, dir := deltaSharingGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	loc := filepath.Join(dir, "features")
	mustRegisterExternal(t, base, "features", loc)
	a := writeIDs(t, loc, "region=eu/part-a.parquet", 1, 2)
	const protocol37 = `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],` +
		`"writerFeatures":["deletionVectors","invariants","appendOnly"]}}`
	logCommit(t, loc, 0, protocol37, metaLine(idRegion), addLine(a, "eu", 2))

	// An Iceberg reader syncs the table; the Delta API then answers the
	// log's protocol.
	ice := gatewayClient(t, base, "lake")
	assert.Equal(t, map[int64]string{1: "eu", 2: "eu"}, icebergRows(t, ice, "features"))
	code, out = call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/features", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	props := out["metadata"].(map[string]any)["properties"].(map[string]any)
	assert.Equal(t, "3", props["delta.minReaderVersion"])
	assert.Equal(t, "7", props["delta.minWriterVersion"])
	assert.Equal(t, "supported", props["delta.feature.deletionVectors"])
	assert.Equal(t, "supported", props["delta.feature.appendOnly"])

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	const tp = "/shares/demo/schemas/sales/tables/features"
	r := c.do("GET", tp+"/metadata", map[string]string{"delta-sharing-capabilities": "responseformat=delta"}, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"minReaderVersion": 3.0, "minWriterVersion": 7.0,
		"readerFeatures": []any{"deletionVectors"}, "writerFeatures": []any{"deletionVectors", "invariants", "appendOnly"}},
		protocolOf(t, r))
	r = c.do("GET", tp+"/metadata", nil, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"minReaderVersion": 1.0}, protocolOf(t, r))
	// A client that lists its reader features without the log's is refused.
	r = c.do("GET", tp+"/metadata", map[string]string{"delta-sharing-capabilities": "responseformat=delta;readerfeatures=columnmapping"}, "")
	assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), "deletionvectors")
}

// The UC Delta API's own example decimal, {"type":"decimal","precision":
// 10,"scale":2}, is a column type like "decimal(10,2)": accepted by
// createTable and answered back in the string form.
func TestDeltaDecimalObjectForm(t *testing.T) {
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(context.Background(), []string{"sales"}, nil))
	cols := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},` +
		`{"name":"amount","type":{"type":"decimal","precision":10,"scale":2},"nullable":true,"metadata":{}}]}`
	code, out := createEvents(t, base, dir, "money", map[string]any{"columns": json.RawMessage(cols)})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/money", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	fields := out["metadata"].(map[string]any)["columns"].(map[string]any)["fields"].([]any)
	assert.Equal(t, "decimal(10,2)", fields[1].(map[string]any)["type"])

	cols = `{"type":"struct","fields":[{"name":"amount","type":{"type":"decimal","precision":40,"scale":2},"nullable":true,"metadata":{}}]}`
	code, out = createEvents(t, base, dir, "bad", map[string]any{"columns": json.RawMessage(cols)})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Contains(t, errMessage(out), "precision must be between 1 and 38")
}
