package embeddedtest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// EventSchema is the schema of the tables tests write rows to.
var EventSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "msg", Type: iceberg.PrimitiveTypes.String},
)

// Row is one row of an EventSchema table.
type Row struct {
	ID  int64
	Msg string
}

// Batch builds an Arrow table of rows with ids [from, to) in the table's
// schema, and the rows it holds.
func Batch(t testing.TB, tbl *table.Table, from, to int64) (arrow.Table, []Row) {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	var rows []Row
	for i := from; i < to; i++ {
		r := Row{i, fmt.Sprintf("event %d", i)}
		rows = append(rows, r)
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.StringBuilder).Append(r.Msg)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec}), rows
}

// ScanAll reads every row of the table back through a scan, by id.
func ScanAll(t testing.TB, tbl *table.Table) []Row {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	require.NoError(t, err)
	defer at.Release()
	var rows []Row
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		msgs := rec.Column(1).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			rows = append(rows, Row{ids.Value(i), msgs.Value(i)})
		}
	}
	return SortRows(rows)
}

// SortRows joins row sets and sorts them by id.
func SortRows(parts ...[]Row) []Row {
	var all []Row
	for _, p := range parts {
		all = append(all, p...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}
