package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

const benchFiles = 1000

// BenchmarkSharingQuery: a Delta Sharing query of a table with 1,000 data
// files, its files planned by the backend (server-side scan planning,
// planning auto) or by lakegate over the manifests (planning local).
func BenchmarkSharingQuery(b *testing.B) {
	base, plans := planningGateway(b)
	writeManyFiles(b, base)
	for _, mode := range []string{"auto", "local"} {
		b.Run("planning="+mode, func(b *testing.B) {
			c := clientFromProfile(b, base+"/"+mode, recipientToken)
			r := c.do("POST", "/shares/demo/schemas/sales/tables/many/query", nil, "{}")
			require.Equal(b, 200, r.status, "%s", r.body)
			require.Len(b, r.lines(b), benchFiles+2)
			plans.Store(0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := c.do("POST", "/shares/demo/schemas/sales/tables/many/query", nil, "{}"); r.status != 200 {
					b.Fatalf("status %d: %s", r.status, r.body)
				}
			}
			b.ReportMetric(float64(plans.Load())/float64(b.N), "backend-plans/op")
		})
	}
}

// BenchmarkSharingQueryCached: a Delta Sharing query of a small table
// (the orders of the sharing tests: a few files, an evolved schema) whose LoadTable answer is
// in the L1 cache (max_age 1h) and whose files lakegate plans itself, so
// what is measured is the door, the translation and the in-process
// pipeline call, as BenchmarkDeltaLoadTable measures them for the UC
// Delta API, rather than planning over many manifests.
func BenchmarkSharingQueryCached(b *testing.B) {
	backend := embeddedtest.Serve(b, embeddedtest.Config(b, embedded.SQLite))
	addr := freeAddr(b)
	app := map[string]any{"catalogs": []any{cached("lake", backend.URL, map[string]any{"max_age": int64(time.Hour)}, nil)}}
	base := serveOn(b, addr, caddyJSONHandlers(b, addr, app,
		sharingHandler(map[string]any{"planning": "local"}), map[string]any{"handler": "lakegate_iceberg"}))
	writeOrders(b, base)
	c := clientFromProfile(b, base+"/delta-sharing", recipientToken)
	// The orders table's schema evolved: only the Delta response format
	// can carry its older files.
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")
	require.Equal(b, 200, r.status, "%s", r.body)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}"); r.status != 200 {
			b.Fatalf("status %d: %s", r.status, r.body)
		}
	}
}

// partitionedByPart is the benchmarks' table: an id and an int part, the
// identity partition.
func partitionedByPart() (*iceberg.Schema, iceberg.PartitionSpec) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "part", Type: iceberg.PrimitiveTypes.Int32, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	return sch, spec
}

// writeManyFiles writes sales.many with one row in each of benchFiles
// identity partitions: one append, benchFiles data files.
func writeManyFiles(b *testing.B, base string) {
	ctx := context.Background()
	cl := embeddedtest.Client(b, base, rest.WithWarehouseLocation("lake"))
	require.NoError(b, cl.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	sch, spec := partitionedByPart()
	tbl, err := cl.CreateTable(ctx, table.Identifier{"sales", "many"}, sch, catalog.WithPartitionSpec(&spec))
	require.NoError(b, err)
	asc, err := table.SchemaToArrowSchema(sch, nil, false, false)
	require.NoError(b, err)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer bld.Release()
	for i := 0; i < benchFiles; i++ {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.Int32Builder).Append(int32(i))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	data := array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
	defer data.Release()
	_, err = tbl.AppendTable(ctx, data, benchFiles, nil)
	require.NoError(b, err, fmt.Sprintf("appending %d partitions", benchFiles))
}
