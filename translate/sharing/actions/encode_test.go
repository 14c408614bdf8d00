package actions

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Strings that JSON encoding must escape, replace or keep: quotes,
// backslashes, control characters, HTML characters, U+2028/U+2029,
// non-ASCII and invalid UTF-8.
var tricky = []string{
	"", "plain", `q"uo\te`, "ctl\x00\x01\b\f\n\r\t\x1f\x7f", "<script>&amp;</script>", "a&b=c",
	"é ü 漢字 🙂", "sep\u2028\u2029", "bad\xffutf8\xc3", "/tmp/wh/t/data/part=1/0-0.parquet",
	"https://h/p?X-Amz-Credential=a%2Fb&X-Amz-Signature=0f", "Z", "a b", "zz",
}

// diffSchema has every type stats and partition values handle, nested
// structs, lists and maps (no stats), and names that need escaping and
// sort in surprising orders.
func diffSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 4, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 7, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 8, Name: "ntz", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 9, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 10, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 11, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 12, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 13, Name: "fx", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: 14, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 15, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
			{ID: 16, Name: "b", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 17, Name: "c", Type: iceberg.PrimitiveTypes.Int64},
			}}},
			{ID: 18, Name: `<tricky "name">`, Type: iceberg.PrimitiveTypes.String},
			{ID: 31, Name: "empty", Type: &iceberg.StructType{}},
		}}},
		iceberg.NestedField{ID: 19, Name: "tags", Type: &iceberg.ListType{ElementID: 20, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 21, Name: "m", Type: &iceberg.MapType{KeyID: 22, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 23, ValueType: iceberg.PrimitiveTypes.Int32}},
		iceberg.NestedField{ID: 24, Name: "t", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 25, Name: "big", Type: iceberg.DecimalTypeOf(38, 10)},
		iceberg.NestedField{ID: 26, Name: "é\"\u2028&", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 27, Name: "Z", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 28, Name: "a b", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 29, Name: "bad\xffname", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 30, Name: "dec0", Type: iceberg.DecimalTypeOf(9, 0)},
	)
}

// dupSchema repeats names, which no valid schema does: the reference's
// maps keep the last field with a value, and so must the Encoder.
func dupSchema() *iceberg.Schema {
	return iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "x", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "x", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "y", Type: iceberg.PrimitiveTypes.Int32},
		}}},
		iceberg.NestedField{ID: 5, Name: "p", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "p", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 7, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
	)
}

func diffSpecs() []iceberg.PartitionSpec {
	id := func(src, field int, name string) iceberg.PartitionField {
		return iceberg.PartitionField{SourceIDs: []int{src}, FieldID: field, Name: name, Transform: iceberg.IdentityTransform{}}
	}
	return []iceberg.PartitionSpec{
		*iceberg.UnpartitionedSpec,
		iceberg.NewPartitionSpecID(1, id(6, 1000, "day"), id(5, 1001, "name"),
			iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}}),
		// Same id, other fields: a cache keyed by spec id alone would mix them up.
		iceberg.NewPartitionSpecID(1, id(1, 1000, "id"), id(26, 1001, "weird"), id(27, 1002, "Z"), id(28, 1003, "ab")),
		// Nested (not a partition column), unknown source, the same column twice.
		iceberg.NewPartitionSpecID(2, id(15, 1000, "a"), id(99, 1001, "gone"), id(5, 1002, "n1"), id(5, 1003, "n2"),
			id(2, 1004, "l"), id(10, 1005, "flag"), id(9, 1006, "price"), id(7, 1007, "ts"), id(4, 1008, "d"),
			id(3, 1009, "f"), id(12, 1010, "u"), id(11, 1011, "bin")),
		// Under dupSchema: two columns named p.
		iceberg.NewPartitionSpecID(3, id(5, 1000, "p1"), id(6, 1001, "p2"), id(7, 1002, "a")),
	}
}

type gen struct{ r *rand.Rand }

func (g gen) pick(p float64) bool { return g.r.Float64() < p }

