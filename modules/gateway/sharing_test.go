package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/telemetry/telemetrytest"
	"github.com/lakegate/lakegate/translate/sharing"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

const recipientToken = "partner-secret-token"

// order is one row of the shared test table.
type order struct {
	ID     int64
	Region string
	Note   string
}

var orderSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "msg", Type: iceberg.PrimitiveTypes.String},
)

// sharingGateway is a gateway over one embedded backend ("lake") that
// shares namespace "sales" as schema "sales" of share "demo", and table
// sales.orders alone as "extra"."orders_copy".
func sharingGateway(t testing.TB, extra map[string]any) (base string, backend *embeddedtest.Server) {
	backend = embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	return sharingGatewayFor(t, backend.URL, extra), backend
}

// sharingGatewayFor is sharingGateway over a backend already serving at
// backendURL, with extra lakegate_sharing settings.
func sharingGatewayFor(t testing.TB, backendURL string, extra map[string]any) string {
	return sharingGatewayApp(t, backendURL, map[string]any{}, extra)
}

// sharingGatewayApp is sharingGatewayFor with more lakegate app settings.
func sharingGatewayApp(t testing.TB, backendURL string, app, extra map[string]any) string {
	addr := freeAddr(t)
	if extra == nil {
		extra = map[string]any{}
	}
	if _, ok := extra["change_data_dir"]; !ok {
		extra["change_data_dir"] = t.TempDir() // not Caddy's data dir in the home folder
	}
	app["catalogs"] = []any{remote("lake", backendURL, nil)}
	return serveOn(t, addr, caddyJSONHandlers(t, addr, app, sharingHandler(extra), map[string]any{"handler": "lakegate_iceberg"}))
}

// sharingHandler is the lakegate_sharing config of the tests' shares.
func sharingHandler(extra map[string]any) map[string]any {
	sum := sha256.Sum256([]byte(recipientToken))
	handler := map[string]any{
		"handler": "lakegate_sharing",
		"shares": []any{map[string]any{
			"name": "demo",
			"schemas": []any{
				map[string]any{"name": "sales", "namespaces": []any{map[string]any{"catalog": "lake", "namespace": []string{"sales"}}}},
				map[string]any{"name": "extra", "tables": []any{map[string]any{
					"name": "orders_copy", "catalog": "lake", "namespace": []string{"sales"}, "table": "orders"}}},
			},
			"recipients": []any{map[string]any{"name": "partner", "token_sha256": hex.EncodeToString(sum[:])}},
		}, map[string]any{
			"name":    "other",
			"schemas": []any{map[string]any{"name": "s", "namespaces": []any{map[string]any{"catalog": "lake", "namespace": []string{"other"}}}}},
		}},
	}
	for k, v := range extra {
		handler[k] = v
	}
	return handler
}

// orderBatch is an Arrow table of orders in tbl's current schema.
func orderBatch(t testing.TB, tbl *table.Table, rows []order) arrow.Table {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.StringBuilder).Append(r.Region)
		b.Field(2).(*array.StringBuilder).Append(r.Note)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

func orders(from, to int64) []order {
	var out []order
	regions := []string{"eu", "us", "apac"}
	for i := from; i < to; i++ {
		out = append(out, order{i, regions[i%3], fmt.Sprintf("order %d", i)})
	}
	return out
}

func appendOrders(t testing.TB, tbl *table.Table, rows []order) *table.Table {
	data := orderBatch(t, tbl, rows)
	defer data.Release()
	tbl, err := tbl.AppendTable(context.Background(), data, 1024, nil)
	require.NoError(t, err)
	return tbl
}

// writeOrders writes sales.orders through the gateway with iceberg-go:
// v1 = orders 0-8, v2 = 9-17, then msg is renamed to note, v3 = 18-26,
// v4 deletes region "us" (whole files: copy-on-write). It returns the
// versions' rows.
func writeOrders(t testing.TB, base string) (tbl *table.Table, states [][]order) {
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, orderSchema, catalog.WithPartitionSpec(&spec))
	require.NoError(t, err)
	var rows []order
	for i := int64(0); i < 3; i++ {
		if i == 2 {
			tx := tbl.NewTransaction()
			require.NoError(t, tx.UpdateSchema(true, false).RenameColumn([]string{"msg"}, "note").Commit())
			tbl, err = tx.Commit(ctx)
			require.NoError(t, err)
		}
		batch := orders(i*9, i*9+9)
		tbl = appendOrders(t, tbl, batch)
		rows = append(rows, batch...)
		states = append(states, append([]order(nil), rows...))
	}
	tx := tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, iceberg.EqualTo(iceberg.Reference("region"), "us"), nil))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	var kept []order
	for _, r := range rows {
		if r.Region != "us" {
			kept = append(kept, r)
		}
	}
	return tbl, append(states, kept)
}

// metadataVersion is the Delta version of a metadata file: its number
// (NNNNN-<uuid>.metadata.json), as iceberg-go and the Java catalogs name
// them.
func metadataVersion(t testing.TB, loc string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.SplitN(filepath.Base(loc), "-", 2)[0], 10, 64)
	require.NoError(t, err, loc)
	return n
}

// snapshotVersions maps each snapshot of tbl's main branch to the Delta
// version that committed it: the first metadata file (read directly from
// the warehouse) where it is current.
func snapshotVersions(t testing.TB, tbl *table.Table) map[int64]int64 {
	t.Helper()
	locs := []string{}
	for e := range tbl.Metadata().PreviousFiles() {
		locs = append(locs, e.MetadataFile)
	}
	out := map[int64]int64{}
	for _, loc := range append(locs, tbl.MetadataLocation()) {
		old, err := table.NewFromLocation(context.Background(), tbl.Identifier(), loc, tbl.FS, nil)
		require.NoError(t, err)
		if cs := old.Metadata().CurrentSnapshot(); cs != nil {
			if _, seen := out[cs.SnapshotID]; !seen {
				out[cs.SnapshotID] = metadataVersion(t, loc)
			}
		}
	}
	return out
}

// shareClient speaks the protocol as a recipient's client would, from a
// profile file.
type shareClient struct {
	t       testing.TB
	profile sharing.Profile
}

func clientFromProfile(t testing.TB, endpoint, token string) *shareClient {
	path := filepath.Join(t.TempDir(), "demo.share")
	require.NoError(t, os.WriteFile(path, sharing.NewProfile(endpoint, token, time.Time{}).JSON(), 0o600))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var p sharing.Profile
	require.NoError(t, json.Unmarshal(raw, &p))
	require.Equal(t, 1, p.ShareCredentialsVersion)
	return &shareClient{t: t, profile: p}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (c *shareClient) do(method, path string, header map[string]string, body string) reply {
	req, err := http.NewRequest(method, c.profile.Endpoint+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.profile.BearerToken)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return reply{resp.StatusCode, resp.Header, b}
}

func (r reply) json(t testing.TB) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "%s", r.body)
	return m
}

// lines splits an NDJSON answer into its objects.
func (r reply) lines(t testing.TB) []map[string]any {
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m), "%s", l)
		out = append(out, m)
	}
	return out
}

