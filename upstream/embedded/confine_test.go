package embedded_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// TestWarehouseConfinement: every location a request names must be under
// the warehouse or allowed_locations; anything else is a 403 that never
// opens the file and reads the same whether the file exists or not.
func TestWarehouseConfinement(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	extra := t.TempDir()
	cfg.AllowedLocations = []string{"file://" + extra}
	cat, srv := serve(t, cfg)
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"root":"x:0:0"}`), 0o600))

	forbidden := func(name, method, path, body string) string {
		t.Helper()
		rsp, b := c.do(t, method, path, strings.NewReader(body))
		requireErrorModel(t, method, rsp, b, http.StatusForbidden, "ForbiddenException")
		assert.Contains(t, string(b), "outside the catalog's warehouse and allowed locations", name)
		assert.NotContains(t, string(b), "x:0:0", name)
		return string(b)
	}
	createTable := func(name, extraFields string) string {
		return `{"name":"` + name + `","schema":` + badInputSchema + extraFields + `}`
	}
	tables := "/v1/{p}/namespaces/ns/tables"

	forbidden("create at /etc", http.MethodPost, tables, createTable("t1", `,"location":"file:///etc/lakegate"`))
	forbidden("create climbing out", http.MethodPost, tables,
		createTable("t1", `,"location":"file://`+cfg.Warehouse+`/../escape"`))
	forbidden("create relative", http.MethodPost, tables, createTable("t1", `,"location":"relative/dir"`))
	forbidden("stage-create outside", http.MethodPost, tables,
		createTable("t1", `,"location":"file://`+outside+`","stage-create":true`))
	forbidden("metadata path outside", http.MethodPost, tables,
		createTable("t1", `,"properties":{"write.metadata.path":"file://`+outside+`"}`))
	forbidden("namespace location", http.MethodPost, "/v1/{p}/namespaces",
		`{"namespace":["ns2"],"properties":{"location":"file://`+outside+`"}}`)
	forbidden("namespace location update", http.MethodPost, "/v1/{p}/namespaces/ns/properties",
		`{"updates":{"location":"file://`+outside+`"}}`)
	forbidden("view outside", http.MethodPost, "/v1/{p}/namespaces/ns/views",
		`{"name":"v","location":"file://`+outside+`","schema":`+badInputSchema+`,
		  "view-version":{"version-id":1,"schema-id":0,"timestamp-ms":1,"summary":{},
		  "representations":[{"type":"sql","sql":"select 1","dialect":"spark"}],"default-namespace":[]}}`)

	// register: the same answer for a file that exists and one that does not
	existing := forbidden("register a secret", http.MethodPost, "/v1/{p}/namespaces/ns/register",
		`{"name":"r","metadata-location":"file://`+secret+`"}`)
	missing := forbidden("register a missing file", http.MethodPost, "/v1/{p}/namespaces/ns/register",
		`{"name":"r","metadata-location":"file://`+outside+`/missing.json"}`)
	assert.Equal(t, strings.Replace(existing, "secret.json", "missing.json", 1), missing)

	// allowed_locations extends the warehouse
	c.post(t, tables, createTable("inextra", `,"location":"file://`+extra+`/inextra"`))
	c.post(t, tables, createTable("t", ""))
	commit := func(updates string) string {
		return `{"requirements":[],"updates":[` + updates + `]}`
	}
	forbidden("set-location", http.MethodPost, tables+"/t", commit(`{"action":"set-location","location":"file://`+outside+`"}`))
	forbidden("set data path", http.MethodPost, tables+"/t",
		commit(`{"action":"set-properties","updates":{"write.data.path":"s3://other-bucket/x"}}`))
	forbidden("manifest list outside", http.MethodPost, tables+"/t",
		commit(`{"action":"add-snapshot","snapshot":{"snapshot-id":7,"sequence-number":1,"timestamp-ms":4102444800000,
		  "manifest-list":"file://`+secret+`","summary":{"operation":"append"},"schema-id":0}}`))

	// a metadata file inside the warehouse that points outside
	var loaded struct {
		MetadataLocation string         `json:"metadata-location"`
		Metadata         map[string]any `json:"metadata"`
	}
	_, b := c.do(t, http.MethodGet, tables+"/t", nil)
	require.NoError(t, json.Unmarshal(b, &loaded))
	loaded.Metadata["location"] = "file://" + outside
	crafted, err := json.Marshal(loaded.Metadata)
	require.NoError(t, err)
	craftedLoc := strings.TrimSuffix(loaded.MetadataLocation, ".metadata.json") + "-crafted.metadata.json"
	require.NoError(t, os.WriteFile(strings.TrimPrefix(craftedLoc, "file://"), crafted, 0o600))
	forbidden("register metadata pointing outside", http.MethodPost, "/v1/{p}/namespaces/ns/register",
		`{"name":"r","metadata-location":"`+craftedLoc+`"}`)

	// nothing was created by the refusals
	_, b = c.do(t, http.MethodGet, tables, nil)
	assert.JSONEq(t, `{"identifiers":[{"namespace":["ns"],"name":"inextra"},{"namespace":["ns"],"name":"t"}]}`, string(b))
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the secret is outside")
}

// TestConfinedRowsAndPurge: a row whose metadata lies outside (left by a
// configuration that allowed more) is refused without being read, and a
// purge deletes only files inside, whatever the manifests name.
func TestConfinedRowsAndPurge(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, embedded.SQLite)
	extra := t.TempDir()
	wide := cfg
	wide.AllowedLocations = []string{extra}
	_, wideURL := serve(t, wide)
	wc := client(t, wideURL)
	require.NoError(t, wc.CreateNamespace(ctx, table.Identifier{"ns"}, nil))
	_, err := wc.CreateTable(ctx, table.Identifier{"ns", "away"}, eventSchema,
		catalog.WithLocation("file://"+extra+"/away"))
	require.NoError(t, err)

	// A table in another warehouse, with data files the purge must not touch.
	_, otherURL := serve(t, testConfig(t, embedded.SQLite))
	foreign := dataFiles(t, withData(t, client(t, otherURL), table.Identifier{"ns", "src"}))

	// The narrow catalog shares the database but allows only its warehouse.
	_, narrowURL := serve(t, cfg)
	nc := rawClient{srv: narrowURL, prefix: url.PathEscape(cfg.Name)}
	rsp, b := nc.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/away", nil)
	requireErrorModel(t, http.MethodGet, rsp, b, http.StatusForbidden, "ForbiddenException")
	assert.NotContains(t, string(b), extra, "the row's location is not shown")
	rsp, b = nc.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/tables/away/plan", strings.NewReader(`{}`))
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusForbidden, "ForbiddenException")

	// A table inside whose manifest names the other warehouse's files.
	borrow(t, client(t, narrowURL), table.Identifier{"ns", "borrower"}, foreign)
	rsp, b = nc.do(t, http.MethodDelete, "/v1/{p}/namespaces/ns/tables/borrower?purgeRequested=true", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	requireFiles(t, foreign, true, "the purge left %s alone")
	rsp, _ = nc.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/borrower", nil)
	assert.Equal(t, http.StatusNotFound, rsp.StatusCode, "the table itself is dropped")
}

// withData creates the table id (and its namespace) with one data file.
func withData(t *testing.T, c *rest.Catalog, id table.Identifier) *table.Table {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateNamespace(ctx, id[:len(id)-1], nil); err != nil {
		require.ErrorIs(t, err, catalog.ErrNamespaceAlreadyExists)
	}
	tbl, err := c.CreateTable(ctx, id, eventSchema)
	require.NoError(t, err)
	data, _ := batch(t, tbl, 0, 10)
	defer data.Release()
	tbl, err = tbl.AppendTable(ctx, data, 64, nil)
	require.NoError(t, err)
	return tbl
}

// dataFiles lists the table's current data files.
func dataFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	var files []string
	for _, task := range tasks {
		files = append(files, task.File.FilePath())
	}
	require.NotEmpty(t, files)
	return files
}

// borrow creates the table id whose manifest names files it does not own.
func borrow(t *testing.T, c *rest.Catalog, id table.Identifier, files []string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := c.CreateTable(ctx, id, eventSchema)
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(ctx, files, nil, false))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
}

// requireFiles checks that each file:// path exists, or that none does.
func requireFiles(t *testing.T, files []string, exist bool, msg string) {
	t.Helper()
	for _, f := range files {
		_, err := os.Stat(strings.TrimPrefix(f, "file://"))
		if exist {
			assert.NoError(t, err, msg, f)
		} else {
			assert.ErrorIs(t, err, os.ErrNotExist, msg, f)
		}
	}
}

// TestRecursiveDropPurges: a recursive namespace drop purges the files of
// every table in the tree unless purge=false (seed 000: purge defaults to
// true), and the purge still deletes nothing outside the warehouse.
func TestRecursiveDropPurges(t *testing.T) {
	_, outsideURL := serve(t, testConfig(t, embedded.SQLite))
	foreign := dataFiles(t, withData(t, client(t, outsideURL), table.Identifier{"ns", "src"}))

	cfg := testConfig(t, embedded.SQLite)
	_, srvURL := serve(t, cfg)
	c := client(t, srvURL)
	raw := rawClient{srv: srvURL, prefix: url.PathEscape(cfg.Name)}
	gone := dataFiles(t, withData(t, c, table.Identifier{"a", "t"}))
	require.NoError(t, c.CreateNamespace(context.Background(), table.Identifier{"a", "b"}, nil))
	gone = append(gone, dataFiles(t, withData(t, c, table.Identifier{"a", "b", "t"}))...)
	borrow(t, c, table.Identifier{"a", "b", "borrower"}, foreign)
	kept := dataFiles(t, withData(t, c, table.Identifier{"k", "t"}))

	rsp, b := raw.do(t, http.MethodDelete, "/v1/{p}/namespaces/a?recursive=true", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	requireFiles(t, gone, false, "purged by default: %s")
	requireFiles(t, foreign, true, "outside the warehouse, left alone: %s")

	rsp, b = raw.do(t, http.MethodDelete, "/v1/{p}/namespaces/k?recursive=true&purge=false", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	requireFiles(t, kept, true, "purge=false keeps %s")
	rsp, _ = raw.do(t, http.MethodGet, "/v1/{p}/namespaces/k", nil)
	assert.Equal(t, http.StatusNotFound, rsp.StatusCode, "the namespace itself is dropped")
}
