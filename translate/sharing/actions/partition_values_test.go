package actions_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakegate/lakegate/translate/sharing/actions"
)

func TestPartitionValuesTypes(t *testing.T) {
	u := uuid.MustParse("f8d5c169-3d01-4ca3-ad9e-7dc3355aedb2")
	cases := []struct {
		name string
		typ  iceberg.Type
		val  any
		want *string
	}{
		{"int", iceberg.PrimitiveTypes.Int32, int32(-42), ptr("-42")},
		{"int literal", iceberg.PrimitiveTypes.Int32, iceberg.Int32Literal(7), ptr("7")},
		{"long", iceberg.PrimitiveTypes.Int64, int64(1) << 40, ptr("1099511627776")},
		{"string", iceberg.PrimitiveTypes.String, "a b/c=d", ptr("a b/c=d")},
		{"date", iceberg.PrimitiveTypes.Date, days("2021-04-28"), ptr("2021-04-28")},
		{"date raw avro int", iceberg.PrimitiveTypes.Date, int32(days("1970-01-02")), ptr("1970-01-02")},
		{"date time.Time before epoch", iceberg.PrimitiveTypes.Date,
			time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), ptr("1969-12-31")},
		{"timestamptz whole seconds", iceberg.PrimitiveTypes.TimestampTz,
			micros("2021-04-28T23:36:51Z"), ptr("2021-04-28 23:36:51")},
		{"timestamptz micros", iceberg.PrimitiveTypes.TimestampTz,
			micros("2021-04-28T23:36:51.945001Z"), ptr("2021-04-28 23:36:51.945001")},
		{"timestamptz millis padded", iceberg.PrimitiveTypes.TimestampTz,
			micros("2021-04-28T23:36:51.5Z"), ptr("2021-04-28 23:36:51.500000")},
		{"timestamp ntz raw avro long", iceberg.PrimitiveTypes.Timestamp,
			int64(micros("1970-01-01T00:00:00.123456Z")), ptr("1970-01-01 00:00:00.123456")},
		{"bool true", iceberg.PrimitiveTypes.Bool, true, ptr("true")},
		{"bool false", iceberg.PrimitiveTypes.Bool, false, ptr("false")},
		{"decimal literal", iceberg.DecimalTypeOf(10, 2), dec(-1250, 2), ptr("-12.50")},
		{"decimal", iceberg.DecimalTypeOf(10, 3), iceberg.Decimal(dec(5, 3)), ptr("0.005")},
		{"decimal scale 0", iceberg.DecimalTypeOf(38, 0), dec(123, 0), ptr("123")},
		{"double", iceberg.PrimitiveTypes.Float64, 2.5, ptr("2.5")},
		{"double inf", iceberg.PrimitiveTypes.Float64, posInf(), ptr("Infinity")},
		{"float", iceberg.PrimitiveTypes.Float32, float32(0.1), ptr("0.1")},
		{"uuid", iceberg.PrimitiveTypes.UUID, u, ptr(u.String())},
		{"binary", iceberg.PrimitiveTypes.Binary, []byte{1, 2, 3}, ptr("\x01\x02\x03")},
		{"null", iceberg.PrimitiveTypes.Int32, nil, nil},
		{"null string", iceberg.PrimitiveTypes.String, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "p", Type: tc.typ})
			spec := iceberg.NewPartitionSpecID(0, iceberg.PartitionField{
				SourceIDs: []int{1}, FieldID: 1000, Name: "p_part", Transform: iceberg.IdentityTransform{}})
			df := dataFile(t, spec, "s3://b/f.parquet", 1, 1, fileOpts{partition: map[int]any{1000: tc.val}})
			got, err := actions.PartitionValues(df, spec, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("got %v, want exactly the key p", got)
			}
			if !reflect.DeepEqual(got["p"], tc.want) {
				t.Fatalf("got %v, want %v", str(got["p"]), str(tc.want))
			}
		})
	}
}

func TestPartitionValuesOnlyIdentityTopLevel(t *testing.T) {
	df := dataFile(t, testSpec(), "s3://b/f.parquet", 1, 1, fileOpts{partition: map[int]any{
		1000: days("2021-04-28"), 1001: "x", 1002: int32(3),
	}})
	got, err := actions.PartitionValues(df, testSpec(), testSchema())
	if err != nil {
		t.Fatal(err)
	}
	// Keyed by the source column name, not the partition field name
	// (name_part); the bucket field is not a Delta partition column.
	want := map[string]*string{"day": ptr("2021-04-28"), "name": ptr("x")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestPartitionValuesMissingIsNull(t *testing.T) {
	df := dataFile(t, testSpec(), "s3://b/f.parquet", 1, 1, fileOpts{partition: map[int]any{1000: days("2021-04-28")}})
	got, err := actions.PartitionValues(df, testSpec(), testSchema())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got["name"]; !ok || v != nil {
		t.Fatalf("name: got %v (present %v), want null", str(v), ok)
	}
}

func TestPartitionValuesErrors(t *testing.T) {
	cases := []struct {
		name string
		typ  iceberg.Type
		val  any
	}{
		{"binary not utf8", iceberg.PrimitiveTypes.Binary, []byte{0xff}},
		{"wrong go type", iceberg.PrimitiveTypes.Int32, "seven"},
		{"time type", iceberg.PrimitiveTypes.Time, iceberg.Time(5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "p", Type: tc.typ})
			spec := iceberg.NewPartitionSpecID(0, iceberg.PartitionField{
				SourceIDs: []int{1}, FieldID: 1000, Name: "p", Transform: iceberg.IdentityTransform{}})
			df := dataFile(t, spec, "s3://b/f.parquet", 1, 1, fileOpts{partition: map[int]any{1000: tc.val}})
			if got, err := actions.PartitionValues(df, spec, s); err == nil {
				t.Fatalf("want error, got %v", got)
			}
		})
	}
}

func TestPartitionValuesUnpartitioned(t *testing.T) {
	df := dataFile(t, iceberg.NewPartitionSpec(), "s3://b/f.parquet", 1, 1, fileOpts{})
	got, err := actions.PartitionValues(df, iceberg.NewPartitionSpec(), testSchema())
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want empty non-nil map", got, err)
	}
}

func ptr(s string) *string { return &s }

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return "'" + *p + "'"
}
