package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/fileurl"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// escapedRegions are partition values whose directory names Iceberg
// writers URL-escape (region=us%2Feast+1, region=100%25, region=a%2Bb,
// region=x+y): the escapes are part of the directory's name on disk.
var escapedRegions = []string{"us/east 1", "100%", "a+b", "x y"}

func escapedOrders(from, to int64) []order {
	var out []order
	for i := from; i < to; i++ {
		out = append(out, order{i, escapedRegions[i%int64(len(escapedRegions))], fmt.Sprintf("order %d", i)})
	}
	return out
}

// createEscaped creates sales.<name>, partitioned by region.
func createEscaped(t *testing.T, cat *rest.Catalog, name string) *table.Table {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	tbl, err := cat.CreateTable(context.Background(), table.Identifier{"sales", name}, orderSchema, catalog.WithPartitionSpec(&spec))
	require.NoError(t, err)
	return tbl
}

// queryRows queries tp in format (nil: parquet) and reads back every file
// through its URL, checking each row against its file's partitionValues.
func queryRows(t *testing.T, c *shareClient, tp string, format map[string]string) []order {
	r := c.do("POST", tp+"/query", format, "{}")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var rows []order
	for _, l := range r.lines(t)[2:] {
		f := l["file"].(map[string]any)
		u, values := f["url"], f["partitionValues"]
		if format != nil {
			add := f["deltaSingleAction"].(map[string]any)["add"].(map[string]any)
			u, values = add["path"], add["partitionValues"]
		}
		got := fileRows(t, u.(string), format != nil)
		for _, o := range got {
			assert.Equal(t, values.(map[string]any)["region"], o.Region, "the file's rows are in its partition")
		}
		rows = append(rows, got...)
	}
	return sortOrders(rows)
}

