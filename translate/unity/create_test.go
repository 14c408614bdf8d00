package unity

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The body the UC Spark connector sends for CREATE TABLE ... LOCATION, and
// one with columns, become the Delta API's create of an external table.
func TestParseCreateTable(t *testing.T) {
	req, err := ParseCreateTable([]byte(`{"name":"t_external","catalog_name":"unity","schema_name":"sch","table_type":"EXTERNAL",
		"data_source_format":"DELTA","columns":[],"storage_location":"file:/tmp/ext/t","properties":{}}`))
	require.NoError(t, err)
	assert.Equal(t, "file:///tmp/ext/t", *req.delta.Location)
	assert.Equal(t, "EXTERNAL", *req.delta.TableType)

	req, err = ParseCreateTable([]byte(`{"name":"t","catalog_name":"unity","schema_name":"sch","table_type":"EXTERNAL",
		"columns":[{"name":"id","type_json":"{\"name\":\"id\",\"type\":\"long\",\"nullable\":false,\"metadata\":{}}","partition_index":1},
		           {"name":"r","type_json":"{\"name\":\"r\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}","partition_index":0}],
		"storage_location":"s3://b/t","comment":"c","properties":{"k":"v"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"r", "id"}, req.delta.PartitionColumns, "partition columns in partition_index order")
	assert.JSONEq(t, `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},
		{"name":"r","type":"string","nullable":true,"metadata":{}}]}`, string(req.delta.Columns))
	assert.Equal(t, "v", req.delta.Properties["k"])
}

func TestParseCreateTableBadInput(t *testing.T) {
	const ok = `"name":"t","catalog_name":"c","schema_name":"s","storage_location":"file:///x/t"`
	for _, tc := range []struct {
		body, code, msg string
	}{
		{`{`, InvalidArgument, "malformed CreateTable"},
		{`{"catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","storage_location":"file:///x"}`, InvalidArgument, "name is required"},
		{`{"name":"t","schema_name":"s","table_type":"EXTERNAL","storage_location":"file:///x"}`, InvalidArgument, "catalog_name is required"},
		{`{"name":"t","catalog_name":"c","table_type":"EXTERNAL","storage_location":"file:///x"}`, InvalidArgument, "schema_name is required"},
		{`{` + ok + `}`, InvalidArgument, "table_type is required"},
		{`{"name":"t","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL"}`, InvalidArgument, "storage_location is required"},
		{`{` + ok + `,"table_type":"VIEW"}`, InvalidArgument, "createTable makes EXTERNAL and MANAGED tables"},
		{`{` + ok + `,"table_type":"MANAGED"}`, InvalidArgument, "columns"},
		{`{` + ok + `,"table_type":"EXTERNAL","data_source_format":"PARQUET"}`, UnsupportedTableFormat, "PARQUET"},
		{`{` + ok + `,"table_type":"EXTERNAL","columns":[{"name":"id"}]}`, InvalidArgument, `column "id" has no type_json`},
		{`{` + ok + `,"table_type":"EXTERNAL","columns":[{"name":"id","type_json":"{\"name\":\"other\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}"}]}`,
			InvalidArgument, "not that column's Spark field"},
		{`{` + ok + `,"table_type":"EXTERNAL","columns":[{"name":"id","type_json":"nonsense"}]}`, InvalidArgument, "not that column's Spark field"},
		{`{"name":"a.b","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","storage_location":"file:///x"}`, InvalidArgument, "name"},
		{`{` + ok + `,"table_type":"EXTERNAL","storage_location":"relative/path"}`, InvalidArgument, "location"},
	} {
		_, err := ParseCreateTable([]byte(tc.body))
		require.Error(t, err, tc.body)
		e := AsError(err)
		assert.Equal(t, http.StatusBadRequest, e.Status, tc.body)
		assert.Equal(t, tc.code, e.Code, tc.body)
		assert.Contains(t, e.Message, tc.msg, tc.body)
	}
}
