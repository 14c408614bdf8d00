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

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An EXTERNAL Delta table registered as UC's Spark connector registers one
// (UC createTable, no columns, a LOCATION), then committed by its engine
// straight to its _delta_log: the Iceberg door serves each log version's
// schema, partitioning and rows, and refuses Iceberg writes to it.
func TestExternalDeltaTableFollowsItsLog(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	loc := filepath.Join(dir, "events")
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", map[string]any{
		"name": "events", "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": "file:" + loc, "properties": map[string]string{},
		"columns": []any{}})
	require.Equal(t, http.StatusOK, code, "%v", out)

	// No log yet: the table is what the create said.
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Empty(t, tbl.Schema().Fields())

	// Version 0: CREATE TABLE + INSERT, partitioned by region.
	a := writeIDs(t, loc, "region=eu/part-a.parquet", 1, 2, 3)
	b := writeIDs(t, loc, "region=us/part-b.parquet", 4)
	logCommit(t, loc, 0, protocolLine, metaLine(idRegion), addLine(a, "eu", 3), addLine(b, "us", 1))
	assert.Equal(t, map[int64]string{1: "eu", 2: "eu", 3: "eu", 4: "us"}, icebergRows(t, ice, "events"))
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Equal(t, []string{"id", "region"}, fieldNames(tbl))
	assert.Equal(t, "0", tbl.Properties()["lakegate.delta.synced-version"])
	snaps := len(tbl.Metadata().Snapshots())

	// Loading again changes nothing: the log has not moved.
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), snaps)

	// Versions 1 and 2 at once: an UPDATE that rewrote part-a, then ADD
	// COLUMNS and an INSERT.
	a2 := writeIDs(t, loc, "region=eu/part-a2.parquet", 1, 3)
	logCommit(t, loc, 1, removeLine(a, "eu"), addLine(a2, "eu", 2))
	c := writeIDs(t, loc, "region=us/part-c.parquet", 5)
	logCommit(t, loc, 2, metaLine(idRegionScore), addLine(c, "us", 1))
	assert.Equal(t, map[int64]string{1: "eu", 3: "eu", 4: "us", 5: "us"}, icebergRows(t, ice, "events"))
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Equal(t, []string{"id", "region", "score"}, fieldNames(tbl))
	assert.Equal(t, "2", tbl.Properties()["lakegate.delta.synced-version"])
	assert.Contains(t, tbl.Properties()["schema.name-mapping.default"], `"score"`)

	// An Iceberg write would be undone by the next sync: refused.
	err = setOwner(ctx, tbl)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EXTERNAL Delta table")

	// The record of commits through the gateway has the create, through
	// the Unity Catalog door, and none of the sync's copies of the log's
	// commits (made by the engine, not by whoever loaded the table). The
	// record is written in order: once a later create is there, every
	// earlier entry is.
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", map[string]any{
		"name": "marker", "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": "file:" + filepath.Join(dir, "marker"), "properties": map[string]string{},
		"columns": []any{}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	commitsOf(t, base, "", "sales", "marker", 1)
	rec := commitsOf(t, base, "", "sales", "events", 1)
	assert.Equal(t, "unity", rec.Commits[0].Door)
	assert.Equal(t, []string{"create"}, rec.Commits[0].Kinds)

	// What Iceberg cannot show (a deletion vector) fails the load clearly,
	// and the table stays at version 2.
	d := writeIDs(t, loc, "region=eu/part-d.parquet", 9)
	logCommit(t, loc, 3, `{"add":{"path":"`+d+`","partitionValues":{"region":"eu"},"size":10,"modificationTime":1,"dataChange":true,`+
		`"stats":"{\"numRecords\":1}","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":1}}}`)
	code, out = call(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/events", nil)
	assert.Equal(t, http.StatusNotAcceptable, code, "%v", out)
	assert.Contains(t, errMessage(out), "deletion vector")
	assert.Equal(t, "UnsupportedOperationException", out["error"].(map[string]any)["type"])
}

// A MANAGED table and an EXTERNAL one without a log are untouched by the
// sync, and Iceberg writes to the MANAGED one still go through.
func TestExternalSyncLeavesOtherTablesAlone(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	code, out := createEvents(t, base, dir, "ext", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "ext"})
	require.NoError(t, err)
	assert.NotContains(t, tbl.Properties(), "lakegate.delta.synced-version")

	plain, err := ice.CreateTable(ctx, table.Identifier{"sales", "plain"}, tbl.Schema())
	require.NoError(t, err)
	require.NoError(t, setOwner(ctx, plain))
}

const protocolLine = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`

const (
	idRegion      = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"region","type":"string","nullable":true,"metadata":{}}]}`
	idRegionScore = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"region","type":"string","nullable":true,"metadata":{}},{"name":"score","type":"double","nullable":true,"metadata":{}}]}`
)

func metaLine(schemaString string) string {
	b, _ := json.Marshal(map[string]any{"metaData": map[string]any{
		"id": "5d1f3e52-4b5e-4f0a-9d47-0e4c3b8a1f00", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
		"schemaString": schemaString, "partitionColumns": []string{"region"}, "configuration": map[string]string{},
		"createdTime": 1700000000000,
	}})
	return string(b)
}

// logCommit writes version v of the table's Delta log, as an engine
// committing to an EXTERNAL table does.
func logCommit(t *testing.T, loc string, v int64, lines ...string) {
	t.Helper()
	body := `{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE"}}` + "\n" + strings.Join(lines, "\n") + "\n"
	p := filepath.Join(loc, "_delta_log", fmt.Sprintf("%020d.json", v))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

func fieldNames(tbl *table.Table) []string {
	var out []string
	for _, f := range tbl.Schema().Fields() {
		out = append(out, f.Name)
	}
	return out
}

// setOwner commits a property through the Iceberg door.
func setOwner(ctx context.Context, tbl *table.Table) error {
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(map[string]string{"owner": "iceberg"}); err != nil {
		return err
	}
	_, err := tx.Commit(ctx)
	return err
}
