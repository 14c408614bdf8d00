package actions_test

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakegate/lakegate/translate/sharing/actions"
)

func TestStatsAllTypes(t *testing.T) {
	u1, u2 := uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("ffffffff-0000-0000-0000-000000000000")
	lower := map[int][]byte{
		idID:     bin(t, iceberg.Int32Literal(1)),
		idName:   bin(t, iceberg.StringLiteral("alph")), // truncated "alpha..." prefix
		idTS:     bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:51.945123Z"))),
		idDay:    bin(t, iceberg.DateLiteral(days("2021-04-28"))),
		idPrice:  bin(t, dec(-1250, 2)),
		idFlag:   bin(t, iceberg.BoolLiteral(false)),
		idLong:   bin(t, iceberg.Int64Literal(-5)),
		idFloat:  bin(t, iceberg.Float32Literal(1.5)),
		idDouble: bin(t, iceberg.Float64Literal(-0.25)),
		idBin:    bin(t, iceberg.BinaryLiteral{0x00, 0x01}),
		idUUID:   bin(t, iceberg.UUIDLiteral(u1)),
		idFixed:  bin(t, iceberg.FixedLiteral{1, 2, 3, 4}),
		idA:      bin(t, iceberg.Int32Literal(7)),
		idC:      bin(t, iceberg.Int64Literal(11)),
		idTagEl:  bin(t, iceberg.StringLiteral("a")),
		idMapK:   bin(t, iceberg.StringLiteral("k")),
		idMapV:   bin(t, iceberg.Int32Literal(0)),
	}
	upper := map[int][]byte{
		idID:     bin(t, iceberg.Int32Literal(100)),
		idName:   bin(t, iceberg.StringLiteral("braw")), // "bravo..." truncated and incremented
		idTS:     bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:52.000001Z"))),
		idDay:    bin(t, iceberg.DateLiteral(days("2021-05-01"))),
		idPrice:  bin(t, dec(123456, 2)),
		idFlag:   bin(t, iceberg.BoolLiteral(true)),
		idLong:   bin(t, iceberg.Int64Literal(1<<40)),
		idFloat:  bin(t, iceberg.Float32Literal(2.5)),
		idDouble: bin(t, iceberg.Float64Literal(1e300)),
		idBin:    bin(t, iceberg.BinaryLiteral{0xff}),
		idUUID:   bin(t, iceberg.UUIDLiteral(u2)),
		idFixed:  bin(t, iceberg.FixedLiteral{9, 9, 9, 9}),
		idA:      bin(t, iceberg.Int32Literal(9)),
		idC:      bin(t, iceberg.Int64Literal(12)),
		idTagEl:  bin(t, iceberg.StringLiteral("z")),
		idMapK:   bin(t, iceberg.StringLiteral("z")),
		idMapV:   bin(t, iceberg.Int32Literal(9)),
	}
	df := dataFile(t, iceberg.NewPartitionSpec(), "s3://b/f.parquet", 10, 100, fileOpts{
		lower: lower, upper: upper,
		nulls: map[int]int64{idID: 0, idName: 2, idTS: 0, idBin: 1, idUUID: 0, idA: 0, idC: 1, idTagEl: 5, idMapK: 0},
		// d holds NaN: its NaN-free max must not be published.
		nans: map[int]int64{idFloat: 0, idDouble: 3},
	})
	got, err := actions.Stats(df, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, []byte(`{"stats":`+quote(got)+`}`), `{"stats":`+quote(`{
		"numRecords": 10,
		"minValues": {"id":1,"name":"alph","ts":"2021-04-28T23:36:51.945Z","day":"2021-04-28","price":-12.50,
			"flag":false,"l":-5,"f":1.5,"d":-0.25,"s":{"a":7,"b":{"c":11}}},
		"maxValues": {"id":100,"name":"braw","ts":"2021-04-28T23:36:52.001Z","day":"2021-05-01","price":1234.56,
			"flag":true,"l":1099511627776,"f":2.5,"s":{"a":9,"b":{"c":12}}},
		"nullCount": {"id":0,"name":2,"ts":0,"bin":1,"u":0,"s":{"a":0,"b":{"c":1}}}
	}`)+`}`)
	// Decimals are JSON numbers with every digit kept.
	for _, want := range []string{`"price":-12.50`, `"price":1234.56`} {
		if !strings.Contains(got, want) {
			t.Errorf("stats %s lacks %s", got, want)
		}
	}
}