func (r reply) version(t testing.TB) int64 {
	v, err := strconv.ParseInt(r.header.Get("Delta-Table-Version"), 10, 64)
	require.NoError(t, err, "Delta-Table-Version %q (status %d: %s)", r.header.Get("Delta-Table-Version"), r.status, r.body)
	return v
}

// fileRows downloads one file URL and reads its rows with arrow-go:
// by parquet field id (delta format: column mapping mode id) or by name.
func fileRows(t testing.TB, url string, byID bool) []order {
	return parquetRows(t, download(t, url), byID)
}

// download GETs one file URL.
func download(t testing.TB, url string) []byte {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return data
}

// parquetRows reads a Parquet file's orders with arrow-go.
func parquetRows(t testing.TB, data []byte, byID bool) []order {
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data),
		parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	defer tbl.Release()
	col := map[string]int{}
	for i, f := range tbl.Schema().Fields() {
		key := f.Name
		if byID {
			id, _ := f.Metadata.GetValue("PARQUET:field_id")
			key = map[string]string{"1": "id", "2": "region", "3": "note"}[id]
		}
		col[key] = i
	}
	var out []order
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			r := order{ID: rec.Column(col["id"]).(*array.Int64).Value(i),
				Region: rec.Column(col["region"]).(*array.String).Value(i)}
			if n, ok := col["note"]; ok {
				r.Note = rec.Column(n).(*array.String).Value(i)
			} else if n, ok := col["msg"]; ok {
				r.Note = rec.Column(n).(*array.String).Value(i)
			}
			out = append(out, r)
		}
	}
	return out
}

