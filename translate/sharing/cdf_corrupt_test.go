package sharing

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/lakegate/lakegate/internal/parquetcheck/parquetchecktest"
	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
)

// memCatalog commits a table's metadata in memory: enough for iceberg-go
// transactions on a local-filesystem table, no catalog server.
type memCatalog struct {
	tbl     *table.Table
	commits int
}

func (c *memCatalog) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return c.tbl, nil
}

func (c *memCatalog) CommitTable(_ context.Context, id table.Identifier, _ []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	c.commits++
	loc := fmt.Sprintf("%s/metadata/v%d.metadata.json", c.tbl.Metadata().Location(), c.commits)
	meta, err := table.UpdateTableMetadata(c.tbl.Metadata(), ups, loc)
	if err != nil {
		return nil, "", err
	}
	c.tbl = table.New(id, meta, loc, c.tbl.FS, c)
	return meta, loc, nil
}

// rewrittenTable is a local table of ids 0-9 appended in one file, then a
// copy-on-write delete of ids 0-2 (a version whose row-level changes are
// derived); it returns the table, the delete's version and the appended
// file the delete removed.
func rewrittenTable(t *testing.T) (*table.Table, version, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "note", Type: iceberg.PrimitiveTypes.String})
	meta, err := table.NewMetadata(sch, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, dir, iceberg.Properties{"format-version": "2"})
	require.NoError(t, err)
	cat := &memCatalog{}
	cat.tbl = table.New(table.Identifier{"sales", "cow"}, meta, dir+"/metadata/v0.metadata.json",
		func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }, cat)

	asc, err := table.SchemaToArrowSchema(sch, nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	defer at.Release()
	tx := cat.tbl.NewTransaction()
	require.NoError(t, tx.AppendTable(ctx, at, 1024, nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	appended, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	require.NoError(t, err)
	require.Len(t, appended, 1)

	tx = cat.tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(3)), nil))
	tbl, err := tx.Commit(ctx)
	require.NoError(t, err)
	v := version{V: 2, Loc: tbl.MetadataLocation(), Ts: tbl.Metadata().CurrentSnapshot().TimestampMs,
		Meta: tbl.Metadata(), Snap: tbl.Metadata().CurrentSnapshot()}
	return tbl, v, appended[0]
}

// A change feed over a version whose data file is corrupt answers an
// error of that request naming the file, its cause in the server's log;
// the process goes on. Without the vetting, iceberg-go's scan would read
// the file in a worker goroutine and arrow-go's panic there (makeslice:
// len out of range, for a chunk of length -1; a nil dereference, for a
// data page without its header, which the footer alone does not show)
// would end the process.
func TestChangesOfCorruptDataFile(t *testing.T) {
	tbl, v, dataFile := rewrittenTable(t)
	good, err := os.ReadFile(dataFile)
	require.NoError(t, err)
	patch := func(field int16, value int64) []byte {
		raw, err := parquetchecktest.SetChunkField(good, field, value)
		require.NoError(t, err)
		return raw
	}
	dataPages, err := parquetchecktest.FirstPagesMistyped(good)
	require.NoError(t, err)
	sealer, err := fileurl.NewSealer(bytes.Repeat([]byte("k"), fileurl.MinKeyLen))
	require.NoError(t, err)
	rewrite := func(t *testing.T) (*response, *observer.ObservedLogs, error) {
		core, logs := observer.New(zap.ErrorLevel)
		rs := &response{s: &Server{Sealer: sealer, ChangeDir: t.TempDir(), Log: zap.New(core)},
			req: Request{FilesBase: "https://h/files"},
			l:   &loaded{target: Target{Catalog: "lake", Table: "cow"}, tbl: tbl},
			exp: time.Unix(1796140243, 0), format: actions.Parquet}
		rs.fileWriter = fileWriter{rs: rs}
		fs, err := tbl.FS(context.Background())
		require.NoError(t, err)
		return rs, logs, rs.rewriteChanges(context.Background(), fs, v, []table.Snapshot{*v.Snap})
	}

	name := "data/" + filepath.Base(dataFile)
	for what, tc := range map[string]struct {
		raw   []byte
		cause string
	}{
		"chunk of length -1":          {patch(parquetchecktest.TotalCompressedSize, -1), "outside the file"},
		"chunk past the end":          {patch(parquetchecktest.TotalCompressedSize, 1<<40), "outside the file"},
		"chunk starting past the end": {patch(parquetchecktest.DataPageOffset, int64(len(good))+100), "outside the file"},
		"not parquet":                 {[]byte("id,note\n0,row 0\n"), "not parquet"},
		"data page without header":    {dataPages, "corrupt parquet data"},
	} {
		t.Run(what, func(t *testing.T) {
			require.NoError(t, os.WriteFile(dataFile, tc.raw, 0o644))
			_, logs, err := rewrite(t)
			e := requireSharingError(t, err, http.StatusBadGateway, CodeInternal)
			assert.Contains(t, e.Message, "a data file of version 2 of table \"cow\" is corrupt")
			assert.NotContains(t, e.Message, filepath.Dir(dataFile), "no server path")
			assert.NotContains(t, e.Message, ".parquet", "no file name: its path holds partition values")
			if assert.Equal(t, 1, logs.Len()) {
				logged := fmt.Sprint(logs.All()[0].ContextMap()["error"])
				assert.Contains(t, logged, tc.cause)
				assert.Contains(t, logged, name, "the log names the file")
			}
		})
	}

	// The same version with the file intact: its one change file.
	require.NoError(t, os.WriteFile(dataFile, good, 0o644))
	rs, logs, err := rewrite(t)
	require.NoError(t, err)
	assert.Zero(t, logs.Len())
	assert.Equal(t, 1, rs.files)
}
