package delta

import (
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Partition values as Delta writers serialize them ("Partition Value
// Serialization" in PROTOCOL.md) become the values Iceberg keeps.
func TestPartitionValue(t *testing.T) {
	micros := func(s string) iceberg.Timestamp {
		ts, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return iceberg.Timestamp(ts.UnixMicro())
	}
	for _, tc := range []struct {
		in   string
		typ  iceberg.Type
		want any
	}{
		{"eu", iceberg.PrimitiveTypes.String, "eu"},
		{"-7", iceberg.PrimitiveTypes.Int32, int32(-7)},
		{"2024-02-29", iceberg.PrimitiveTypes.Date, iceberg.Date(19782)},
		{"2024-01-02 03:04:05", iceberg.PrimitiveTypes.Timestamp, micros("2024-01-02T03:04:05Z")},
		{"2024-01-02 03:04:05.123456", iceberg.PrimitiveTypes.Timestamp, micros("2024-01-02T03:04:05.123456Z")},
		{"2024-01-02T03:04:05.5Z", iceberg.PrimitiveTypes.Timestamp, micros("2024-01-02T03:04:05.5Z")},
		{"2024-01-02T03:04:05.123456Z", iceberg.PrimitiveTypes.TimestampTz, micros("2024-01-02T03:04:05.123456Z")},
	} {
		got, err := partitionValue(tc.in, tc.typ)
		require.NoError(t, err, "%s as %s", tc.in, tc.typ)
		assert.Equal(t, tc.want, got, "%s as %s", tc.in, tc.typ)
	}
}

// Bad or ambiguous partition values are refused, never guessed.
func TestPartitionValueBadInput(t *testing.T) {
	for _, tc := range []struct {
		in      string
		typ     iceberg.Type
		message string // "" = any parse error
	}{
		{"x", iceberg.PrimitiveTypes.Int32, ""},
		{"99999999999", iceberg.PrimitiveTypes.Int32, ""},
		{"2024-13-01", iceberg.PrimitiveTypes.Date, ""},
		{"2024-01-02", iceberg.PrimitiveTypes.Timestamp, ""},
		{"2024-01-02 25:00:00", iceberg.PrimitiveTypes.Timestamp, ""},
		{"2024-01-02T03:04:05+02:00", iceberg.PrimitiveTypes.TimestampTz, "in the writer's session time zone"},
		{"2024-01-02 03:04:05", iceberg.PrimitiveTypes.TimestampTz, "in the writer's session time zone"},
		{"AQID", iceberg.PrimitiveTypes.Binary, "partition values of type binary are not translated"},
	} {
		_, err := partitionValue(tc.in, tc.typ)
		require.Error(t, err, "%s as %s", tc.in, tc.typ)
		if tc.message != "" {
			assert.Contains(t, err.Error(), tc.message, "%s as %s", tc.in, tc.typ)
		}
	}
}

// A data commit's file paths are decoded (deltalog.ResolvePath) and must
// name files under the table.
func TestResolveDataFilePath(t *testing.T) {
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	m, err := table.NewMetadata(sch, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///wh/t", nil)
	require.NoError(t, err)
	tr := fileTranslator{m: m}
	for in, want := range map[string]string{
		"region=us%2Feast%201/part-0.parquet": "file:///wh/t/region=us/east 1/part-0.parquet",
		"file:///wh/t/part-1.parquet":         "file:///wh/t/part-1.parquet",
		"file:/wh/t/part-2.parquet":           "file:///wh/t/part-2.parquet",
	} {
		got, err := tr.resolve(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "../other/part.parquet", "file:///wh/other/part.parquet",
		"file:///wh/t/../u/part.parquet", "s3://bucket/t/part.parquet", "part.parquet?x=1", "%zz"} {
		_, err := tr.resolve(bad)
		require.Error(t, err, bad)
		e := AsError(err)
		assert.Equal(t, 400, e.Code, bad)
		assert.Equal(t, InvalidParameterValue, e.Type, bad)
	}
}