func (g gen) str() string { return tricky[g.r.IntN(len(tricky))] }

func (g gen) literalBytes(t iceberg.Type) []byte {
	if g.pick(0.05) { // garbage: wrong width, empty
		b := make([]byte, g.r.IntN(10))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return b
	}
	var lit iceberg.Literal
	switch t := t.(type) {
	case iceberg.Int32Type:
		lit = iceberg.Int32Literal(int32(g.r.Uint32()) >> g.r.IntN(32))
	case iceberg.Int64Type:
		if g.pick(0.2) { // written while the column was int
			return binary.LittleEndian.AppendUint32(nil, g.r.Uint32())
		}
		lit = iceberg.Int64Literal(int64(g.r.Uint64()) >> g.r.IntN(64))
	case iceberg.Float32Type:
		lit = iceberg.Float32Literal(g.float32())
	case iceberg.Float64Type:
		if g.pick(0.2) {
			return binary.LittleEndian.AppendUint32(nil, math.Float32bits(g.float32()))
		}
		lit = iceberg.Float64Literal(g.float64())
	case iceberg.StringType:
		lit = iceberg.StringLiteral(g.str())
	case iceberg.DateType:
		lit = iceberg.DateLiteral(g.r.Int32N(6_000_000) - 3_000_000)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if g.pick(0.1) { // written while the column was a date
			return binary.LittleEndian.AppendUint32(nil, uint32(g.r.Int32N(200_000)-100_000))
		}
		lit = iceberg.TimestampLiteral(g.r.Int64N(2e17) - 1e17)
	case iceberg.TimeType:
		lit = iceberg.TimeLiteral(g.r.Int64N(86_400_000_000))
	case iceberg.DecimalType:
		v := decimal128.New(int64(g.r.Uint64())>>g.r.IntN(64), g.r.Uint64())
		if g.pick(0.5) {
			v = decimal128.FromI64(int64(g.r.Uint64()) >> g.r.IntN(64))
		}
		lit = iceberg.DecimalLiteral{Val: v, Scale: t.Scale()}
	case iceberg.BooleanType:
		lit = iceberg.BoolLiteral(g.pick(0.5))
	case iceberg.UUIDType:
		lit = iceberg.UUIDLiteral(uuid.New())
	default: // binary, fixed
		return []byte(g.str())
	}
	b, err := lit.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

func (g gen) float32() float32 {
	switch g.r.IntN(6) {
	case 0:
		return float32(math.NaN())
	case 1:
		return float32(math.Inf(1 - 2*g.r.IntN(2)))
	case 2:
		return math.Float32frombits(g.r.Uint32())
	}
	return float32(g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(50)-25)))
}

func (g gen) float64() float64 {
	switch g.r.IntN(6) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*g.r.IntN(2))
	case 2:
		return math.Float64frombits(g.r.Uint64())
	}
	return g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(60)-30))
}

// partitionValue is a manifest's partition value for a column of type t:
// usually the Go type iceberg-go decodes, sometimes a Literal, a raw
// primitive, null, or a value of the wrong type (an error).
func (g gen) partitionValue(t iceberg.Type) any {
	switch {
	case g.pick(0.1):
		return nil
	case g.pick(0.03):
		return struct{}{}
	}
	switch t := t.(type) {
	case iceberg.Int32Type:
		return int32(g.r.Uint32())
	case iceberg.Int64Type:
		if g.pick(0.3) {
			return iceberg.Int64Literal(int64(g.r.Uint64()))
		}
		return int64(g.r.Uint64())
	case iceberg.Float32Type:
		return g.float32()
	case iceberg.Float64Type:
		return g.float64()
	case iceberg.StringType:
		return g.str()
	case iceberg.DateType:
		return iceberg.Date(g.r.Int32N(100_000) - 50_000)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.Timestamp(g.r.Int64N(2e15) - 1e15)
	case iceberg.DecimalType:
		return iceberg.Decimal{Val: decimal128.FromI64(int64(g.r.Uint64()) >> 8), Scale: t.Scale()}
	case iceberg.BooleanType:
		return g.pick(0.5)
	case iceberg.UUIDType:
		return uuid.New()
	case iceberg.BinaryType:
		return []byte(g.str())
	}
	return nil
}