func TestStatsWithoutMetrics(t *testing.T) {
	df := dataFile(t, iceberg.NewPartitionSpec(), "s3://b/f.parquet", 42, 100, fileOpts{})
	got, err := actions.Stats(df, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"numRecords":42}` {
		t.Fatalf("got %s", got)
	}
}

func TestStatsEdgeCases(t *testing.T) {
	s := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 2, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 3, Name: "ntz", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 4, Name: "old", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 5, Name: "promoted_long", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 6, Name: "promoted_double", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 7, Name: "bad_utf8", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 8, Name: "garbage", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 9, Name: "exact_ms", Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	df := dataFile(t, iceberg.NewPartitionSpec(), "s3://b/f.parquet", 3, 100, fileOpts{
		lower: map[int][]byte{
			1: bin(t, iceberg.Float32Literal(float32(math.Inf(-1)))),
			2: bin(t, iceberg.Float64Literal(1)),
			3: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:51.945999Z"))),
			// Before the epoch flooring must go down, not toward zero.
			4: bin(t, iceberg.TimestampLiteral(-1500)),
			5: bin(t, iceberg.Int32Literal(-7)), // written while the column was int
			6: bin(t, iceberg.Float32Literal(0.5)),
			7: {0xff, 0xfe},
			8: {1, 2}, // not a valid int serialization
			9: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:51.945Z"))),
		},
		upper: map[int][]byte{
			1: bin(t, nanLiteral()),
			2: bin(t, iceberg.Float64Literal(2)),
			3: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:51.945001Z"))),
			4: bin(t, iceberg.TimestampLiteral(-1500)),
			5: bin(t, iceberg.Int32Literal(7)),
			6: bin(t, iceberg.Float32Literal(0.75)),
			9: bin(t, iceberg.TimestampLiteral(micros("2021-04-28T23:36:51.946Z"))),
		},
		// No NaN count for d: unknown, so its max is withheld.
		nans: map[int]int64{1: 0, 6: 0},
	})
	got, err := actions.Stats(df, s)
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, []byte(`{"stats":`+quote(got)+`}`), `{"stats":`+quote(`{
		"numRecords": 3,
		"minValues": {"d":1,"ntz":"2021-04-28T23:36:51.945","old":"1969-12-31T23:59:59.998Z",
			"promoted_long":-7,"promoted_double":0.5,"exact_ms":"2021-04-28T23:36:51.945Z"},
		"maxValues": {"ntz":"2021-04-28T23:36:51.946","old":"1969-12-31T23:59:59.999Z",
			"promoted_long":7,"promoted_double":0.75,"exact_ms":"2021-04-28T23:36:51.946Z"}
	}`)+`}`)
}

func TestStatsNilSchema(t *testing.T) {
	df := dataFile(t, iceberg.NewPartitionSpec(), "s3://b/f.parquet", 1, 1, fileOpts{
		lower: map[int][]byte{1: bin(t, iceberg.Int32Literal(1))},
	})
	got, err := actions.Stats(df, nil)
	if err != nil || got != `{"numRecords":1}` {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := actions.Stats(nil, testSchema()); err == nil {
		t.Fatal("nil data file: want error")
	}
}

func nanLiteral() iceberg.Float32Literal { return iceberg.Float32Literal(nan32) }

// quote makes a JSON string literal, for wrapping stats in a "stats" key
// that the test helpers expand.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
