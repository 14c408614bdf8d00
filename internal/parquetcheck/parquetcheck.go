// Package parquetcheck vets untrusted parquet files before arrow-go
// decodes them.
//
// arrow-go trusts the lengths and offsets in a file's footer. On a corrupt
// footer it may panic (makeslice with -1, seen by fuzzing), and it may do
// so in goroutines of its own: pqarrow opens a struct's child columns in
// an errgroup, and iceberg-go's scans read files in worker goroutines. No
// recover of the caller reaches those, so one corrupt file would end the
// whole gateway. File opens the footer under recover and holds every
// column chunk inside the file, in the caller's goroutine, before any
// column is read; Chunks does the second part for a reader already open.
// That is enough for a reader that decodes pages in its own goroutine
// under recover (as deltalog does). It is not for one that decodes them
// in goroutines it does not control (iceberg-go's scans): a corrupt page
// header or page inside a sound chunk panics there too (a data page
// without its header, found by fuzzing FuzzFile). Decode is for that
// case: it decodes the whole file once, on the caller's goroutine.
package parquetcheck

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ReaderProps stream column chunks through a bounded buffer instead of
// allocating each chunk's declared size up front: the size comes from the
// untrusted footer.
func ReaderProps() *parquet.ReaderProperties {
	p := parquet.NewReaderProperties(memory.DefaultAllocator)
	p.BufferedStreamEnabled = true
	p.BufferSize = 1 << 20
	return p
}

// File opens f's footer and checks every column chunk of every row group
// (see Chunks). A panic of arrow-go's footer decoding, on this goroutine,
// is the file's fault and comes back as an error. The size checked
// against is f's own (arrow-go seeks to its end), which is what arrow-go
// reads the file with afterwards. f stays open: it is the caller's.
func File(f parquet.ReaderAtSeeker) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt parquet footer: %v", r)
		}
	}()
	rdr, err := file.NewParquetReader(f, file.WithReadProps(ReaderProps()))
	if err != nil {
		return fmt.Errorf("not parquet: %w", err)
	}
	// Not rdr.Close: it would close f.
	return Chunks(rdr, nil)
}

// Chunks holds every column chunk of the leaf columns leaves (nil or
// empty: every leaf column of the schema), in every row group, inside the
// file before arrow-go touches it: its start (the dictionary page when it
// has one) and its compressed length are neither negative nor past the
// file's end. A footer so broken that reading it panics is an error too.
func Chunks(rdr *file.Reader, leaves []int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt parquet footer: %v", r)
		}
	}()
	md := rdr.MetaData()
	size := md.GetSourceFileSize()
	if len(leaves) == 0 {
		leaves = make([]int, md.Schema.NumColumns())
		for i := range leaves {
			leaves[i] = i
		}
	}
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		rgm := md.RowGroup(rg)
		for _, c := range leaves {
			cc, err := rgm.ColumnChunk(c)
			if err != nil {
				return err
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
			if n := cc.TotalCompressedSize(); start < 0 || n < 0 || start > size || n > size-start {
				return fmt.Errorf("row group %d column %d: chunk at %d of %d bytes is outside the file's %d bytes", rg, c, start, n, size)
			}
		}
	}
	return nil
}

// Decode is File, then a read of every column of every row group, page
// by page, the way iceberg-go's scans read a data file (arrow-go's
// default reader properties: a chunk is read whole, at most the file's
// size once File passed) but sequentially and on this goroutine, where a
// panic of arrow-go is recovered and comes back as an error. A file
// Decode passes has no page that makes arrow-go panic when it is read
// again. It costs a full decode of the file, with the rows discarded.
func Decode(ctx context.Context, f parquet.ReaderAtSeeker) (err error) {
	if err := File(f); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt parquet data: %v", r)
		}
	}()
	rdr, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(memory.DefaultAllocator)))
	if err != nil {
		return fmt.Errorf("not parquet: %w", err)
	}
	// Not Parallel: struct children would be read in goroutines.
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("corrupt parquet: %w", err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("corrupt parquet: %w", err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("corrupt parquet data: %w", err)
	}
	return nil
}