func allFields(s *iceberg.Schema) []iceberg.NestedField {
	var out []iceberg.NestedField
	var walk func([]iceberg.NestedField)
	walk = func(fs []iceberg.NestedField) {
		for _, f := range fs {
			out = append(out, f)
			if st, ok := f.Type.(*iceberg.StructType); ok {
				walk(st.FieldList)
			}
		}
	}
	walk(s.Fields())
	return out
}

func (g gen) file(t *testing.T, s *iceberg.Schema, spec iceberg.PartitionSpec) File {
	t.Helper()
	lower, upper := map[int][]byte{}, map[int][]byte{}
	nulls, nans := map[int]int64{}, map[int]int64{}
	for _, f := range allFields(s) {
		if g.pick(0.7) {
			lower[f.ID] = g.literalBytes(f.Type)
		}
		if g.pick(0.7) {
			upper[f.ID] = g.literalBytes(f.Type)
		}
		if g.pick(0.6) {
			nulls[f.ID] = g.r.Int64N(1000)
		}
		if g.pick(0.5) {
			nans[f.ID] = g.r.Int64N(3)
		}
	}
	byID := map[int]iceberg.Type{}
	for _, f := range s.Fields() {
		byID[f.ID] = f.Type
	}
	partition := map[int]any{}
	for _, pf := range spec.Fields() {
		if typ, ok := byID[pf.SourceIDs[0]]; ok && !g.pick(0.05) {
			partition[pf.FieldID] = g.partitionValue(typ)
		}
	}
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, g.str()+"/f.parquet", iceberg.ParquetFile,
		partition, nil, nil, g.r.Int64N(1e6), g.r.Int64N(1e9))
	if err != nil {
		t.Fatal(err)
	}
	b.LowerBoundValues(lower).UpperBoundValues(upper).NullValueCounts(nulls).NaNValueCounts(nans)
	file := File{URL: g.str(), Data: b.Build(), Spec: spec, Schema: s,
		Version: g.r.Int64N(100), Timestamp: g.r.Int64N(2e12) - 1e11, Expiration: g.r.Int64N(3e12) - 1e12}
	if g.pick(0.05) {
		file.Schema = nil
	}
	return file
}

// TestEncoderMatchesReference: for random files (every type, garbage
// bounds, NaN and infinities, strings needing escapes, null and
// ill-typed partition values), one Encoder reused across schemas and
// specs writes exactly the bytes, or the error, of the reflection-based
// builders it replaced.
func TestEncoderMatchesReference(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 11))}
	var e Encoder
	schemas := []*iceberg.Schema{diffSchema(), dupSchema()}
	specs := diffSpecs()
	kinds := []struct {
		kind        fileKind
		withVersion bool
	}{{kindFile, false}, {kindFile, true}, {kindAdd, true}, {kindRemove, true}}
	var lines, failures int
	var dst []byte
	for i := range 3000 {
		s := schemas[g.r.IntN(len(schemas))]
		file := g.file(t, s, specs[g.r.IntN(len(specs))])
		wantStats, wantErr := refStats(file.Data, file.Schema)
		gotStats, gotErr := Stats(file.Data, file.Schema)
		if !sameResult(gotStats, gotErr, wantStats, wantErr) {
			t.Fatalf("file %d: Stats = %s, %v\nreference: %s, %v", i, gotStats, gotErr, wantStats, wantErr)
		}
		for _, f := range []Format{Parquet, Delta} {
			for _, k := range kinds {
				want, wantErr := refFileAction(f, file, k.kind, k.withVersion)
				prefix := len(dst)
				var gotErr error
				dst, gotErr = e.appendFile(dst, f, file, k.kind, k.withVersion)
				got := dst[prefix:]
				if gotErr != nil && len(got) != 0 {
					t.Fatalf("file %d: failed append left %q", i, got)
				}
				if !sameResult(string(got), gotErr, string(want), wantErr) {
					t.Fatalf("file %d, %s kind %d version %v:\n got %s, %v\nwant %s, %v", i, f, k.kind, k.withVersion, got, gotErr, want, wantErr)
				}
				if gotErr != nil {
					failures++
				} else {
					lines++
				}
				if len(dst) > 1<<16 {
					dst = dst[:0]
				}
			}
		}
	}
	if lines < 10000 || failures < 100 {
		t.Fatalf("%d lines, %d failures: the generator misses a case", lines, failures)
	}
}

