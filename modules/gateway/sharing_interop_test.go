package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// interopDir holds the third-party Node.js client and the script that
// drives it (examples/sharing/interop/read.mjs).
var interopDir = filepath.Join("..", "..", "examples", "sharing", "interop")

// nodeClientOutput is what read.mjs prints.
type nodeClientOutput struct {
	Shares    []string
	Schemas   []map[string]string
	Tables    []map[string]string
	AllTables []map[string]string
	Protocol  struct{ MinReaderVersion int }
	Metadata  struct {
		ID               string
		Format           struct{ Provider string }
		SchemaString     string
		PartitionColumns []string
	}
	Files []struct {
		URL             string
		Size            int64
		PartitionValues map[string]string
		Rows            []nodeRow
	}
	Rows           []nodeRow
	DataFrameRows  []nodeRow
	DataFrameError *string
}

type nodeRow struct {
	ID     int64   `json:"id"`
	Region *string `json:"region"`
	Msg    *string `json:"msg"`
}

func (r nodeRow) order() order {
	o := order{ID: r.ID}
	if r.Region != nil {
		o.Region = *r.Region
	}
	if r.Msg != nil {
		o.Note = *r.Msg
	}
	return o
}

func nodeOrders(rows []nodeRow) []order {
	out := make([]order, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.order())
	}
	return sortOrders(out)
}

// smallSchema is orderSchema with an int id: parquetjs-lite reads INT32 as
// a JS number, which danfo.js takes (it refuses the BigInt of an INT64).
var smallSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "msg", Type: iceberg.PrimitiveTypes.String},
)

// A third-party Delta Sharing client, the npm package delta-sharing 0.0.2
// (its profile parsing, listings, metadata and query calls, and its reader:
// parquetjs-lite, and a danfo.js DataFrame), reads tables written through
// the gateway with iceberg-go, row for row.
//
// The client speaks the parquet response format only, so the tables have no
// renamed columns (sales.orders of TestSharingEndToEnd has one and is
// refused in that format). Its reader, parquetjs-lite 0.8.7, opens only
// files whose footer says Parquet format version 1 (as parquet-mr, so Spark
// and Iceberg Java, write them) and decodes neither ZSTD nor RLE_DICTIONARY
// pages; iceberg-go writes format version 2 (RLE_DICTIONARY, ZSTD by
// default) and has no property for the format version: its files fail with
// "invalid parquet version". So the tables' files are written as
// parquet-mr writes them (appendParquetV1) and committed with iceberg-go's
// AddFiles: two appends of one file per region.
//
// sales.plain has orderSchema (id long): the client's createDataFrame fails
// on it, in the client (danfo.js cannot hold parquetjs-lite's BigInt);
// sales.small has an int id, which createDataFrame reads.
func TestSharingNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: install Node.js to run the third-party Delta Sharing client")
	}
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "delta-sharing", "package.json")); err != nil {
		t.Skip("the npm client is not installed: run `npm ci --ignore-scripts --prefix examples/sharing/interop`")
	}

	base, _ := sharingGateway(t, nil)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tables := map[string]*table.Table{}
	for name, sc := range map[string]*iceberg.Schema{"plain": orderSchema, "small": smallSchema} {
		tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", name}, sc, catalog.WithPartitionSpec(&spec))
		require.NoError(t, err)
		tbl = appendParquetV1(t, tbl, orders(0, 14))
		tables[name] = appendParquetV1(t, tbl, orders(14, 30))
	}
	want := orders(0, 30)

	profile := filepath.Join(t.TempDir(), "demo.share")
	require.NoError(t, os.WriteFile(profile, sharing.NewProfile(base+"/delta-sharing", recipientToken, time.Time{}).JSON(), 0o600))

	for _, c := range []struct{ name, idType string }{{"plain", "long"}, {"small", "integer"}} {
		t.Run(c.name, func(t *testing.T) {
			tbl := tables[c.name]
			got := runNodeClient(t, node, profile, "demo.sales."+c.name)

			t.Run("listings", func(t *testing.T) {
				assert.Equal(t, []string{"demo"}, got.Shares, "a recipient sees its own share only")
				assert.ElementsMatch(t, []map[string]string{
					{"name": "sales", "share": "demo"}, {"name": "extra", "share": "demo"},
				}, got.Schemas)
				all := []map[string]string{
					{"name": "plain", "schema": "sales", "share": "demo"},
					{"name": "small", "schema": "sales", "share": "demo"},
					{"name": "orders_copy", "schema": "extra", "share": "demo"},
				}
				assert.ElementsMatch(t, all, got.Tables, "SharingClient.listTablesAsync of every schema")
				assert.ElementsMatch(t, all, got.AllTables, "SharingClient.listAllTablesAsync")
			})

			t.Run("metadata", func(t *testing.T) {
				assert.Equal(t, 1, got.Protocol.MinReaderVersion)
				assert.Equal(t, tbl.Metadata().TableUUID().String(), got.Metadata.ID)
				assert.Equal(t, "parquet", got.Metadata.Format.Provider)
				assert.Equal(t, []string{"region"}, got.Metadata.PartitionColumns)
				var sch struct {
					Type   string
					Fields []struct {
						Name     string
						Type     string
						Nullable bool
					}
				}
				require.NoError(t, json.Unmarshal([]byte(got.Metadata.SchemaString), &sch), "%s", got.Metadata.SchemaString)
				assert.Equal(t, "struct", sch.Type)
				require.Len(t, sch.Fields, 3)
				for i, w := range []struct {
					name, typ string
					nullable  bool
				}{{"id", c.idType, false}, {"region", "string", true}, {"msg", "string", true}} {
					assert.Equal(t, w.name, sch.Fields[i].Name)
					assert.Equal(t, w.typ, sch.Fields[i].Type)
					assert.Equal(t, w.nullable, sch.Fields[i].Nullable)
				}
			})

			t.Run("files", func(t *testing.T) {
				assert.Len(t, got.Files, dataFileCount(t, tbl), "one URL per data file")
				var all []order
				for _, f := range got.Files {
					assert.Positive(t, f.Size)
					require.NotEmpty(t, f.Rows, "%s", f.URL)
					for _, r := range f.Rows {
						assert.Equal(t, f.PartitionValues["region"], r.order().Region, "partition values match the rows")
					}
					all = append(all, nodeOrders(f.Rows)...)
				}
				assert.Equal(t, want, sortOrders(all))
			})

			t.Run("rows", func(t *testing.T) {
				assert.Equal(t, want, nodeOrders(got.Rows), "DeltaSharingReader.createDataArray")
			})

			t.Run("dataframe", func(t *testing.T) {
				if c.idType == "long" {
					// The client's own limit, not the server's: danfo.js
					// refuses parquetjs-lite's BigInt.
					require.NotNil(t, got.DataFrameError, "createDataFrame now reads a long column: check its rows here")
					assert.Contains(t, *got.DataFrameError, "BigInt")
					return
				}
				require.Nil(t, got.DataFrameError)
				assert.Equal(t, want, nodeOrders(got.DataFrameRows), "DeltaSharingReader.createDataFrame")
			})
		})
	}
}