func sortOrders(rows []order) []order {
	out := append([]order(nil), rows...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// A recipient reads an Iceberg table written by iceberg-go through the
// gateway as a Delta Sharing client would: profile → listings → metadata
// → query → download every URL → read the Parquet with arrow-go, row for
// row; time travel, changes between versions, both response formats.
func TestSharingEndToEnd(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	tbl, states := writeOrders(t, base)
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)

	t.Run("listings", func(t *testing.T) {
		r := c.do("GET", "/shares", nil, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, []any{map[string]any{"name": "demo"}}, r.json(t)["items"], "a recipient sees its own share only")
		r = c.do("GET", "/shares/DEMO", nil, "")
		assert.Equal(t, map[string]any{"name": "demo"}, r.json(t)["share"], "names are case-insensitive")
		r = c.do("GET", "/shares/demo/schemas", nil, "")
		assert.Len(t, r.json(t)["items"], 2)
		r = c.do("GET", "/shares/demo/schemas/sales/tables", nil, "")
		assert.Equal(t, []any{map[string]any{"name": "orders", "schema": "sales", "share": "demo"}}, r.json(t)["items"])
		r = c.do("GET", "/shares/demo/all-tables", nil, "")
		assert.Len(t, r.json(t)["items"], 2)
	})

	t.Run("paging", func(t *testing.T) {
		r := c.do("GET", "/shares/demo/all-tables?maxResults=1", nil, "")
		page := r.json(t)
		require.Len(t, page["items"], 1)
		token := page["nextPageToken"].(string)
		r = c.do("GET", "/shares/demo/all-tables?maxResults=1&pageToken="+token, nil, "")
		page2 := r.json(t)
		require.Len(t, page2["items"], 1)
		assert.NotEqual(t, page["items"], page2["items"])
		assert.Nil(t, page2["nextPageToken"])
		r = c.do("GET", "/shares/demo/schemas?pageToken="+token, nil, "")
		assert.Equal(t, 400, r.status, "a token of another listing is refused")
	})

	current := metadataVersion(t, tbl.MetadataLocation())
	t.Run("version", func(t *testing.T) {
		r := c.do("GET", "/shares/demo/schemas/sales/tables/orders/version", nil, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, current, r.version(t))
		r = c.do("HEAD", "/shares/demo/schemas/sales/tables/orders", nil, "")
		assert.Equal(t, current, r.version(t))
		r = c.do("GET", "/shares/Demo/schemas/SALES/tables/Orders/version", nil, "")
		require.Equal(t, 200, r.status, "names are case-insensitive, the table's too: %s", r.body)
		assert.Equal(t, current, r.version(t))
	})

	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta;readerfeatures=columnmapping"}
	t.Run("metadata", func(t *testing.T) {
		r := c.do("GET", "/shares/demo/schemas/sales/tables/orders/metadata", nil, "")
		assert.Equal(t, 400, r.status, "renamed columns cannot be read in parquet format: %s", r.body)
		assert.Contains(t, string(r.body), "renamed")

		r = c.do("GET", "/shares/demo/schemas/sales/tables/orders/metadata", delta, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "application/x-ndjson; charset=utf-8", r.header.Get("Content-Type"))
		assert.Equal(t, "responseformat=delta", r.header.Get("delta-sharing-capabilities"))
		assert.Equal(t, current, r.version(t))
		lines := r.lines(t)
		require.Len(t, lines, 2, "protocol and metadata, no endStreamAction unless asked")
		md := lines[1]["metaData"].(map[string]any)["deltaMetadata"].(map[string]any)
		assert.Equal(t, tbl.Metadata().TableUUID().String(), md["id"])
		assert.Equal(t, []any{"region"}, md["partitionColumns"])
		assert.Equal(t, "id", md["configuration"].(map[string]any)["delta.columnMapping.mode"])
		assert.Contains(t, md["schemaString"], `"delta.columnMapping.id":3`)
		assert.Contains(t, md["schemaString"], `"name":"note"`)
	})

	readAll := func(t *testing.T, r reply, byID bool) []order {
		require.Equal(t, 200, r.status, "%s", r.body)
		var rows []order
		for _, l := range r.lines(t)[2:] {
			f := l["file"].(map[string]any)
			desc := f // parquet format: url, size, stats on the file line
			if act, ok := f["deltaSingleAction"].(map[string]any); ok {
				desc = act["add"].(map[string]any) // delta format: an add action
				desc["url"] = desc["path"]
			}
			data := download(t, desc["url"].(string))
			got := parquetRows(t, data, byID)
			assert.EqualValues(t, len(data), desc["size"], "size is the file's")
			var stats struct {
				NumRecords int
				MinValues  struct{ ID int64 }
				MaxValues  struct{ ID int64 }
			}
			require.NoError(t, json.Unmarshal([]byte(desc["stats"].(string)), &stats))
			assert.Equal(t, len(got), stats.NumRecords, "stats count the file's rows")
			for _, row := range got {
				assert.True(t, stats.MinValues.ID <= row.ID && row.ID <= stats.MaxValues.ID,
					"id %d within the stats' bounds [%d, %d]", row.ID, stats.MinValues.ID, stats.MaxValues.ID)
			}
			for _, row := range got {
				assert.Equal(t, row.Region, desc["partitionValues"].(map[string]any)["region"], "partition values match the rows")
			}
			rows = append(rows, got...)
		}
		return sortOrders(rows)
	}

	t.Run("files and bytes served are counted", func(t *testing.T) {
		labels := map[string]string{"catalog": "lake", "share": "demo"}
		files := telemetrytest.Sample(t, "lakegate_sharing_files_total", labels)
		bytes := telemetrytest.Sample(t, "lakegate_sharing_bytes_total", labels)
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")
		require.Equal(t, 200, r.status, "%s", r.body)
		var n, size float64
		for _, l := range r.lines(t)[2:] {
			add := l["file"].(map[string]any)["deltaSingleAction"].(map[string]any)["add"].(map[string]any)
			n, size = n+1, size+add["size"].(float64)
		}
		require.Positive(t, n)
		assert.Equal(t, files+n, telemetrytest.Sample(t, "lakegate_sharing_files_total", labels))
		assert.Equal(t, bytes+size, telemetrytest.Sample(t, "lakegate_sharing_bytes_total", labels))
	})

	t.Run("query latest, delta format", func(t *testing.T) {
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")
		assert.Equal(t, current, r.version(t))
		assert.Equal(t, sortOrders(states[3]), readAll(t, r, true))
		r = c.do("POST", "/shares/demo/schemas/extra/tables/orders_copy/query", delta, "")
		assert.Equal(t, sortOrders(states[3]), readAll(t, r, true), "a table shared by name reads the same")

		ids := func(r reply) []string {
			var out []string
			for _, l := range r.lines(t)[2:] {
				out = append(out, l["file"].(map[string]any)["id"].(string))
			}
			sort.Strings(out)
			return out
		}
		first := ids(c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}"))
		assert.NotEmpty(t, first)
		assert.Equal(t, len(first), len(slices.Compact(slices.Clone(first))), "one id per file")
		assert.Equal(t, first, ids(c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")), "file ids are stable")
	})

	history := tbl.Metadata().Snapshots()
	committed := snapshotVersions(t, tbl)
	versionOf := func(i int) int64 { return committed[history[i].SnapshotID] }
	t.Run("time travel, parquet format", func(t *testing.T) {
		// Version 2 predates the rename: parquet format is exact there.
		body := fmt.Sprintf(`{"version": %d}`, versionOf(1))
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", nil, body)
		assert.Equal(t, versionOf(1), r.version(t))
		assert.Equal(t, "responseformat=parquet", r.header.Get("delta-sharing-capabilities"))
		assert.Equal(t, sortOrders(states[1]), readAll(t, r, false))
		for _, l := range r.lines(t)[2:] {
			assert.EqualValues(t, versionOf(1), l["file"].(map[string]any)["version"], "time travel files carry their version")
		}
		ts := time.UnixMilli(history[0].TimestampMs).UTC().Format(time.RFC3339Nano)
		r = c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, `{"timestamp": "`+ts+`"}`)
		assert.Equal(t, sortOrders(states[0]), readAll(t, r, true))
	})

	t.Run("changes between versions", func(t *testing.T) {
		q := fmt.Sprintf("/shares/demo/schemas/sales/tables/orders/changes?startingVersion=%d&endingVersion=%d", versionOf(2), versionOf(3))
		r := c.do("GET", q, nil, "")
		assert.Equal(t, 400, r.status, "renamed columns need delta format here too")
		r = c.do("GET", q, delta, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, versionOf(2), r.version(t))
		adds, removes := map[int64][]order{}, map[int64][]order{}
		for _, l := range r.lines(t)[2:] {
			f := l["file"].(map[string]any)
			v := int64(f["version"].(float64))
			act := f["deltaSingleAction"].(map[string]any)
			if a, ok := act["add"].(map[string]any); ok {
				adds[v] = append(adds[v], fileRows(t, a["path"].(string), true)...)
			} else {
				rm := act["remove"].(map[string]any)
				removes[v] = append(removes[v], fileRows(t, rm["path"].(string), true)...)
			}
		}
		assert.Equal(t, sortOrders(orders(18, 27)), sortOrders(adds[versionOf(2)]))
		var us []order
		for _, o := range states[2] {
			if o.Region == "us" {
				us = append(us, o)
			}
		}
		assert.Equal(t, sortOrders(us), sortOrders(removes[versionOf(3)]), "the delete removed every us file")
		assert.Empty(t, adds[versionOf(3)])

		// The head metaData is the starting version's; each later schema
		// change gets its own line (includeHistoricalMetadata).
		metaLines := func(q string) (head map[string]any, historical []map[string]any) {
			r := c.do("GET", q+"&includeHistoricalMetadata=true", delta, "")
			require.Equal(t, 200, r.status, "%s", r.body)
			lines := r.lines(t)
			for _, l := range lines[2:] {
				if m, ok := l["metaData"].(map[string]any); ok {
					historical = append(historical, m)
				}
			}
			return lines[1]["metaData"].(map[string]any), historical
		}
		head, historical := metaLines(q)
		assert.Contains(t, head["deltaMetadata"].(map[string]any)["schemaString"], `"name":"note"`,
			"version %d was written with the renamed schema", versionOf(2))
		assert.Empty(t, historical, "no schema change after the start")
		head, historical = metaLines(fmt.Sprintf("/shares/demo/schemas/sales/tables/orders/changes?startingVersion=%d&endingVersion=%d",
			versionOf(1), versionOf(3)))
		assert.Contains(t, head["deltaMetadata"].(map[string]any)["schemaString"], `"name":"msg"`, "the start's schema")
		// The rename is a version of its own (a schema-only commit), the one
		// before the append written with it.
		require.Len(t, historical, 1, "one metaData line: the rename's, at its own version %d", versionOf(2)-1)
		assert.EqualValues(t, versionOf(2)-1, historical[0]["version"])
		assert.Contains(t, historical[0]["deltaMetadata"].(map[string]any)["schemaString"], `"name":"note"`)

		// Without includeHistoricalMetadata the head is the table's latest
		// metaData, as the reference server answers: Spark's batch change
		// feed builds its scan from it, and with the start's schema it
		// cannot resolve the columns added later.
		r = c.do("GET", fmt.Sprintf("/shares/demo/schemas/sales/tables/orders/changes?startingVersion=%d&endingVersion=%d",
			versionOf(1), versionOf(2)), delta, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		latest := r.lines(t)[1]["metaData"].(map[string]any)["deltaMetadata"].(map[string]any)
		assert.Contains(t, latest["schemaString"], `"name":"note"`, "the latest schema heads the feed")
	})

	t.Run("startingVersion query and endStreamAction", func(t *testing.T) {
		h := map[string]string{"delta-sharing-capabilities": "responseformat=delta;includeendstreamaction=true"}
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", h, fmt.Sprintf(`{"startingVersion": %d}`, versionOf(3)))
		require.Equal(t, 200, r.status, "%s", r.body)
		assert.Equal(t, "responseformat=delta;includeendstreamaction=true", r.header.Get("delta-sharing-capabilities"))
		lines := r.lines(t)
		end := lines[len(lines)-1]["endStreamAction"].(map[string]any)
		assert.NotZero(t, end["minUrlExpirationTimestamp"])
		for _, l := range lines[2 : len(lines)-1] {
			assert.Contains(t, l["file"].(map[string]any)["deltaSingleAction"], "remove")
		}
	})

	only := func(region string) []order {
		var out []order
		for _, o := range states[3] {
			if o.Region == region {
				out = append(out, o)
			}
		}
		return sortOrders(out)
	}
	t.Run("hints prune files", func(t *testing.T) {
		hint := `{"op":"equal","children":[{"op":"column","name":"region","valueType":"string"},{"op":"literal","value":"eu","valueType":"string"}]}`
		body, _ := json.Marshal(map[string]any{"jsonPredicateHints": hint})
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, string(body))
		assert.Equal(t, only("eu"), readAll(t, r, true), "only the eu files are listed")
		r = c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, `{"predicateHints": ["region = 'apac'"]}`)
		assert.Equal(t, only("apac"), readAll(t, r, true), "only the apac files are listed")
		r = c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, `{"jsonPredicateHints": "{not json", "predicateHints": ["((("]}`)
		assert.Equal(t, sortOrders(states[3]), readAll(t, r, true), "unusable hints are ignored")
		r = c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, `{"limitHint": 1}`)
		assert.Len(t, r.lines(t), 3, "limitHint: one file holds enough rows")
	})
}