func sameResult(got string, gotErr error, want string, wantErr error) bool {
	if (gotErr != nil) != (wantErr != nil) {
		return false
	}
	if gotErr != nil {
		return gotErr.Error() == wantErr.Error()
	}
	return got == want
}

// The exported one-line builders are the Encoder's lines.
func TestFileLineBuildersMatchReference(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	for range 200 {
		file := g.file(t, diffSchema(), diffSpecs()[g.r.IntN(4)])
		for _, f := range []Format{Parquet, Delta} {
			for _, tc := range []struct {
				got  func() ([]byte, error)
				kind fileKind
				v    bool
			}{
				{func() ([]byte, error) { return FileLine(f, file, false) }, kindFile, false},
				{func() ([]byte, error) { return FileLine(f, file, true) }, kindFile, true},
				{func() ([]byte, error) { return Add(f, file) }, kindAdd, true},
				{func() ([]byte, error) { return Remove(f, file) }, kindRemove, true},
			} {
				got, err := tc.got()
				want, wantErr := refFileAction(f, file, tc.kind, tc.v)
				if !sameResult(string(got), err, string(want), wantErr) || (err != nil && got != nil) {
					t.Fatalf("%s kind %d: got %s, %v; want %s, %v", f, tc.kind, got, err, want, wantErr)
				}
			}
		}
	}
}

func TestEncoderErrorsKeepBuffer(t *testing.T) {
	var e Encoder
	dst := []byte("kept\n")
	if out, err := e.AppendFileLine(dst, Parquet, File{URL: "u"}, false); err == nil || !bytes.Equal(out, dst) {
		t.Fatalf("nil data file: %q, %v", out, err)
	}
	g := gen{rand.New(rand.NewPCG(5, 6))}
	file := g.file(t, diffSchema(), diffSpecs()[1])
	if out, err := e.AppendAdd(dst, "csv", file); err == nil || !bytes.Equal(out, dst) {
		t.Fatalf("unknown format: %q, %v", out, err)
	}
}

func BenchmarkFileLine(b *testing.B) {
	s := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "part", Type: iceberg.PrimitiveTypes.Int32, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	lit := func(l iceberg.Literal) []byte { v, _ := l.MarshalBinary(); return v }
	bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "/tmp/wh/sales/many/data/part=504/00000-0.parquet",
		iceberg.ParquetFile, map[int]any{1000: int32(504)}, nil, nil, 1, 861)
	if err != nil {
		b.Fatal(err)
	}
	bld.LowerBoundValues(map[int][]byte{1: lit(iceberg.Int64Literal(504)), 2: lit(iceberg.Int32Literal(504))})
	bld.UpperBoundValues(map[int][]byte{1: lit(iceberg.Int64Literal(504)), 2: lit(iceberg.Int32Literal(504))})
	bld.NullValueCounts(map[int]int64{1: 0, 2: 0})
	file := File{URL: "http://127.0.0.1:8080/local/files/AgAAAABrDuzT7iTr64MAKzPGCYmj5lTUFLnQb?sp=r", Data: bld.Build(),
		Spec: spec, Schema: s, Expiration: 1796140243000}
	b.Run("encoder", func(b *testing.B) {
		var e Encoder
		var dst []byte
		b.ReportAllocs()
		for b.Loop() {
			dst, _ = e.AppendFileLine(dst[:0], Parquet, file, false)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = refFileAction(Parquet, file, kindFile, false)
		}
	})
}
