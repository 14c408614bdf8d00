package actions_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// Field ids of testSchema.
const (
	idID     = 1
	idName   = 2
	idTS     = 3
	idDay    = 4
	idPrice  = 5
	idFlag   = 6
	idLong   = 7
	idFloat  = 8
	idDouble = 9
	idBin    = 10
	idUUID   = 11
	idFixed  = 12
	idStruct = 13
	idA      = 14
	idB      = 15
	idC      = 16
	idTags   = 17
	idTagEl  = 18
	idMap    = 19
	idMapK   = 20
	idMapV   = 21
)

func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: idID, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: idName, Name: "name", Type: iceberg.PrimitiveTypes.String, Doc: "who"},
		iceberg.NestedField{ID: idTS, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: idDay, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: idPrice, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: idFlag, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: idLong, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: idFloat, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: idDouble, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: idBin, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: idUUID, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: idFixed, Name: "fx", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: idStruct, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: idA, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: idB, Name: "b", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: idC, Name: "c", Type: iceberg.PrimitiveTypes.Int64},
			}}},
		}}},
		iceberg.NestedField{ID: idTags, Name: "tags", Type: &iceberg.ListType{
			ElementID: idTagEl, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: idMap, Name: "m", Type: &iceberg.MapType{
			KeyID: idMapK, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: idMapV, ValueType: iceberg.PrimitiveTypes.Int32}},
	)
}

// testSpec partitions by day and name (identity: partition columns) and
// buckets id (not a Delta partition column).
func testSpec() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(1,
		iceberg.PartitionField{SourceIDs: []int{idDay}, FieldID: 1000, Name: "day", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{idName}, FieldID: 1001, Name: "name_part", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{idID}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
	)
}

type fileOpts struct {
	partition    map[int]any
	lower, upper map[int][]byte
	nulls, nans  map[int]int64
}

func dataFile(t *testing.T, spec iceberg.PartitionSpec, path string, count, size int64, o fileOpts) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, path, iceberg.ParquetFile,
		o.partition, nil, nil, count, size)
	if err != nil {
		t.Fatal(err)
	}
	if o.lower != nil {
		b.LowerBoundValues(o.lower)
	}
	if o.upper != nil {
		b.UpperBoundValues(o.upper)
	}
	if o.nulls != nil {
		b.NullValueCounts(o.nulls)
	}
	if o.nans != nil {
		b.NaNValueCounts(o.nans)
	}
	return b.Build()
}

// bin is a literal's Iceberg single-value serialization, as manifests keep
// bounds.
func bin(t *testing.T, lit iceberg.Literal) []byte {
	t.Helper()
	b, err := lit.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dec(unscaled int64, scale int) iceberg.DecimalLiteral {
	return iceberg.DecimalLiteral{Val: decimal128.FromI64(unscaled), Scale: scale}
}

func micros(s string) iceberg.Timestamp {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return iceberg.Timestamp(tm.UnixMicro())
}

func days(s string) iceberg.Date {
	tm, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return iceberg.Date(tm.Unix() / 86400)
}

// parse decodes JSON, also decoding the JSON-in-a-string fields (stats,
// schemaString) so expectations can be written as plain nested JSON.
func parse(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return expandEmbedded(t, v)
}

func expandEmbedded(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "stats" || k == "schemaString") {
				var inner any
				if err := json.Unmarshal([]byte(s), &inner); err != nil {
					t.Fatalf("%s is not JSON: %q", k, s)
				}
				x[k] = inner
				continue
			}
			x[k] = expandEmbedded(t, e)
		}
	case []any:
		for i, e := range x {
			x[i] = expandEmbedded(t, e)
		}
	}
	return v
}

func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	g := parse(t, got)
	w := parse(t, []byte(want))
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.MarshalIndent(g, "", "  ")
		wb, _ := json.MarshalIndent(w, "", "  ")
		t.Fatalf("got:\n%s\nwant:\n%s", gb, wb)
	}
}

var nan32 = float32(math.NaN())

func posInf() float64 { return math.Inf(1) }
