package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A managed Delta table written as delta-spark writes one through the UC
// Delta API: Parquet files (partition columns only in the path), a staged
// commit file, then add-commit without UniForm metadata. The Iceberg side
// must then hold exactly the rows of each Delta version.
func TestDeltaDataCommitsBecomeIcebergSnapshots(t *testing.T) {
	ctx := context.Background()
	base, _ := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tables := base + deltaAPI + "/catalogs/lake/schemas/sales/tables"
	code, st := call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/staging-tables", map[string]any{"name": "events"})
	require.Equal(t, http.StatusOK, code, "%v", st)
	loc, id := st["location"].(string), st["table-id"].(string)
	code, out := call(t, http.MethodPost, tables, map[string]any{
		"name": "events", "location": loc, "table-type": "MANAGED",
		"columns": json.RawMessage(`{"type":"struct","fields":[
			{"name":"id","type":"long","nullable":true,"metadata":{}},
			{"name":"region","type":"string","nullable":true,"metadata":{}}]}`),
		"partition-columns": []string{"region"},
		"protocol":          map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties":        map[string]string{}, "last-commit-timestamp-ms": time.Now().UnixMilli(),
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	dir := strings.TrimPrefix(loc, "file://")

	// Version 1: two files in two partitions.
	a := writeIDs(t, dir, "region=eu/part-a.parquet", 1, 2, 3)
	b := writeIDs(t, dir, "region=us/part-b.parquet", 4)
	c1 := stagedCommit(t, dir, 1, addLine(a, "eu", 3), addLine(b, "us", 1))
	code, out = call(t, http.MethodPost, tables+"/events", dataCommit(id, c1, 1, 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.EqualValues(t, 1, out["latest-table-version"])
	assert.Nil(t, out["uniform"], "lakegate's own translation is no UniForm metadata")
	assert.Equal(t, map[int64]string{1: "eu", 2: "eu", 3: "eu", 4: "us"}, icebergRows(t, ice, "events"))

	// Version 2: an UPDATE that rewrote part-a (copy on write).
	a2 := writeIDs(t, dir, "region=eu/part-a2.parquet", 1, 3)
	c2 := stagedCommit(t, dir, 2, removeLine(a, "eu"), addLine(a2, "eu", 2))
	code, out = call(t, http.MethodPost, tables+"/events", dataCommit(id, c2, 2, 1))
	require.Equal(t, http.StatusOK, code, "%v", out)
	rows := map[int64]string{1: "eu", 3: "eu", 4: "us"}
	assert.Equal(t, rows, icebergRows(t, ice, "events"))
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	snaps := len(tbl.Metadata().Snapshots())

	// The client retries version 2 (its answer was lost): nothing changes.
	code, out = call(t, http.MethodPost, tables+"/events", dataCommit(id, c2, 2, 1))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, rows, icebergRows(t, ice, "events"))
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), snaps, "a retried commit adds no snapshot")

	// What Iceberg cannot hold is refused, and the table stays at version 2.
	d := writeIDs(t, dir, "region=eu/part-d.parquet", 9)
	for name, line := range map[string]string{
		"deletion vector": `{"add":{"path":"` + d + `","partitionValues":{"region":"eu"},"size":10,"modificationTime":1,"dataChange":true,` +
			`"stats":"{\"numRecords\":1}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":1}}}`,
		"no stats": `{"add":{"path":"` + d + `","partitionValues":{"region":"eu"},"size":10,"modificationTime":1,"dataChange":true}}`,
	} {
		c := stagedCommit(t, dir, 3, line)
		code, out = call(t, http.MethodPost, tables+"/events", dataCommit(id, c, 3, 2))
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", name, out)
		assert.Contains(t, errMessage(out), "cannot ratify this commit as an Iceberg snapshot", name)
	}
	for name, line := range map[string]string{
		"outside the table":  `{"add":{"path":"../elsewhere/x.parquet","partitionValues":{"region":"eu"},"size":10,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1}"}}`,
		"not a file action":  `{"add":"nonsense"}`,
		"removes a stranger": `{"remove":{"path":"region=eu/never.parquet","partitionValues":{"region":"eu"},"dataChange":true}}`,
	} {
		c := stagedCommit(t, dir, 3, line)
		code, out = call(t, http.MethodPost, tables+"/events", dataCommit(id, c, 3, 2))
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", name, out)
	}
	missing := dataCommit(id, fmt.Sprintf("%020d.%s.json", 3, uuid.NewString()), 3, 2)
	missing["updates"].([]map[string]any)[0]["commit"].(map[string]any)["file-size"] = 10
	code, out = call(t, http.MethodPost, tables+"/events", missing)
	assert.Equal(t, http.StatusBadRequest, code, "a commit file that is not there: %v", out)
	code, out = call(t, http.MethodGet, tables+"/events", nil)
	require.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, 2, out["latest-table-version"])
	assert.Equal(t, rows, icebergRows(t, ice, "events"))
}

