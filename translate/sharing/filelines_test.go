package sharing

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
)

// linesResponse is an answer about a local-filesystem table partitioned by
// part, ready for file lines.
func linesResponse(t *testing.T, f actions.Format) *response {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "part", Type: iceberg.PrimitiveTypes.Int32, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	meta, err := table.NewMetadata(sch, &spec, table.UnsortedSortOrder, "/wh/sales/many", nil)
	require.NoError(t, err)
	sealer, err := fileurl.NewSealer(bytes.Repeat([]byte("k"), fileurl.MinKeyLen))
	require.NoError(t, err)
	rs := &response{s: &Server{Sealer: sealer}, req: Request{FilesBase: "https://h/files"},
		l:   &loaded{target: Target{Table: "many"}, tbl: table.New(table.Identifier{"sales", "many"}, meta, "/wh/sales/many/metadata/v1.json", nil, nil)},
		exp: time.Unix(1796140243, 0), format: f, partitioned: true}
	rs.fileWriter = fileWriter{rs: rs}
	return rs
}

// linesTasks are n data files of the table, each with its stats; the
// files at the bad indexes lie outside the table, so they get no URL.
func linesTasks(t *testing.T, n int, bad ...int) []table.FileScanTask {
	t.Helper()
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	lit := func(l iceberg.Literal) []byte {
		b, err := l.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	tasks := make([]table.FileScanTask, n)
	for i := range tasks {
		path := fmt.Sprintf("/wh/sales/many/data/part=%d/%05d.parquet", i, i)
		for _, b := range bad {
			if b == i {
				path = fmt.Sprintf("/elsewhere/%05d.parquet", i)
			}
		}
		b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, path, iceberg.ParquetFile,
			map[int]any{1000: int32(i)}, nil, nil, 1, int64(800+i))
		require.NoError(t, err)
		b.LowerBoundValues(map[int][]byte{1: lit(iceberg.Int64Literal(i)), 2: lit(iceberg.Int32Literal(i))})
		b.UpperBoundValues(map[int][]byte{1: lit(iceberg.Int64Literal(i)), 2: lit(iceberg.Int32Literal(i))})
		b.NullValueCounts(map[int]int64{1: 0, 2: 0})
		tasks[i] = table.FileScanTask{File: b.Build()}
	}
	return tasks
}

// A long listing written by several goroutines is the listing one
// goroutine writes, byte for byte, and fails on the same file.
func TestFileLinesParallelMatchSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	v := version{V: 7, Ts: 1796136643140}
	sch := linesResponse(t, actions.Parquet).l.tbl.Metadata().CurrentSchema()
	for _, f := range []actions.Format{actions.Parquet, actions.Delta} {
		for _, n := range []int{0, 1, 511, 512, 513, 1000, 2049} {
			for _, travel := range []bool{false, true} {
				tasks := linesTasks(t, n)
				par := linesResponse(t, f)
				par.lines = append(par.lines, "header\n"...)
				require.NoError(t, par.fileLines(context.Background(), tasks, sch, v, travel))
				seq := linesResponse(t, f)
				seq.lines = append(seq.lines, "header\n"...)
				for _, task := range tasks {
					file, err := seq.file(context.Background(), task.File, sch, v)
					require.NoError(t, err)
					b, lerr := actions.FileLine(f, file, travel)
					require.NoError(t, lerr)
					seq.lines = append(append(seq.lines, b...), '\n')
				}
				require.Equal(t, string(seq.lines), string(par.lines), "%s, %d files, version %v", f, n, travel)
				require.Equal(t, n, par.files)
			}
		}
	}
	for _, bad := range [][]int{{10}, {1500}, {1500, 1800}, {600, 100}, {2048}} {
		par, seq := linesResponse(t, actions.Parquet), linesResponse(t, actions.Parquet)
		tasks := linesTasks(t, 2049, bad...)
		perr := par.fileLines(context.Background(), tasks, sch, v, false)
		serr := seq.fileWriter.queryLines(context.Background(), tasks, sch, v, false, len(tasks))
		require.Error(t, perr)
		require.Equal(t, serr, perr, "bad files %v", bad)
		require.Contains(t, perr.Error(), fmt.Sprintf("%05d.parquet", min(bad[0], bad[len(bad)-1])))
	}
}
