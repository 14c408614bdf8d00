package deltalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakegate/lakegate/internal/parquetcheck"
)

// wantedColumns are the checkpoint columns read, by action and field
// ("Checkpoint Schema"). Whole actions are read except add and remove,
// whose stats_parsed and partitionValues_parsed are left on disk: they
// repeat stats and partitionValues, with table-specific types.
var wantedColumns = map[string]map[string]bool{
	"add": set("path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags",
		"deletionVector", "baseRowId", "defaultRowCommitVersion", "clusteringProvider"),
	"remove": set("path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues",
		"size", "deletionVector", "baseRowId"),
	"metaData": nil, "protocol": nil, "txn": nil, "domainMetadata": nil,
	"checkpointMetadata": nil, "sidecar": nil,
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// asUnusable marks a checkpoint file that is listed but gone, so the
// snapshot falls back to an older checkpoint.
func asUnusable(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotFound) {
		return unusable{err}
	}
	return err
}

// readParquet calls fn for every row of a parquet checkpoint, part or
// sidecar (rows are 1-based). arrow-go may panic on a corrupt file (it
// trusts lengths in the footer and page headers), and the file is
// untrusted, so a panic in here is the file's fault: it becomes an error.
func (l *Log) readParquet(ctx context.Context, name string, lim Limits, fn func(string, int, *Action) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf(ErrMalformed, name, 0, "corrupt parquet: %v", r)
		}
	}()
	f, err := l.IO.Open(join(l.Location, name))
	if err != nil {
		return asUnusable(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > lim.MaxCheckpointBytes {
		return errorf(ErrLimit, name, 0, "%d bytes, over the limit of %d", st.Size(), lim.MaxCheckpointBytes)
	}
	rdr, err := file.NewParquetReader(f, file.WithReadProps(parquetcheck.ReaderProps()))
	if err != nil {
		return errorf(ErrMalformed, name, 0, "not parquet: %v", err)
	}
	defer rdr.Close()
	if n := rdr.NumRows(); n > lim.MaxActions {
		return errorf(ErrLimit, name, 0, "%d rows, over the limit of %d actions", n, lim.MaxActions)
	}
	return readRows(ctx, name, rdr, fn)
}

// readRows reads the wanted columns in batches and converts each row.
func readRows(ctx context.Context, name string, rdr *file.Reader, fn func(string, int, *Action) error) error {
	leaves := wantedLeaves(rdr.MetaData().Schema)
	if len(leaves) == 0 {
		return errorf(ErrMalformed, name, 0, "no action columns (add, remove, metaData, protocol, ...)")
	}
	if err := parquetcheck.Chunks(rdr, leaves); err != nil {
		return errorf(ErrMalformed, name, 0, "%v", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		return errorf(ErrMalformed, name, 0, "%v", err)
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return errorf(ErrMalformed, name, 0, "%v", err)
	}
	defer rr.Release()
	row := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row++
			a, err := rowAction(rec, i)
			if err != nil {
				return errorf(ErrMalformed, name, row, "%s", err)
			}
			if a == nil {
				continue
			}
			if err := fn(name, row, a); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil {
		return errorf(ErrMalformed, name, row, "%v", err)
	}
	return nil
}

// wantedLeaves are the leaf column indices under wantedColumns.
func wantedLeaves(sc *pqschema.Schema) []int {
	var out []int
	for i := 0; i < sc.NumColumns(); i++ {
		p := sc.Column(i).ColumnPath()
		fields, ok := wantedColumns[p[0]]
		if !ok || (fields != nil && (len(p) < 2 || !fields[p[1]])) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// errType is a column of an unexpected type.
func errType(field string, got any) error {
	return fmt.Errorf("column %s has type %v", field, got)
}
