package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// planFixture is a partitioned v2 table written through iceberg-go's REST
// client in three appends, with what the tests need to call the scan
// planning endpoints directly.
type planFixture struct {
	ctx   context.Context
	cat   *embedded.Catalog
	name  string // catalog name = path prefix
	base  string // <server>/v1/<prefix>/namespaces/plans/tables
	cl    *rest.Catalog
	tbl   *table.Table
	rows  int64
	snaps []int64 // the snapshot each append made
	// Requests the server saw, to prove a remote scan used it.
	planCalls, taskCalls atomic.Int64
}

var (
	planNS    = table.Identifier{"plans"}
	planIdent = table.Identifier{"plans", "events"}
	dayZero   = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
)

// newPlanFixture serves a fresh SQLite catalog with the given catalog
// properties and fills plans.events: ids 1-8, 9-16 and 100-107, one
// append each.
func newPlanFixture(tb testing.TB, props map[string]string) *planFixture {
	tb.Helper()
	ctx := context.Background()
	cfg := embeddedtest.Config(tb, embedded.SQLite)
	cfg.Properties = props
	cat, err := embedded.Open(ctx, cfg, nil)
	require.NoError(tb, err)
	f := &planFixture{ctx: ctx, cat: cat, name: cfg.Name}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/plan"):
			f.planCalls.Add(1)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tasks"):
			f.taskCalls.Add(1)
		}
		cat.ServeHTTP(w, r)
	}))
	tb.Cleanup(func() {
		srv.Close()
		require.NoError(tb, cat.Close())
	})
	f.base = srv.URL + "/v1/" + url.PathEscape(cfg.Name) + "/namespaces/plans/tables"
	f.cl, err = rest.NewCatalog(ctx, "test", srv.URL)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = f.cl.Close() })

	require.NoError(tb, f.cl.CreateNamespace(ctx, planNS, nil))
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "category", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "category", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}},
	)
	f.tbl, err = f.cl.CreateTable(ctx, planIdent, schema, catalog.WithPartitionSpec(&spec),
		catalog.WithProperties(iceberg.Properties{"format-version": "2", "write.delete.mode": "merge-on-read"}))
	require.NoError(tb, err)
	f.append(tb, 1, 8)
	f.append(tb, 9, 16)
	f.append(tb, 100, 107)
	return f
}

// append commits ids from..to as one snapshot. Values derive from the id:
// pairs of ids share a category (every 7th is null), each append lands on
// its own day, every 5th score is null.
func (f *planFixture) append(tb testing.TB, from, to int64) {
	tb.Helper()
	sc, err := table.SchemaToArrowSchema(f.tbl.Schema(), nil, false, false)
	require.NoError(tb, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	day := dayZero.AddDate(0, 0, len(f.snaps))
	for id := from; id <= to; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append([]string{"a", "b", "c"}[(id/2)%3])
		}
		ts := day.Add(time.Duration(id%20) * time.Hour)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
		if id%5 == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(float64(id) * 1.5)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	require.NoError(tb, err)
	defer rdr.Release()
	f.tbl, err = f.tbl.Append(f.ctx, rdr, nil)
	require.NoError(tb, err)
	f.rows += to - from + 1
	f.snaps = append(f.snaps, f.tbl.CurrentSnapshot().SnapshotID)
}