// writeIDs writes a Parquet file of one long column "id" (no field ids,
// as Spark writes without column mapping) and returns its relative path.
func writeIDs(t *testing.T, dir, rel string, ids ...int64) string {
	t.Helper()
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	bld.AppendValues(ids, nil)
	col := bld.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	rec := array.NewRecord(sc, []arrow.Array{col}, int64(len(ids)))
	defer rec.Release()
	tbl := array.NewTableFromRecords(sc, []arrow.Record{rec})
	defer tbl.Release()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps())) // closes f
	fi, err := os.Stat(p)
	require.NoError(t, err)
	sizes[rel] = fi.Size()
	return rel
}

func addLine(rel, region string, n int) string {
	return fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{"region":%q},"size":%d,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":%d}"}}`,
		rel, region, sizeOf(rel), n)
}

func removeLine(rel, region string) string {
	return fmt.Sprintf(`{"remove":{"path":%q,"partitionValues":{"region":%q},"size":%d,"deletionTimestamp":1,"dataChange":true}}`,
		rel, region, sizeOf(rel))
}

// sizes and commitSizes are the files' sizes, as writers state them.
var sizes, commitSizes = map[string]int64{}, map[string]int64{}

func sizeOf(rel string) int64 { return sizes[rel] }

// stagedCommit writes a commit file of version v under
// _delta_log/_staged_commits and returns its name.
func stagedCommit(t *testing.T, dir string, v int64, lines ...string) string {
	t.Helper()
	name := fmt.Sprintf("%020d.%s.json", v, uuid.NewString())
	body := `{"commitInfo":{"timestamp":1,"operation":"WRITE"}}` + "\n" + strings.Join(lines, "\n") + "\n"
	p := filepath.Join(dir, "_delta_log", "_staged_commits", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	commitSizes[name] = int64(len(body))
	return name
}

func dataCommit(uuid, file string, v, backfilled int64) map[string]any {
	return map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates": []map[string]any{
			{"action": "add-commit", "commit": map[string]any{"version": v, "timestamp": time.Now().UnixMilli(),
				"file-name": file, "file-size": commitSizes[file], "file-modification-timestamp": time.Now().UnixMilli()}},
			{"action": "set-latest-backfilled-version", "latest-published-version": backfilled},
		},
	}
}

// icebergRows reads the table through the Iceberg door: the ids its scan
// returns, each with the region of the data file it came from (the
// identity partition value in the manifest, which is where the Iceberg
// spec has readers take a column the file does not hold; iceberg-go's
// scan itself leaves it empty).
func icebergRows(t *testing.T, ice interface {
	LoadTable(context.Context, table.Identifier) (*table.Table, error)
}, name string) map[int64]string {
	t.Helper()
	ctx := context.Background()
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", name})
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	spec := tbl.Metadata().PartitionSpec()
	out := map[int64]string{}
	for _, task := range tasks {
		region := task.File.Partition()[spec.Field(0).FieldID]
		f, err := os.Open(strings.TrimPrefix(task.File.FilePath(), "file://"))
		require.NoError(t, err)
		at, err := pqarrow.ReadTable(ctx, f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err)
		ids := at.Column(0).Data().Chunk(0).(*array.Int64)
		for i := 0; i < ids.Len(); i++ {
			out[ids.Value(i)] = region.(string)
		}
		at.Release()
		f.Close()
	}
	return out
}
