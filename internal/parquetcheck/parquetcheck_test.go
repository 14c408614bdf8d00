package parquetcheck_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/parquetcheck"
	"github.com/lakegate/lakegate/internal/parquetcheck/parquetchecktest"
)

// goodFile is a small valid parquet file: an int64 column and a struct
// (whose children pqarrow reads in goroutines of its own), two row
// groups, with dictionary pages.
func goodFile(t testing.TB) []byte {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	sb := b.Field(1).(*array.StructBuilder)
	for i := range 6 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		sb.Append(true)
		sb.FieldBuilder(0).(*array.StringBuilder).Append([]string{"x", "y"}[i%2])
		sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(i * 10))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	require.NoError(t, pqarrow.WriteTable(tbl, &buf, 3, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()))
	return buf.Bytes()
}

func patched(t testing.TB, raw []byte, field int16, value int64) []byte {
	t.Helper()
	out, err := parquetchecktest.SetChunkField(raw, field, value)
	require.NoError(t, err)
	return out
}

func TestFile(t *testing.T) {
	good := goodFile(t)
	require.NoError(t, parquetcheck.File(bytes.NewReader(good)), "a valid file passes")
	require.NoError(t, parquetcheck.File(bytes.NewReader(patched(t, good, parquetchecktest.DataPageOffset, 4))),
		"the patched footer still decodes, and an offset inside the file passes")

	for name, tc := range map[string]struct {
		raw  []byte
		want string
	}{
		"empty":                  {nil, "not parquet"},
		"not parquet":            {[]byte("id,name\n1,a\n"), "not parquet"},
		"magic only":             {[]byte("PAR1PAR1"), "not parquet"},
		"truncated":              {good[:len(good)/2], "not parquet"},
		"negative length":        {patched(t, good, parquetchecktest.TotalCompressedSize, -1), "outside the file"},
		"length past the end":    {patched(t, good, parquetchecktest.TotalCompressedSize, int64(len(good))), "outside the file"},
		"huge length":            {patched(t, good, parquetchecktest.TotalCompressedSize, 1<<62), "outside the file"},
		"negative offset":        {patched(t, good, parquetchecktest.DataPageOffset, -8), "outside the file"},
		"offset past the end":    {patched(t, good, parquetchecktest.DataPageOffset, int64(len(good))+1), "outside the file"},
		"offset near the end":    {patched(t, good, parquetchecktest.DataPageOffset, int64(len(good))-2), "outside the file"},
		"footer longer than all": {append(good[:len(good)-8:len(good)-8], 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'), "not parquet"},
	} {
		err := parquetcheck.File(bytes.NewReader(tc.raw))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.want, name)
		}
	}
}

// Chunks checks the leaves asked for only; none means all of them.
func TestChunksLeaves(t *testing.T) {
	raw := patched(t, goodFile(t), parquetchecktest.TotalCompressedSize, -1)
	rdr, err := file.NewParquetReader(bytes.NewReader(raw), file.WithReadProps(parquetcheck.ReaderProps()))
	require.NoError(t, err)
	for _, leaves := range [][]int{nil, {}, {0}, {2}} {
		assert.ErrorContains(t, parquetcheck.Chunks(rdr, leaves), "outside the file", "%v", leaves)
	}
	assert.ErrorContains(t, parquetcheck.Chunks(rdr, []int{3}), "only has 3 columns")
}

// readAll reads every column of raw as iceberg-go's scans do: default
// reader properties (each chunk allocated at its declared size), pqarrow
// in parallel (struct children in goroutines of its own), batches of
// 131072 rows.
func readAll(raw []byte) error {
	rdr, err := file.NewParquetReader(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{Parallel: true, BatchSize: 1 << 17}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
	}
	return rr.Err()
}

// seed is a committed fuzz input.
func seed(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzFile", name))
	require.NoError(t, err)
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "go test fuzz v1\n[]byte(")
	require.True(t, ok, name)
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	require.NoError(t, err)
	return []byte(s)
}

// A sound footer says nothing of the pages: a file whose chunks are all
// inside it passes File, yet a data page without its header makes
// arrow-go panic (in whatever goroutine reads it). Decode reads it on
// the caller's goroutine and answers an error.
func TestDecode(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, parquetcheck.Decode(ctx, bytes.NewReader(goodFile(t))), "a valid file decodes")
	bad := seed(t, "data-page-without-header")
	require.NoError(t, parquetcheck.File(bytes.NewReader(bad)), "its footer is sound")
	assert.ErrorContains(t, parquetcheck.Decode(ctx, bytes.NewReader(bad)), "corrupt parquet data")
	mistyped, err := parquetchecktest.FirstPagesMistyped(goodFile(t))
	require.NoError(t, err)
	require.NoError(t, parquetcheck.File(bytes.NewReader(mistyped)), "its footer is sound")
	assert.ErrorContains(t, parquetcheck.Decode(ctx, bytes.NewReader(mistyped)), "corrupt parquet data")
	assert.ErrorContains(t, parquetcheck.Decode(ctx, bytes.NewReader(patched(t, goodFile(t), parquetchecktest.TotalCompressedSize, -1))),
		"outside the file", "Decode checks the footer first")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, parquetcheck.Decode(canceled, bytes.NewReader(goodFile(t))), context.Canceled)
}

// Neither File nor Decode panics, and a file Decode passes is one
// arrow-go reads as iceberg-go does without panicking, in any of its
// goroutines (a panic there would end the fuzzing process): its error,
// if any, is an ordinary one. Seeds are in testdata/fuzz/FuzzFile: a
// valid file with a struct column, copies whose footers put chunks
// outside the file, and a crasher File alone let through.
func FuzzFile(f *testing.F) {
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fileErr := parquetcheck.File(bytes.NewReader(raw))
		decodeErr := parquetcheck.Decode(context.Background(), bytes.NewReader(raw))
		if fileErr != nil && decodeErr == nil {
			t.Fatalf("Decode passed what File refused: %v", fileErr)
		}
		if decodeErr == nil {
			_ = readAll(raw)
		}
	})
}

// The committed seeds are the files the table test builds.
func TestFuzzSeeds(t *testing.T) {
	if os.Getenv("PARQUETCHECK_WRITE_SEEDS") == "" {
		t.Skip("set PARQUETCHECK_WRITE_SEEDS=1 to rewrite testdata/fuzz/FuzzFile")
	}
	good := goodFile(t)
	dir := filepath.Join("testdata", "fuzz", "FuzzFile")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, raw := range map[string][]byte{
		"good":            good,
		"negative-length": patched(t, good, parquetchecktest.TotalCompressedSize, -1),
		"offset-past-end": patched(t, good, parquetchecktest.DataPageOffset, int64(len(good))+1),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(raw))+")\n"), 0o644))
	}
}
