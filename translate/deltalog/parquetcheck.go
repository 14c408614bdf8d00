package deltalog

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// readerProps stream column chunks through a bounded buffer instead of
// allocating each chunk's declared size up front: the size comes from the
// untrusted footer.
func readerProps() *parquet.ReaderProperties {
	p := parquet.NewReaderProperties(memory.DefaultAllocator)
	p.BufferedStreamEnabled = true
	p.BufferSize = 1 << 20
	return p
}

// checkChunks holds every column chunk to be read inside the file before
// arrow-go touches it. This is not belt and braces: pqarrow opens a
// struct's child columns in goroutines of its own (errgroup), where a
// panic on a bad offset or length (makeslice with -1, seen by fuzzing)
// cannot be recovered and would end the process.
func checkChunks(rdr *file.Reader, leaves []int) error {
	md := rdr.MetaData()
	size := md.GetSourceFileSize()
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