// Bad input gets the protocol's error model and the reference codes.
func TestSharingBadInput(t *testing.T) {
	base, _ := sharingGateway(t, map[string]any{"url_lifetime": "1s"})
	writeOrders(t, base)
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	tbl := "/shares/demo/schemas/sales/tables/orders"
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		code                     string
	}{
		{"unknown share", "GET", "/shares/nope/schemas", "", nil, 404, "RESOURCE_DOES_NOT_EXIST"},
		{"another recipient's share", "GET", "/shares/other", "", nil, 404, "RESOURCE_DOES_NOT_EXIST"},
		{"unknown schema", "GET", "/shares/demo/schemas/nope/tables", "", nil, 404, "RESOURCE_DOES_NOT_EXIST"},
		{"unknown table", "GET", "/shares/demo/schemas/sales/tables/nope/metadata", "", nil, 404, "RESOURCE_DOES_NOT_EXIST"},
		{"unknown operation", "GET", tbl + "/nope", "", nil, 404, "RESOURCE_DOES_NOT_EXIST"},
		{"bad page token", "GET", "/shares?pageToken=forged", "", nil, 400, "INVALID_PARAMETER_VALUE"},
		{"bad maxResults", "GET", "/shares?maxResults=-1", "", nil, 400, "INVALID_PARAMETER_VALUE"},
		{"version and timestamp", "POST", tbl + "/query", `{"version":1,"timestamp":"2022-01-01T00:00:00Z"}`, delta, 400, "INVALID_PARAMETER_VALUE"},
		{"metadata version and timestamp", "GET", tbl + "/metadata?version=1&timestamp=2022-01-01T00:00:00Z", "", delta, 400, "INVALID_PARAMETER_VALUE"},
		{"version from the future", "POST", tbl + "/query", `{"version":99}`, delta, 400, "INVALID_PARAMETER_VALUE"},
		{"timestamp before the table", "POST", tbl + "/query", `{"timestamp":"2000-01-01T00:00:00Z"}`, delta, 400, "INVALID_PARAMETER_VALUE"},
		{"malformed body", "POST", tbl + "/query", `{"version":`, delta, 400, "MALFORMED_REQUEST"},
		{"changes without a start", "GET", tbl + "/changes", "", delta, 400, "INVALID_PARAMETER_VALUE"},
		{"unknown response format", "GET", tbl + "/metadata", "", map[string]string{"delta-sharing-capabilities": "responseformat=csv"}, 400, "INVALID_PARAMETER_VALUE"},
		{"delta without column mapping", "GET", tbl + "/metadata", "", map[string]string{"delta-sharing-capabilities": "responseformat=delta;readerfeatures=deletionvectors"}, 400, "INVALID_PARAMETER_VALUE"},
	}
	for _, tc := range cases {
		r := c.do(tc.method, tc.path, tc.header, tc.body)
		assert.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
		assert.Equal(t, tc.code, r.json(t)["errorCode"], tc.name)
		assert.NotEmpty(t, r.json(t)["message"], tc.name)
	}

	for name, token := range map[string]string{"no token": "", "wrong token": "guess"} {
		r := (&shareClient{t: t, profile: sharing.Profile{Endpoint: c.profile.Endpoint, BearerToken: token}}).do("GET", "/shares", nil, "")
		assert.Equal(t, 401, r.status, name)
		assert.Equal(t, "UNAUTHENTICATED", r.json(t)["errorCode"], name)
	}

	// The one Bearer parser of every door: the scheme is case-insensitive
	// (RFC 7235), and two Authorization headers are refused, since hops
	// could each pick another.
	for name, tc := range map[string]struct {
		values []string
		status int
	}{
		"lower-case scheme":   {[]string{"bearer " + c.profile.BearerToken}, 200},
		"two headers":         {[]string{"Bearer " + c.profile.BearerToken, "Bearer guess"}, 401},
		"two headers, same":   {[]string{"Bearer " + c.profile.BearerToken, "Bearer " + c.profile.BearerToken}, 401},
		"another scheme only": {[]string{"Basic " + c.profile.BearerToken}, 401},
	} {
		req, err := http.NewRequest(http.MethodGet, c.profile.Endpoint+"/shares", nil)
		require.NoError(t, err)
		req.Header["Authorization"] = tc.values
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, name)
	}

	r := c.do("POST", tbl+"/query", delta, `{"limitHint": 1}`)
	require.Equal(t, 200, r.status, "%s", r.body)
	add := r.lines(t)[2]["file"].(map[string]any)["deltaSingleAction"].(map[string]any)["add"].(map[string]any)
	url := add["path"].(string)
	i := strings.LastIndex(url, "/")
	token := url[i+1:]
	mid := len(token) / 2
	flipped := byte('A')
	if token[mid] == 'A' {
		flipped = 'B'
	}
	tampered := url[:i+1] + token[:mid] + string(flipped) + token[mid+1:]
	for name, u := range map[string]string{
		"tampered":    tampered,
		"path escape": base + "/delta-sharing/files/..%2F..%2F..%2Fetc%2Fpasswd",
		"no token":    base + "/delta-sharing/files/x",
	} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 403, resp.StatusCode, name)
	}
	// The URL works while fresh. A loaded machine may take longer than the
	// 1 s lifetime between minting a URL and fetching it; then that URL says
	// nothing about freshness, and a new one is minted.
	status := 0
	for try := 0; try < 5; try++ {
		minted := time.Now()
		r := c.do("POST", tbl+"/query", delta, `{"limitHint": 1}`)
		require.Equal(t, 200, r.status, "%s", r.body)
		url = r.lines(t)[2]["file"].(map[string]any)["deltaSingleAction"].(map[string]any)["add"].(map[string]any)["path"].(string)
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		if status = resp.StatusCode; status == 200 || time.Since(minted) < time.Second {
			break
		}
	}
	require.Equal(t, 200, status, "the URL works while fresh")
	time.Sleep(2100 * time.Millisecond)
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 403, resp.StatusCode, "an expired URL is refused")
	assert.Contains(t, string(body), "expired")
}