// runNodeClient runs read.mjs for one table and decodes its answer.
func runNodeClient(t *testing.T, node, profile, name string) nodeClientOutput {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "read.mjs", profile, name)
	cmd.Dir = interopDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node read.mjs %s: %s", name, stderr.String())
	if stderr.Len() > 0 {
		t.Logf("node read.mjs %s, stderr:\n%s", name, stderr.String())
	}
	var got nodeClientOutput
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), "%s", stdout.String())
	return got
}

// appendParquetV1 commits rows to tbl as one Parquet file per region
// (partition region, identity), written with arrow-go as parquet-mr (Spark,
// Iceberg Java) writes them, which the Node client's parquetjs-lite reads:
// format version 1, snappy, dictionary pages PLAIN_DICTIONARY (but for id),
// v1 data pages, plus Iceberg field ids; iceberg-go's AddFiles takes the partition
// values from the files' statistics.
func appendParquetV1(t testing.TB, tbl *table.Table, rows []order) *table.Table {
	ctx := context.Background()
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	wfs, ok := fs.(icebergio.WriteFileIO)
	require.True(t, ok, "the table's FileIO cannot write")
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	props := parquet.NewWriterProperties(
		parquet.WithVersion(parquet.V1_0), // dictionary pages PLAIN_DICTIONARY, not RLE_DICTIONARY
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(true),
		// parquetjs-lite turns every dictionary value into a string
		// (decodeDictionaryPage: .map(d => d.toString())): a dictionary
		// encoded id would come back as "14". Keep id plain, so its type is
		// checked too; region and msg go through dictionary pages.
		parquet.WithDictionaryFor("id", false),
		parquet.WithStats(true))

	byRegion := map[string][]order{}
	var regions []string
	for _, r := range rows {
		if byRegion[r.Region] == nil {
			regions = append(regions, r.Region)
		}
		byRegion[r.Region] = append(byRegion[r.Region], r)
	}
	var paths []string
	for _, region := range regions {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for _, r := range byRegion[region] {
			switch id := b.Field(0).(type) {
			case *array.Int64Builder:
				id.Append(r.ID)
			case *array.Int32Builder:
				id.Append(int32(r.ID))
			}
			b.Field(1).(*array.StringBuilder).Append(r.Region)
			b.Field(2).(*array.StringBuilder).Append(r.Note)
		}
		rec := b.NewRecordBatch()
		b.Release()
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
		rec.Release()
		path := fmt.Sprintf("%s/data/region=%s/%s.parquet", strings.TrimSuffix(tbl.Location(), "/"), region, uuid.NewString())
		require.NoError(t, wfs.WriteFile(path, buf.Bytes()))
		paths = append(paths, path)
	}
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(ctx, paths, nil, false))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	return tbl
}

// dataFileCount is the number of data files of tbl's current snapshot.
func dataFileCount(t testing.TB, tbl *table.Table) int {
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, task := range tasks {
		paths[task.File.FilePath()] = true
	}
	return len(paths)
}