// call sends a raw request to a path under .../tables.
func (f *planFixture) call(tb testing.TB, method, path, body string) (int, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(f.ctx, method, f.base+path, rd)
	require.NoError(tb, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, b
}

// plan POSTs a plan request and decodes the answer with iceberg-go's own
// client-side types, which validate the envelope.
func (f *planFixture) plan(tb testing.TB, body string) (rest.PlanTableScanResponse, []byte) {
	tb.Helper()
	status, b := f.call(tb, http.MethodPost, "/events/plan", body)
	require.Equal(tb, http.StatusOK, status, string(b))
	var resp rest.PlanTableScanResponse
	require.NoError(tb, json.Unmarshal(b, &resp), string(b))
	require.Equal(tb, rest.PlanStatusCompleted, resp.Status)
	require.NotNil(tb, resp.PlanID)
	require.NotEmpty(tb, *resp.PlanID)
	return resp, b
}

// decode turns one envelope into scan tasks with iceberg-go's decoder.
func (f *planFixture) decode(tb testing.TB, tasks rest.ScanTasks) []table.FileScanTask {
	tb.Helper()
	out, err := rest.DecodeScanTasks(tasks, f.tbl.Metadata(), nil, nil)
	require.NoError(tb, err)
	return out
}

func (f *planFixture) local(tb testing.TB, opts ...table.ScanOption) []table.FileScanTask {
	tb.Helper()
	tasks, err := f.tbl.Scan(opts...).PlanFiles(f.ctx)
	require.NoError(tb, err)
	return tasks
}

func paths(tasks []table.FileScanTask) []string {
	var out []string
	for _, t := range tasks {
		if !slices.Contains(out, t.File.FilePath()) {
			out = append(out, t.File.FilePath())
		}
	}
	slices.Sort(out)
	return out
}

func recordCount(tasks []table.FileScanTask) int64 {
	var n int64
	for _, t := range tasks {
		n += t.File.Count()
	}
	return n
}

func byPath(tasks []table.FileScanTask) map[string]table.FileScanTask {
	m := map[string]table.FileScanTask{}
	for _, t := range tasks {
		m[t.File.FilePath()] = t
	}
	return m
}

func errorType(tb testing.TB, body []byte) string {
	tb.Helper()
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	require.NoError(tb, json.Unmarshal(body, &e), string(body))
	return e.Error.Type
}

// rowsOf reads a scan and renders its rows as sorted strings.
func rowsOf(tb testing.TB, scan *table.Scan) []string {
	tb.Helper()
	defer scan.Close()
	_, seq, err := scan.ToArrowRecords(context.Background())
	require.NoError(tb, err)
	var rows []string
	for rec, err := range seq {
		require.NoError(tb, err)
		for i := range int(rec.NumRows()) {
			var parts []string
			for c, fld := range rec.Schema().Fields() {
				v := "null"
				if col := rec.Column(c); !col.IsNull(i) {
					v = col.ValueStr(i)
				}
				parts = append(parts, fld.Name+"="+v)
			}
			rows = append(rows, strings.Join(parts, ","))
		}
		rec.Release()
	}
	slices.Sort(rows)
	return rows
}

// rawTasks is the JSON of one envelope, to check the spec's spellings.
type rawTasks struct {
	PlanTasks     []string                     `json:"plan-tasks"`
	FileScanTasks []map[string]json.RawMessage `json:"file-scan-tasks"`
	DeleteFiles   []map[string]json.RawMessage `json:"delete-files"`
}

func TestPlanTableScanRawHTTP(t *testing.T) {
	f := newPlanFixture(t, nil)
	resp, body := f.plan(t, `{}`)
	require.Empty(t, resp.PlanTasks, "a small plan is answered inline")

	local := f.local(t)
	remote := f.decode(t, resp.ScanTasks)
	require.Equal(t, paths(local), paths(remote))
	require.Len(t, remote, len(paths(local)), "one task per file")
	require.Equal(t, f.rows, recordCount(remote))
	localByPath := byPath(local)
	for _, r := range remote {
		l := localByPath[r.File.FilePath()]
		require.Equal(t, l.File.Partition(), r.File.Partition(), r.File.FilePath())
		require.Equal(t, l.File.Count(), r.File.Count())
		require.Equal(t, l.File.FileSizeBytes(), r.File.FileSizeBytes())
		require.Equal(t, l.File.SplitOffsets(), r.File.SplitOffsets())
	}

	// The wire spellings the spec asks for.
	var raw rawTasks
	require.NoError(t, json.Unmarshal(body, &raw))
	require.NotEmpty(t, raw.FileScanTasks)
	var df map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw.FileScanTasks[0]["data-file"], &df))
	require.JSONEq(t, `"data"`, string(df["content"]))
	require.JSONEq(t, `"parquet"`, string(df["file-format"]))
	require.JSONEq(t, `0`, string(df["spec-id"]))
	var part []any
	require.NoError(t, json.Unmarshal(df["partition"], &part))
	require.Len(t, part, 2)
	require.Regexp(t, `^2024-01-0\d$`, part[1], "day partition is a date string")
	require.NotContains(t, df, "column-sizes", "stats only when stats-fields asks")
	require.NotContains(t, df, "lower-bounds")

	// GET returns the same completed result; DELETE drops it.
	id := *resp.PlanID
	status, got := f.call(t, http.MethodGet, "/events/plan/"+id, "")
	require.Equal(t, http.StatusOK, status, string(got))
	var fetched rest.FetchPlanningResultResponse
	require.NoError(t, json.Unmarshal(got, &fetched))
	require.Equal(t, rest.PlanStatusCompleted, fetched.Status)
	require.Equal(t, paths(remote), paths(f.decode(t, fetched.ScanTasks)))

	status, _ = f.call(t, http.MethodDelete, "/events/plan/"+id, "")
	require.Equal(t, http.StatusNoContent, status)
	status, got = f.call(t, http.MethodGet, "/events/plan/"+id, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NoSuchPlanIdException", errorType(t, got))
	status, got = f.call(t, http.MethodDelete, "/events/plan/"+id, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NoSuchPlanIdException", errorType(t, got))
}

func TestPlanStatsFields(t *testing.T) {
	f := newPlanFixture(t, nil)
	resp, body := f.plan(t, `{"stats-fields":["id","score"]}`)
	localByPath := byPath(f.local(t))
	for _, r := range f.decode(t, resp.ScanTasks) {
		l := localByPath[r.File.FilePath()]
		for _, id := range []int{1, 4} {
			require.Equal(t, l.File.LowerBoundValues()[id], r.File.LowerBoundValues()[id])
			require.Equal(t, l.File.UpperBoundValues()[id], r.File.UpperBoundValues()[id])
			require.Equal(t, l.File.ValueCounts()[id], r.File.ValueCounts()[id])
			require.Equal(t, l.File.NullValueCounts()[id], r.File.NullValueCounts()[id])
		}
		require.NotContains(t, r.File.LowerBoundValues(), 2, "category was not asked for")
	}
	var raw rawTasks
	require.NoError(t, json.Unmarshal(body, &raw))
	var df struct {
		LowerBounds struct {
			Keys   []int    `json:"keys"`
			Values []string `json:"values"`
		} `json:"lower-bounds"`
	}
	require.NoError(t, json.Unmarshal(raw.FileScanTasks[0]["data-file"], &df))
	require.Equal(t, 1, df.LowerBounds.Keys[0])
	require.Regexp(t, `^[0-9A-F]+$`, df.LowerBounds.Values[0], "binary values are uppercase hex")

	status, got := f.call(t, http.MethodPost, "/events/plan", `{"stats-fields":["nope"]}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "BadRequestException", errorType(t, got))
}

func TestPlanFilterPrunesFiles(t *testing.T) {
	f := newPlanFixture(t, nil)
	all := paths(f.local(t))

	t.Run("partition", func(t *testing.T) {
		resp, body := f.plan(t, `{"filter":{"type":"eq","term":"category","value":"a"}}`)
		remote := f.decode(t, resp.ScanTasks)
		want := paths(f.local(t, table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("category"), "a"))))
		require.Equal(t, want, paths(remote))
		require.Less(t, len(remote), len(all))
		for _, r := range remote {
			require.Equal(t, "a", r.File.Partition()[1000])
		}
		// The identity partition settles the filter: nothing left to apply.
		var raw rawTasks
		require.NoError(t, json.Unmarshal(body, &raw))
		for _, ft := range raw.FileScanTasks {
			require.JSONEq(t, `true`, string(ft["residual-filter"]))
		}
	})
	t.Run("metrics", func(t *testing.T) {
		resp, body := f.plan(t, `{"filter":{"type":"gt-eq","term":"id","value":100}}`)
		remote := f.decode(t, resp.ScanTasks)
		want := paths(f.local(t, table.WithRowFilter(iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(100)))))
		require.Equal(t, want, paths(remote))
		require.Less(t, len(remote), len(all))
		require.EqualValues(t, 8, recordCount(remote))
		// Column bounds prune files but do not settle rows: the residual
		// is the filter itself, left for the client.
		var raw rawTasks
		require.NoError(t, json.Unmarshal(body, &raw))
		for _, ft := range raw.FileScanTasks {
			require.NotContains(t, ft, "residual-filter")
		}
	})
	t.Run("case-insensitive", func(t *testing.T) {
		resp, _ := f.plan(t, `{"case-sensitive":false,"filter":{"type":"eq","term":"CATEGORY","value":"a"}}`)
		want := paths(f.local(t, table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("category"), "a"))))
		require.Equal(t, want, paths(f.decode(t, resp.ScanTasks)))
	})
	t.Run("always-false", func(t *testing.T) {
		resp, _ := f.plan(t, `{"filter":false}`)
		require.Empty(t, f.decode(t, resp.ScanTasks))
	})
	// The spec's TrueExpression and FalseExpression objects, alone and
	// nested, plan like the bare booleans.
	t.Run("true and false expressions", func(t *testing.T) {
		resp, _ := f.plan(t, `{"filter":{"type":"true"}}`)
		require.Equal(t, all, paths(f.decode(t, resp.ScanTasks)))
		resp, _ = f.plan(t, `{"filter":{"type":"false"}}`)
		require.Empty(t, f.decode(t, resp.ScanTasks))
		resp, _ = f.plan(t, `{"filter":{"type":"and","left":{"type":"true"},`+
			`"right":{"type":"not","child":{"type":"false"}}}}`)
		require.Equal(t, all, paths(f.decode(t, resp.ScanTasks)))
		resp, _ = f.plan(t, `{"filter":{"type":"or","left":{"type":"false"},`+
			`"right":{"type":"eq","term":"category","value":"a"}}}`)
		want := paths(f.local(t, table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("category"), "a"))))
		require.Equal(t, want, paths(f.decode(t, resp.ScanTasks)))
	})
}

func TestPlanSnapshotAndIncremental(t *testing.T) {
	f := newPlanFixture(t, nil)

	resp, _ := f.plan(t, fmt.Sprintf(`{"snapshot-id":%d,"use-snapshot-schema":true}`, f.snaps[0]))
	remote := f.decode(t, resp.ScanTasks)
	require.Equal(t, paths(f.local(t, table.WithSnapshotID(f.snaps[0]))), paths(remote))
	require.EqualValues(t, 8, recordCount(remote))

	resp, _ = f.plan(t, fmt.Sprintf(`{"start-snapshot-id":%d,"end-snapshot-id":%d}`, f.snaps[0], f.snaps[2]))
	remote = f.decode(t, resp.ScanTasks)
	want, err := f.tbl.NewIncrementalAppendScan().FromSnapshotExclusive(f.snaps[0]).ToSnapshot(f.snaps[2]).PlanFiles(f.ctx)
	require.NoError(t, err)
	require.Equal(t, paths(want), paths(remote))
	require.EqualValues(t, 16, recordCount(remote), "the second and third appends")
}

// TestPlanSnapshotSchema renames a column after the first snapshot: names
// in a time-travel request resolve against the snapshot's schema only when
// use-snapshot-schema asks for it.
func TestPlanSnapshotSchema(t *testing.T) {
	f := newPlanFixture(t, nil)
	tx := f.tbl.NewTransaction()
	require.NoError(t, tx.UpdateSchema(true, false).RenameColumn([]string{"category"}, "kind").Commit())
	var err error
	f.tbl, err = tx.Commit(f.ctx)
	require.NoError(t, err)
	snap0 := paths(f.local(t, table.WithSnapshotID(f.snaps[0])))

	// Old name, snapshot schema: pruned like a local time-travel scan.
	resp, _ := f.plan(t, fmt.Sprintf(
		`{"snapshot-id":%d,"use-snapshot-schema":true,"filter":{"type":"eq","term":"category","value":"a"}}`, f.snaps[0]))
	pruned := paths(f.decode(t, resp.ScanTasks))
	require.Equal(t, paths(f.local(t, table.WithSnapshotID(f.snaps[0]),
		table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("category"), "a")))), pruned)
	require.Less(t, len(pruned), len(snap0))

	// New name, table schema: valid, but the server cannot bind it against
	// the snapshot's schema, so it keeps every file and no residual.
	resp, body := f.plan(t, fmt.Sprintf(
		`{"snapshot-id":%d,"filter":{"type":"eq","term":"kind","value":"a"}}`, f.snaps[0]))
	require.Equal(t, snap0, paths(f.decode(t, resp.ScanTasks)))
	var raw rawTasks
	require.NoError(t, json.Unmarshal(body, &raw))
	for _, ft := range raw.FileScanTasks {
		require.NotContains(t, ft, "residual-filter")
	}

	// Each name is unknown in the other schema.
	status, got := f.call(t, http.MethodPost, "/events/plan", fmt.Sprintf(
		`{"snapshot-id":%d,"use-snapshot-schema":true,"filter":{"type":"eq","term":"kind","value":"a"}}`, f.snaps[0]))
	require.Equal(t, http.StatusBadRequest, status, string(got))
	status, got = f.call(t, http.MethodPost, "/events/plan", fmt.Sprintf(
		`{"snapshot-id":%d,"select":["category"]}`, f.snaps[0]))
	require.Equal(t, http.StatusBadRequest, status, string(got))
}

// TestPlanRemoteScan reads the table through iceberg-go's server-side scan
// planning mode and compares every row with a locally planned scan.
func TestPlanRemoteScan(t *testing.T) {
	remote := func(f *planFixture, opts ...table.ScanOption) *table.Scan {
		return f.tbl.Scan(append(opts, table.WithScanPlanningMode(table.ScanPlanningRemote))...)
	}
	t.Run("all", func(t *testing.T) {
		f := newPlanFixture(t, nil)
		before := f.planCalls.Load()
		got := rowsOf(t, remote(f))
		require.Greater(t, f.planCalls.Load(), before, "the scan was planned by the server")
		require.Equal(t, rowsOf(t, f.tbl.Scan()), got)
		require.Len(t, got, int(f.rows))
	})
	t.Run("filter", func(t *testing.T) {
		f := newPlanFixture(t, nil)
		filter := table.WithRowFilter(iceberg.NewAnd(
			iceberg.GreaterThan(iceberg.Reference("id"), int64(4)),
			iceberg.NotEqualTo(iceberg.Reference("category"), "b")))
		got := rowsOf(t, remote(f, filter, table.WithSelectedFields("id", "category")))
		require.Equal(t, rowsOf(t, f.tbl.Scan(filter, table.WithSelectedFields("id", "category"))), got)
		require.NotEmpty(t, got)
	})
	t.Run("plan-tasks", func(t *testing.T) {
		f := newPlanFixture(t, map[string]string{embedded.FilesPerPlanTaskProperty: "2"})
		got := rowsOf(t, remote(f))
		require.Positive(t, f.taskCalls.Load(), "tasks were fetched through fetchScanTasks")
		require.Equal(t, rowsOf(t, f.tbl.Scan()), got)
		require.Len(t, got, int(f.rows))
	})
	t.Run("position-deletes", func(t *testing.T) {
		f := newPlanFixture(t, nil)
		tx := f.tbl.NewTransaction()
		require.NoError(t, tx.Delete(f.ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(3)), nil))
		var err error
		f.tbl, err = tx.Commit(f.ctx)
		require.NoError(t, err)

		// The raw plan carries the delete file once, referenced by index.
		resp, body := f.plan(t, `{}`)
		var raw rawTasks
		require.NoError(t, json.Unmarshal(body, &raw))
		require.Len(t, raw.DeleteFiles, 1)
		require.JSONEq(t, `"position-deletes"`, string(raw.DeleteFiles[0]["content"]))
		refs := 0
		for _, ft := range raw.FileScanTasks {
			if r, ok := ft["delete-file-references"]; ok {
				require.JSONEq(t, `[0]`, string(r))
				refs++
			}
		}
		require.Equal(t, 1, refs)
		decoded := f.decode(t, resp.ScanTasks)
		require.Equal(t, paths(f.local(t)), paths(decoded))

		got := rowsOf(t, remote(f))
		require.Equal(t, rowsOf(t, f.tbl.Scan()), got)
		require.Len(t, got, int(f.rows)-1)
	})
}

func TestPlanTasksFanout(t *testing.T) {
	f := newPlanFixture(t, map[string]string{embedded.FilesPerPlanTaskProperty: "2"})
	resp, body := f.plan(t, `{}`)
	local := f.local(t)
	n := len(paths(local))
	require.Len(t, resp.PlanTasks, (n+1)/2)
	var raw rawTasks
	require.NoError(t, json.Unmarshal(body, &raw))
	require.Empty(t, raw.FileScanTasks)

	var remote []table.FileScanTask
	for _, pt := range resp.PlanTasks {
		status, got := f.call(t, http.MethodPost, "/events/tasks", fmt.Sprintf(`{"plan-task":%q}`, pt))
		require.Equal(t, http.StatusOK, status, string(got))
		var fr rest.FetchScanTasksResponse
		require.NoError(t, json.Unmarshal(got, &fr))
		tasks := f.decode(t, fr.ScanTasks)
		require.LessOrEqual(t, len(tasks), 2)
		remote = append(remote, tasks...)
	}
	require.Equal(t, paths(local), paths(remote))
	require.Equal(t, f.rows, recordCount(remote))

	// A plan-task is scoped to its table and dies with its plan.
	_, err := f.cl.CreateTable(f.ctx, table.Identifier{"plans", "other"}, f.tbl.Schema())
	require.NoError(t, err)
	task := fmt.Sprintf(`{"plan-task":%q}`, resp.PlanTasks[0])
	status, got := f.call(t, http.MethodPost, "/other/tasks", task)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NoSuchPlanTaskException", errorType(t, got))
	status, got = f.call(t, http.MethodGet, "/other/plan/"+*resp.PlanID, "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NoSuchPlanIdException", errorType(t, got))

	status, _ = f.call(t, http.MethodDelete, "/events/plan/"+*resp.PlanID, "")
	require.Equal(t, http.StatusNoContent, status)
	status, got = f.call(t, http.MethodPost, "/events/tasks", task)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "NoSuchPlanTaskException", errorType(t, got))
}

func TestPlanErrors(t *testing.T) {
	f := newPlanFixture(t, nil)
	cases := []struct {
		name, method, path, body string
		status                   int
		errType                  string
	}{
		{"malformed body", "POST", "/events/plan", `{`, 400, "BadRequestException"},
		{"body not an object", "POST", "/events/plan", `[1]`, 400, "BadRequestException"},
		{"bad filter json", "POST", "/events/plan", `{"filter":{"type":"eq"}}`, 400, "BadRequestException"},
		{"unknown filter op", "POST", "/events/plan", `{"filter":{"type":"like","term":"id","value":1}}`, 400, "BadRequestException"},
		{"filter unknown column", "POST", "/events/plan", `{"filter":{"type":"eq","term":"nope","value":1}}`, 400, "BadRequestException"},
		{"filter wrong case", "POST", "/events/plan", `{"filter":{"type":"eq","term":"ID","value":1}}`, 400, "BadRequestException"},
		{"filter bad literal", "POST", "/events/plan", `{"filter":{"type":"eq","term":"id","value":"x"}}`, 400, "BadRequestException"},
		{"unknown snapshot", "POST", "/events/plan", `{"snapshot-id":12345}`, 400, "BadRequestException"},
		{"unknown start snapshot", "POST", "/events/plan", fmt.Sprintf(`{"start-snapshot-id":1,"end-snapshot-id":%d}`, f.snaps[2]), 400, "BadRequestException"},
		{"start after end", "POST", "/events/plan", fmt.Sprintf(`{"start-snapshot-id":%d,"end-snapshot-id":%d}`, f.snaps[2], f.snaps[0]), 400, "BadRequestException"},
		{"unknown select column", "POST", "/events/plan", `{"select":["id","nope"]}`, 400, "BadRequestException"},
		{"snapshot and range", "POST", "/events/plan", fmt.Sprintf(`{"snapshot-id":%d,"start-snapshot-id":%d,"end-snapshot-id":%d}`, f.snaps[1], f.snaps[0], f.snaps[1]), 400, "BadRequestException"},
		{"start without end", "POST", "/events/plan", fmt.Sprintf(`{"start-snapshot-id":%d}`, f.snaps[0]), 400, "BadRequestException"},
		{"negative min rows", "POST", "/events/plan", `{"min-rows-requested":-1}`, 400, "BadRequestException"},
		{"missing table", "POST", "/missing/plan", `{}`, 404, "NoSuchTableException"},
		{"unknown plan get", "GET", "/events/plan/nope", "", 404, "NoSuchPlanIdException"},
		{"unknown plan delete", "DELETE", "/events/plan/nope", "", 404, "NoSuchPlanIdException"},
		{"unknown plan task", "POST", "/events/tasks", `{"plan-task":"nope"}`, 404, "NoSuchPlanTaskException"},
		{"missing plan task", "POST", "/events/tasks", `{}`, 400, "BadRequestException"},
		{"malformed tasks body", "POST", "/events/tasks", `{"plan-task":1}`, 400, "BadRequestException"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.call(t, tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, status, string(body))
			require.Equal(t, tc.errType, errorType(t, body))
		})
	}

	t.Run("empty body plans the current snapshot", func(t *testing.T) {
		status, body := f.call(t, http.MethodPost, "/events/plan", "")
		require.Equal(t, http.StatusOK, status, string(body))
	})
	t.Run("iceberg-go client sees a missing table", func(t *testing.T) {
		_, err := f.cl.PlanTableScan(f.ctx, table.Identifier{"plans", "missing"}, rest.PlanTableScanRequest{})
		require.ErrorIs(t, err, catalog.ErrNoSuchTable)
		_, err = f.cl.FetchPlanningResult(f.ctx, planIdent, "nope", rest.FetchPlanningResultOptions{})
		require.ErrorIs(t, err, rest.ErrPlanExpired)
		_, err = f.cl.FetchScanTasks(f.ctx, planIdent, rest.FetchScanTasksRequest{PlanTask: "nope"})
		require.ErrorIs(t, err, rest.ErrNoSuchPlanTask)
	})
}

// FuzzPlanRequest feeds arbitrary bodies to planTableScan: any answer
// below 500 is fine, a 5xx or a panic is a bug.
func FuzzPlanRequest(f *testing.F) {
	fx := newPlanFixture(f, nil)
	path := "/v1/" + url.PathEscape(fx.name) + "/namespaces/plans/tables/events/plan"
	f.Add([]byte(`{}`))
	f.Add([]byte(fmt.Sprintf(`{"snapshot-id":%d}`, fx.snaps[0])))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		fx.cat.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}