// A merge-on-read table (row-level delete files) is refused with a clear
// error, never answered with rows that were deleted.
func TestSharingRefusesDeleteFiles(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "mor"}, orderSchema,
		catalog.WithProperties(iceberg.Properties{"write.delete.mode": "merge-on-read", "format-version": "2"}))
	require.NoError(t, err)
	tbl = appendOrders(t, tbl, orders(0, 10))
	tx := tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(3)), nil))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	r := c.do("POST", "/shares/demo/schemas/sales/tables/mor/query", nil, "{}")
	assert.Equal(t, 400, r.status, "%s", r.body)
	assert.Equal(t, "INVALID_PARAMETER_VALUE", r.json(t)["errorCode"])
	assert.Contains(t, r.json(t)["message"], "delete files")
	r = c.do("GET", "/shares/demo/schemas/sales/tables/mor/metadata", nil, "")
	assert.Equal(t, 200, r.status, "metadata needs no files: %s", r.body)
}

const denyOrdersCopy = `package lakegate.sharetest

decision := {"allow": false, "reason": "orders_copy is not for analysts"} if {
	input.api == "sharing"
	input.resource.share_table == "orders_copy"
	"analyst" in input.principal.groups
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// Principals of the app's identity reach shares too, and the OPA policy
// decides per table (api "sharing"): a denied table is neither listed nor
// readable, while recipient tokens keep working.
func TestSharingIdentityAndPolicy(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "share.rego"), []byte(denyOrdersCopy), 0o644))
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	base := sharingGatewayApp(t, backend.URL, map[string]any{
		"identity": map[string]any{"tokens": []any{
			map[string]any{"id": "ana", "sha256": identity.HashSecret("analyst-token"), "groups": []string{"analyst"}}}},
		"policy": map[string]any{"dir": dir, "package": "lakegate.sharetest"},
	}, nil)
	writeOrders(t, base)
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}

	ana := clientFromProfile(t, base+"/delta-sharing", "analyst-token")
	r := ana.do("GET", "/shares", nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Len(t, r.json(t)["items"], 2, "no recipient limit: every share the policy allows")
	r = ana.do("GET", "/shares/demo/all-tables", nil, "")
	assert.Equal(t, []any{map[string]any{"name": "orders", "schema": "sales", "share": "demo"}}, r.json(t)["items"])
	r = ana.do("POST", "/shares/demo/schemas/extra/tables/orders_copy/query", delta, "{}")
	assert.Equal(t, 404, r.status, "a denied table reads as missing: %s", r.body)
	r = ana.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")
	assert.Equal(t, 200, r.status, "%s", r.body)

	partner := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	r = partner.do("POST", "/shares/demo/schemas/extra/tables/orders_copy/query", delta, "{}")
	assert.Equal(t, 200, r.status, "the policy denies analysts only: %s", r.body)
	r = partner.do("GET", "/shares/other", nil, "")
	assert.Equal(t, 404, r.status, "a recipient stays in its share")
}

// A table in a multi-level namespace is shared and read like any other:
// lakegate addresses it with the catalog's namespace separator.
func TestSharingMultiLevelNamespace(t *testing.T) {
	sum := sha256.Sum256([]byte(recipientToken))
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	base := sharingGatewayFor(t, backend.URL, map[string]any{"shares": []any{map[string]any{
		"name": "deep",
		"schemas": []any{
			map[string]any{"name": "eu", "tables": []any{map[string]any{
				"name": "orders", "catalog": "lake", "namespace": []string{"sales", "eu"}, "table": "orders"}}},
			map[string]any{"name": "all_eu", "namespaces": []any{map[string]any{"catalog": "lake", "namespace": []string{"sales", "eu"}}}},
		},
		"recipients": []any{map[string]any{"name": "partner", "token_sha256": hex.EncodeToString(sum[:])}},
	}}})
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales", "eu"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "eu", "orders"}, orderSchema)
	require.NoError(t, err)
	appendOrders(t, tbl, orders(0, 5))

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	for _, schema := range []string{"eu", "all_eu"} {
		r := c.do("POST", "/shares/deep/schemas/"+schema+"/tables/orders/query", nil, "{}")
		require.Equal(t, 200, r.status, "%s: %s", schema, r.body)
		var rows []order
		for _, l := range r.lines(t)[2:] {
			rows = append(rows, fileRows(t, l["file"].(map[string]any)["url"].(string), false)...)
		}
		assert.Equal(t, orders(0, 5), sortOrders(rows), schema)
	}
	r := c.do("GET", "/shares/deep/all-tables", nil, "")
	assert.Len(t, r.json(t)["items"], 2)
}

// planningGateway serves the tests' shares twice over one embedded backend
// (Caddy is one per process): at /auto, planned by the backend when it
// can, and at /local, planned by lakegate. plans counts the backend's
// plan requests.
func planningGateway(t testing.TB) (base string, plans *atomic.Int64) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	plans = new(atomic.Int64)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/plan") {
			plans.Add(1)
		}
		cat.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { backend.Close(); _ = cat.Close() })
	addr := freeAddr(t)
	app := map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}}
	return serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		sharingHandler(map[string]any{"planning": "auto", "prefix": "/auto"}),
		sharingHandler(map[string]any{"planning": "local", "prefix": "/local"}),
		map[string]any{"handler": "lakegate_iceberg"})), plans
}

// The backend's server-side planning and lakegate's own planner list the
// same files with the same sizes, partition values and column stats; in
// auto mode the backend plans (one plan request per query).
func TestSharingPlanningModes(t *testing.T) {
	base, plans := planningGateway(t)
	writeOrders(t, base)

	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	files := func(prefix string) map[string]map[string]any {
		r := clientFromProfile(t, base+prefix, recipientToken).do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, "{}")
		require.Equal(t, 200, r.status, "%s", r.body)
		out := map[string]map[string]any{}
		for _, l := range r.lines(t)[2:] {
			f := l["file"].(map[string]any)
			add := f["deltaSingleAction"].(map[string]any)["add"].(map[string]any)
			delete(add, "path") // the URLs differ by front door
			out[f["id"].(string)] = add
		}
		return out
	}
	plans.Store(0)
	byBackend := files("/auto")
	assert.EqualValues(t, 1, plans.Load(), "auto: the backend plans")
	byLakegate := files("/local")
	assert.EqualValues(t, 1, plans.Load(), "local: lakegate plans, the backend is not asked")
	require.NotEmpty(t, byBackend)
	assert.Equal(t, byLakegate, byBackend)
	for id, add := range byBackend {
		assert.Contains(t, add["stats"], `"minValues"`, "file %s: bounds from the backend's plan", id)
	}
}

// A table without renamed or reused column names is served in delta format
// without column mapping, to a client that lists its reader features
// without columnmapping (the protocol's own example), and the fileidhash
// header is validated and echoed, with the same file ids in both formats.
func TestSharingDeltaWithoutColumnMapping(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "plain"}, orderSchema,
		catalog.WithProperties(iceberg.Properties{"owner": "sales", "lakegate.delta.domain-metadata": "{}",
			"write.parquet.compression-codec": "zstd"}))
	require.NoError(t, err)
	want := orders(0, 6)
	appendOrders(t, tbl, want)

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	path := "/shares/demo/schemas/sales/tables/plain/query"
	caps := map[string]string{"delta-sharing-capabilities": "responseformat=delta;readerfeatures=deletionvectors",
		"fileidhash": "Delta"}
	r := c.do("POST", path, caps, "{}")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, "delta", r.header.Get("fileidhash"), "echoed, lower case")
	lines := r.lines(t)
	assert.Equal(t, map[string]any{"minReaderVersion": 1.0, "minWriterVersion": 4.0},
		lines[0]["protocol"].(map[string]any)["deltaProtocol"], "reader 1; writer 4 has the change data feed")
	md := lines[1]["metaData"].(map[string]any)["deltaMetadata"].(map[string]any)
	assert.Equal(t, map[string]any{"owner": "sales", "delta.enableChangeDataFeed": "true"}, md["configuration"],
		"no column mapping, no lakegate.* or Iceberg keys; appends only, so the feed is declared")
	assert.NotContains(t, md["schemaString"], "columnMapping")
	var got []order
	deltaIDs := map[string]bool{}
	for _, l := range lines[2:] {
		add := l["file"].(map[string]any)["deltaSingleAction"].(map[string]any)["add"].(map[string]any)
		deltaIDs[l["file"].(map[string]any)["id"].(string)] = true
		got = append(got, fileRows(t, add["path"].(string), false)...)
	}
	assert.Equal(t, sortOrders(want), sortOrders(got), "read by column name")

	r = c.do("POST", path, map[string]string{"fileidhash": "parquet"}, "{}")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, "parquet", r.header.Get("fileidhash"))
	parquetIDs := map[string]bool{}
	for _, l := range r.lines(t)[2:] {
		parquetIDs[l["file"].(map[string]any)["id"].(string)] = true
	}
	assert.Equal(t, deltaIDs, parquetIDs, "a file keeps its id whichever format")

	for _, p := range []string{path, "/shares/demo/schemas/sales/tables/plain/changes?startingVersion=0"} {
		method := map[bool]string{true: "POST", false: "GET"}[p == path]
		r = c.do(method, p, map[string]string{"fileidhash": "md5"}, "{}")
		assert.Equal(t, 400, r.status, "%s", r.body)
		assert.Equal(t, "INVALID_PARAMETER_VALUE", r.json(t)["errorCode"])
	}
}

// Version 0 exists from the table's creation, and timestamps mean the same
// on every endpoint: before creation is refused, between creation and the
// first snapshot is version 0, a future point is refused everywhere, and a
// future end of a change range is clamped to the latest version.
func TestSharingTimestamps(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "timed"}, orderSchema)
	require.NoError(t, err)
	createdMs := tbl.Metadata().LastUpdatedMillis()
	time.Sleep(20 * time.Millisecond)
	tbl = appendOrders(t, tbl, orders(0, 3))
	first := tbl.Metadata().CurrentSnapshot()
	require.Greater(t, first.TimestampMs, createdMs)
	firstVersion := metadataVersion(t, tbl.MetadataLocation())

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	tp := "/shares/demo/schemas/sales/tables/timed"
	stamp := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }
	future := stamp(time.Now().Add(time.Hour).UnixMilli())

	r := c.do("GET", tp+"/version?startingTimestamp="+stamp(createdMs-3600_000), nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, int64(0), r.version(t), "the earliest version after a time before creation is 0")
	r = c.do("GET", tp+"/version?startingTimestamp="+stamp(createdMs+1), nil, "")
	assert.Equal(t, firstVersion, r.version(t))

	r = c.do("POST", tp+"/query", nil, `{"timestamp":"`+stamp(createdMs)+`"}`)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, int64(0), r.version(t))
	assert.Len(t, r.lines(t), 2, "version 0 has no files")
	r = c.do("POST", tp+"/query", nil, `{"timestamp":"`+stamp(createdMs-3600_000)+`"}`)
	assert.Equal(t, 400, r.status, "%s", r.body)
	assert.Contains(t, r.json(t)["message"], "before the table was created")

	for name, req := range map[string][2]string{
		"query":    {"POST", tp + "/query"},
		"version":  {"GET", tp + "/version?startingTimestamp=" + future},
		"changes":  {"GET", tp + "/changes?startingTimestamp=" + future},
		"metadata": {"GET", tp + "/metadata?timestamp=" + future},
	} {
		r = c.do(req[0], req[1], nil, `{"timestamp":"`+future+`"}`)
		assert.Equal(t, 400, r.status, "%s: %s", name, r.body)
		assert.Contains(t, r.json(t)["message"], "in the future", name)
	}
	r = c.do("GET", tp+"/changes?startingVersion=0&endingTimestamp="+future, nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Len(t, r.lines(t), 2+1, "protocol, metadata, the first snapshot's add")
}

// A copy-on-write delete rewrites files: its row-level changes are derived
// (the deleted rows only, not the rows it copied) and served as a cdf
// change file in both formats, once per snapshot; the table declares its
// change data feed. Without a change folder, or past the byte limit, such
// a range is refused instead of over-reporting.
func TestSharingRowLevelChangesOfRewrites(t *testing.T) {
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	changeDir := t.TempDir()
	base := sharingGatewayFor(t, backend.URL, map[string]any{"change_data_dir": changeDir})
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "cow"}, orderSchema)
	require.NoError(t, err)
	tbl = appendOrders(t, tbl, orders(0, 10))
	appended := metadataVersion(t, tbl.MetadataLocation())
	tx := tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(3)), nil))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	deleted := metadataVersion(t, tbl.MetadataLocation())

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	tp := "/shares/demo/schemas/sales/tables/cow"
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	var ids []string
	for _, format := range []map[string]string{nil, delta} {
		r := c.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, appended), format, "")
		require.Equal(t, 200, r.status, "%s", r.body)
		lines := r.lines(t)
		require.Len(t, lines, 2+1+1, "protocol, metaData, the append's add, the delete's one change file: %s", r.body)
		var url string
		var version any
		if format == nil {
			cdf := lines[3]["cdf"].(map[string]any)
			url, version = cdf["url"].(string), cdf["version"]
			ids = append(ids, cdf["id"].(string))
		} else {
			f := lines[3]["file"].(map[string]any)
			cdc := f["deltaSingleAction"].(map[string]any)["cdc"].(map[string]any)
			url, version = cdc["path"].(string), f["version"]
			ids = append(ids, f["id"].(string))
			assert.Equal(t, false, cdc["dataChange"])
		}
		assert.EqualValues(t, deleted, version)
		assert.Equal(t, map[int64]string{0: "delete", 1: "delete", 2: "delete"}, changeRows(t, download(t, url)),
			"the deleted rows only, not the seven the delete copied")
	}
	assert.Equal(t, ids[0], ids[1], "one change file per snapshot, whichever format")
	// The second answer was served from the first one's files: nothing
	// under the change folder was written again.
	written := map[string]time.Time{}
	require.NoError(t, filepath.WalkDir(changeDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			written[p] = info.ModTime()
		}
		return err
	}))
	require.Len(t, written, 2, "index.json and one change file: %v", written)
	time.Sleep(20 * time.Millisecond)
	r0 := c.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, appended), nil, "")
	require.Equal(t, 200, r0.status, "%s", r0.body)
	for p, mt := range written {
		info, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mt, info.ModTime(), "%s was not rewritten", p)
	}

	r := c.do("GET", tp+"/metadata", nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), `"delta.enableChangeDataFeed":"true"`)

	// Reads at versions are unchanged.
	r = c.do("POST", tp+"/query", nil, "{}")
	require.Equal(t, 200, r.status, "%s", r.body)
	var rows []order
	for _, l := range r.lines(t)[2:] {
		rows = append(rows, fileRows(t, l["file"].(map[string]any)["url"].(string), false)...)
	}
	assert.Equal(t, sortOrders(orders(3, 10)), sortOrders(rows))

	// A query with startingVersion replays the log: the delete's version
	// answers the files it removed and the files it wrote, as the Delta
	// log would (and Delta Sharing's reference server does), not its
	// row-level changes; replaying every add and remove gives the table.
	// (One gateway runs at a time: the second, without a change folder,
	// replaces the first.)
	for _, extra := range []map[string]any{nil, {"change_data_dir": "off"}} {
		gw := base
		if extra != nil {
			gw = sharingGatewayFor(t, backend.URL, extra)
		}
		qc := clientFromProfile(t, gw+"/delta-sharing", recipientToken)
		r = qc.do("POST", tp+"/query", nil, fmt.Sprintf(`{"startingVersion": %d}`, appended))
		require.Equal(t, 200, r.status, "%s", r.body)
		live := map[string][]order{}
		removed := 0
		for _, l := range r.lines(t)[2:] {
			require.NotContains(t, l, "cdf", "a query is no change feed: %v", l)
			if a, ok := l["add"].(map[string]any); ok {
				live[a["id"].(string)] = fileRows(t, a["url"].(string), false)
			}
			if rm, ok := l["remove"].(map[string]any); ok {
				assert.EqualValues(t, deleted, rm["version"])
				delete(live, rm["id"].(string))
				removed++
			}
		}
		assert.Positive(t, removed, "the delete's version removes the files it rewrote")
		var replayed []order
		for _, rows := range live {
			replayed = append(replayed, rows...)
		}
		assert.Equal(t, sortOrders(orders(3, 10)), sortOrders(replayed))
	}

	for name, extra := range map[string]map[string]any{
		"off":   {"change_data_dir": "off"},
		"limit": {"max_change_rewrite_bytes": 10},
	} {
		other := sharingGatewayFor(t, backend.URL, extra)
		oc := clientFromProfile(t, other+"/delta-sharing", recipientToken)
		r := oc.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, appended), nil, "")
		assert.Equal(t, 400, r.status, "%s: %s", name, r.body)
		assert.Contains(t, r.json(t)["message"], fmt.Sprintf("version %d of table \"cow\" rewrote", deleted), name)
		r = oc.do("GET", fmt.Sprintf("%s/changes?startingVersion=0&endingVersion=%d", tp, appended), nil, "")
		assert.Equal(t, 200, r.status, "%s: a range before the rewrite is served: %s", name, r.body)
	}
	r = clientFromProfile(t, sharingGatewayFor(t, backend.URL, map[string]any{"change_data_dir": "off"})+"/delta-sharing",
		recipientToken).do("GET", tp+"/metadata", nil, "")
	assert.NotContains(t, string(r.body), "enableChangeDataFeed", "without a change folder the feed is not declared")
}

// changeRows reads a change file's id → _change_type.
func changeRows(t testing.TB, data []byte) map[int64]string {
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data),
		parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	defer tbl.Release()
	idCol, typeCol := -1, -1
	for i, f := range tbl.Schema().Fields() {
		switch f.Name {
		case "id":
			idCol = i
		case "_change_type":
			typeCol = i
		}
	}
	require.True(t, idCol >= 0 && typeCol >= 0, "columns: %v", tbl.Schema())
	out := map[int64]string{}
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			out[rec.Column(idCol).(*array.Int64).Value(i)] = rec.Column(typeCol).(*array.String).Value(i)
		}
	}
	return out
}

// Every metadata change is a version: a property commit and a schema
// change without a new snapshot each get their own version, /metadata
// shows the new schema at once, time travel to them reads the files of the
// snapshot they kept, and a change range lists no files for them but a
// metaData line for the schema change.
func TestSharingMetadataOnlyVersions(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "meta"}, orderSchema)
	require.NoError(t, err)
	tbl = appendOrders(t, tbl, orders(0, 5))
	appended := metadataVersion(t, tbl.MetadataLocation())
	tx := tbl.NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{"owner": "sales"}))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	propsVersion := metadataVersion(t, tbl.MetadataLocation())
	tx = tbl.NewTransaction()
	require.NoError(t, tx.UpdateSchema(true, false).AddColumn([]string{"extra"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit())
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	schemaVersion := metadataVersion(t, tbl.MetadataLocation())
	require.Equal(t, []int64{appended + 1, appended + 2}, []int64{propsVersion, schemaVersion})

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	tp := "/shares/demo/schemas/sales/tables/meta"
	r := c.do("GET", tp+"/version", nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, schemaVersion, r.version(t), "the schema change is the latest version")

	r = c.do("GET", tp+"/metadata", nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	md := r.lines(t)[1]["metaData"].(map[string]any)
	assert.Contains(t, md["schemaString"], `"name":"extra"`, "the current schema at once")
	assert.Equal(t, "sales", md["configuration"].(map[string]any)["owner"])

	r = c.do("POST", tp+"/query", nil, fmt.Sprintf(`{"version": %d}`, propsVersion))
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, propsVersion, r.version(t))
	lines := r.lines(t)
	md = lines[1]["metaData"].(map[string]any)
	assert.NotContains(t, md["schemaString"], `"name":"extra"`, "the schema as of that version")
	assert.Equal(t, "sales", md["configuration"].(map[string]any)["owner"], "the properties as of that version")
	assert.Len(t, lines, 3, "the one file of the snapshot it kept")
	for _, planning := range []string{"", `, "predicateHints": ["extra = 'x'"]`} {
		r = c.do("POST", tp+"/query", nil, `{"limitHint": 100`+planning+`}`)
		require.Equal(t, 200, r.status, "the latest version has a column its snapshot does not: %s", r.body)
		assert.Len(t, r.lines(t), 3)
	}

	r = c.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d&endingVersion=%d&includeHistoricalMetadata=true", tp, appended, schemaVersion), nil, "")
	require.Equal(t, 200, r.status, "%s", r.body)
	lines = r.lines(t)
	require.Len(t, lines, 4, "protocol, metaData, the append's add, the schema change's metaData: %s", r.body)
	assert.EqualValues(t, appended, lines[2]["add"].(map[string]any)["version"])
	assert.EqualValues(t, schemaVersion, lines[3]["metaData"].(map[string]any)["version"])
	assert.Contains(t, lines[3]["metaData"].(map[string]any)["schemaString"], `"name":"extra"`)

	// A query with startingVersion (what streaming readers send) carries
	// the historical metadata too, as the protocol says and Delta
	// Sharing's reference server answers (interop/sharing-oracle).
	r = c.do("POST", tp+"/query", nil, fmt.Sprintf(`{"startingVersion": %d}`, appended))
	require.Equal(t, 200, r.status, "%s", r.body)
	lines = r.lines(t)
	require.Len(t, lines, 4, "protocol, metaData, the append's add, the schema change's metaData: %s", r.body)
	assert.NotContains(t, lines[1]["metaData"].(map[string]any)["schemaString"], `"name":"extra"`, "the schema at the start")
	assert.EqualValues(t, schemaVersion, lines[3]["metaData"].(map[string]any)["version"])
}

// A change range longer than max_change_versions is refused with the
// reason, before any metadata file is read.
func TestSharingChangeRangeLimit(t *testing.T) {
	base, _ := sharingGateway(t, map[string]any{"max_change_versions": 2})
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "long"}, orderSchema)
	require.NoError(t, err)
	for i := int64(0); i < 3; i++ {
		tbl = appendOrders(t, tbl, orders(i, i+1))
	}
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	r := c.do("GET", "/shares/demo/schemas/sales/tables/long/changes?startingVersion=2&endingVersion=3", nil, "")
	assert.Equal(t, 200, r.status, "two versions are within the limit: %s", r.body)
	r = c.do("GET", "/shares/demo/schemas/sales/tables/long/changes?startingVersion=0", nil, "")
	require.Equal(t, 400, r.status, "%s", r.body)
	assert.Equal(t, `versions 0 to 3 of table "long" are 4 versions; lakegate reads at most 2 per request `+
		`(each is one metadata file): ask for a shorter range`, r.json(t)["message"])
}

// A sharing door whose config cannot work is refused at load, with the
// option named.
func TestSharingConfigRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		extra map[string]any
		want  string
	}{
		"unknown planning":    {map[string]any{"planning": "remote"}, `lakegate_sharing: planning must be auto or local, not "remote"`},
		"relative change dir": {map[string]any{"change_data_dir": "changes"}, `lakegate_sharing: change_data_dir must be an absolute path, not "changes"`},
		"unknown catalog": {map[string]any{"shares": []any{map[string]any{"name": "s", "schemas": []any{map[string]any{
			"name": "x", "tables": []any{map[string]any{"name": "t", "catalog": "nowhere", "namespace": []string{"n"}, "table": "t"}}}}}}},
			`lakegate_sharing: table s.x.t: no catalog named "nowhere"`},
		"bad token hash": {map[string]any{"shares": []any{map[string]any{"name": "s", "schemas": []any{},
			"recipients": []any{map[string]any{"name": "p", "token_sha256": "abc"}}}}},
			"lakegate_sharing: recipient p of share s: token_sha256 must be 64 hex digits"},
	} {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			app := map[string]any{"catalogs": []any{remote("lake", "http://127.0.0.1:9", nil)}}
			err := caddy.Load(caddyJSONHandlers(t, addr, app, sharingHandler(tc.extra)), true)
			t.Cleanup(func() { _ = caddy.Stop() })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// One token configured for two recipients would authenticate as only one
// of them: the config is refused at load, in the Caddyfile and in JSON,
// naming both recipients and neither the token nor its hash.
func TestSharingRefusesOneTokenForTwoRecipients(t *testing.T) {
	const token = "one-token-for-two"
	hash := identity.HashSecret(token)
	const want = "lakegate_sharing: recipient alice of share a and recipient bob of share b are configured with the same token"
	refused := func(t *testing.T, cfg []byte) {
		t.Helper()
		err := caddy.Load(cfg, true)
		t.Cleanup(func() { _ = caddy.Stop() })
		require.Error(t, err)
		assert.Contains(t, err.Error(), want)
		assert.NotContains(t, err.Error(), token)
		assert.NotContains(t, err.Error(), hash)
	}
	t.Run("caddyfile", func(t *testing.T) {
		refused(t, adapt(t, []byte(fmt.Sprintf(`{
	lakegate {
		catalog lake {
			remote http://127.0.0.1:9
		}
	}
}
http://%s {
	lakegate_sharing {
		share a {
			recipient alice token %[2]s
			schema s {
				namespace lake n
			}
		}
		share b {
			recipient bob sha256 %[3]s
			schema s {
				namespace lake n
			}
		}
	}
}`, freeAddr(t), token, hash))))
	})
	t.Run("json", func(t *testing.T) {
		addr := freeAddr(t)
		app := map[string]any{"catalogs": []any{remote("lake", "http://127.0.0.1:9", nil)}}
		share := func(name, recipient string) map[string]any {
			return map[string]any{"name": name,
				"schemas":    []any{map[string]any{"name": "s", "namespaces": []any{map[string]any{"catalog": "lake", "namespace": []string{"n"}}}}},
				"recipients": []any{map[string]any{"name": recipient, "token_sha256": hash}}}
		}
		refused(t, caddyJSONHandlers(t, addr, app, sharingHandler(map[string]any{"shares": []any{share("a", "alice"), share("b", "bob")}})))
	})
}

// TestSharingQueryPlansFollowTheTable: the files lakegate plans for a
// snapshot are kept and served to the next query of it, but a write makes
// a new snapshot whose files are planned anew, and a query of the older
// version still gets that version's files.
func TestSharingQueryPlansFollowTheTable(t *testing.T) {
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	addr := freeAddr(t)
	app := map[string]any{"catalogs": []any{cached("lake", backend.URL, map[string]any{"max_age": int64(time.Hour)}, nil)}}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		sharingHandler(map[string]any{"planning": "local"}), map[string]any{"handler": "lakegate_iceberg"}))
	tbl, _ := writeOrders(t, base)
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	files := func(body string) int {
		r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", delta, body)
		require.Equal(t, 200, r.status, "%s", r.body)
		return len(r.lines(t)) - 2 // protocol and metaData
	}
	before, version := files("{}"), metadataVersion(t, tbl.MetadataLocation())
	require.Positive(t, before)
	assert.Equal(t, before, files("{}"), "the same snapshot, the same files")

	appendOrders(t, tbl, orders(100, 109))
	after := files("{}")
	assert.Greater(t, after, before, "the new snapshot's files are listed")
	assert.Equal(t, after, files("{}"))
	assert.Equal(t, before, files(fmt.Sprintf(`{"version":%d}`, version)), "the older version keeps its own files")
}