// A table written as PyIceberg and Java write it (the partition directory
// named with the value's escapes: region=us%2Feast+1, region=100%25,
// region=a%2Bb, region=x+y) is served from exactly the files its manifests name:
// every URL of both response formats serves its file, and the change feed
// of a copy-on-write delete in such a partition derives its rows from
// them. A failure to read a file is answered without the server's paths.
func TestSharingEscapedPartitionDirectories(t *testing.T) {
	ctx := context.Background()
	cfg := embeddedtest.Config(t, embedded.SQLite)
	backend := embeddedtest.Serve(t, cfg)
	base := sharingGatewayFor(t, backend.URL, nil)
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl := literalWriter(createEscaped(t, cat, "escaped"), cat)
	require.True(t, strings.HasPrefix(tbl.Location(), "file:///"), tbl.Location())
	tbl = appendOrders(t, tbl, escapedOrders(0, 12))

	dataDir := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data")
	dirs, err := os.ReadDir(dataDir)
	require.NoError(t, err)
	var names []string
	for _, d := range dirs {
		names = append(names, d.Name())
	}
	assert.ElementsMatch(t, []string{"region=us%2Feast+1", "region=100%25", "region=a%2Bb", "region=x+y"}, names,
		"the partition directories are named with the escapes")

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	tp := "/shares/demo/schemas/sales/tables/escaped"
	appended := c.do("GET", tp+"/version", nil, "").version(t)
	delta := map[string]string{"delta-sharing-capabilities": "responseformat=delta"}
	for _, format := range []map[string]string{nil, delta} {
		assert.Equal(t, sortOrders(escapedOrders(0, 12)), queryRows(t, c, tp, format))
	}

	// A copy-on-write delete of one row of us/east 1 rewrites that
	// partition's file: its change feed reads the removed and added files.
	tx := tbl.NewTransaction()
	require.NoError(t, tx.Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(4)), nil))
	tbl, err = tx.Commit(ctx)
	require.NoError(t, err)
	deleted := c.do("GET", tp+"/version", nil, "").version(t)
	var kept []order
	for _, o := range escapedOrders(0, 12) {
		if o.ID != 4 {
			kept = append(kept, o)
		}
	}
	for _, format := range []map[string]string{nil, delta} {
		assert.Equal(t, kept, queryRows(t, c, tp, format))
		r := c.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, deleted), format, "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		lines := r.lines(t)
		require.Len(t, lines, 3, "protocol, metaData, the delete's change file: %s", r.body)
		var u string
		var values map[string]any
		if format == nil {
			cdf := lines[2]["cdf"].(map[string]any)
			u, values = cdf["url"].(string), cdf["partitionValues"].(map[string]any)
		} else {
			cdc := lines[2]["file"].(map[string]any)["deltaSingleAction"].(map[string]any)["cdc"].(map[string]any)
			u, values = cdc["path"].(string), cdc["partitionValues"].(map[string]any)
		}
		assert.Equal(t, map[string]any{"region": "us/east 1"}, values)
		assert.Equal(t, map[int64]string{4: "delete"}, changeRows(t, download(t, u)))
	}
	r := c.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, appended), nil, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var added int
	for _, l := range r.lines(t) {
		if a, ok := l["add"].(map[string]any); ok {
			added++
			assert.Equal(t, http.StatusOK, func() int {
				resp, err := http.Get(a["url"].(string))
				require.NoError(t, err)
				_ = resp.Body.Close()
				return resp.StatusCode
			}(), "the append's add line serves its file")
		}
	}
	assert.Equal(t, len(escapedRegions), added, "one add per partition of the append")

	// The file the delete removed is gone from disk: deriving the change
	// feed again (another gateway, another change folder) fails, and says
	// so without naming any server path.
	removed := filepath.Join(dataDir, "region=us%2Feast+1")
	files, err := os.ReadDir(removed)
	require.NoError(t, err)
	require.Len(t, files, 2, "the appended file and the delete's rewrite")
	for _, f := range files {
		require.NoError(t, os.Remove(filepath.Join(removed, f.Name())))
	}
	other := clientFromProfile(t, sharingGatewayFor(t, backend.URL, nil)+"/delta-sharing", recipientToken)
	r = other.do("GET", fmt.Sprintf("%s/changes?startingVersion=%d", tp, deleted), nil, "")
	require.Equal(t, http.StatusBadGateway, r.status, "%s", r.body)
	msg := r.json(t)["message"].(string)
	assert.Contains(t, msg, fmt.Sprintf("deriving the row-level changes of version %d of table \"escaped\" failed", deleted))
	for _, secret := range []string{cfg.Warehouse, "region=", ".parquet", os.TempDir()} {
		assert.NotContains(t, msg, secret, "the error names no server path")
	}
	r = other.do("POST", tp+"/query", nil, "{}")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	for _, l := range r.lines(t)[2:] {
		u := l["file"].(map[string]any)["url"].(string)
		resp, err := http.Get(u)
		require.NoError(t, err)
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			assert.Equal(t, http.StatusNotFound, resp.StatusCode)
			assert.NotContains(t, string(body[:n]), cfg.Warehouse)
			assert.True(t, strings.Contains(l["file"].(map[string]any)["partitionValues"].(map[string]any)["region"].(string), "us/east"))
		}
	}
}

// literalWriter is tbl written to as PyIceberg and Java write: at the
// paths its locations spell. iceberg-go's own file system would decode
// the escapes and write region=us%2Feast+1 to region=us/east+1.
func literalWriter(tbl *table.Table, cat *rest.Catalog) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fileurl.LiteralIOFunc(tbl.FS), cat)
}

// On S3 the escapes are part of the object key (region=us%2Feast+1/...):
// every presigned URL names exactly that key (S3 answers 404 for any
// other) with a signature the fake S3's guard re-derives, in both
// response formats.
func TestSharingS3EscapedPartitionKeys(t *testing.T) {
	ctx := context.Background()
	s3 := newFakeS3(t)
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + s3TestBucket + "/wh"
	cfg.Properties = s3.props()
	backend := embeddedtest.Serve(t, cfg)
	base := sharingGatewayFor(t, backend.URL, nil)
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl := appendOrders(t, createEscaped(t, cat, "escaped"), escapedOrders(0, 12))
	require.True(t, strings.HasPrefix(tbl.Location(), "s3://"), tbl.Location())

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	before := s3.presignedGETs()
	for _, format := range []map[string]string{nil, {"delta-sharing-capabilities": "responseformat=delta"}} {
		assert.Equal(t, sortOrders(escapedOrders(0, 12)), queryRows(t, c, "/shares/demo/schemas/sales/tables/escaped", format))
	}
	assert.Equal(t, before+2*len(escapedRegions), s3.presignedGETs(), "every file was read through a verified presigned URL")
}
