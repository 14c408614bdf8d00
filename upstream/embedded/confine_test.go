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
	other := testConfig(t, embedded.SQLite)
	_, otherURL := serve(t, other)
	oc := client(t, otherURL)
	require.NoError(t, oc.CreateNamespace(ctx, table.Identifier{"ns"}, nil))
	src, err := oc.CreateTable(ctx, table.Identifier{"ns", "src"}, eventSchema)
	require.NoError(t, err)
	data, _ := batch(t, src, 0, 10)
	src, err = src.AppendTable(ctx, data, 64, nil)
	data.Release()
	require.NoError(t, err)
	tasks, err := src.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	var foreign []string
	for _, task := range tasks {
		foreign = append(foreign, task.File.FilePath())
	}
	require.NotEmpty(t, foreign)

	// The narrow catalog shares the database but allows only its warehouse.
	_, narrowURL := serve(t, cfg)
	nc := rawClient{srv: narrowURL, prefix: url.PathEscape(cfg.Name)}
	rsp, b := nc.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/away", nil)
	requireErrorModel(t, http.MethodGet, rsp, b, http.StatusForbidden, "ForbiddenException")
	assert.NotContains(t, string(b), extra, "the row's location is not shown")
	rsp, b = nc.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/tables/away/plan", strings.NewReader(`{}`))
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusForbidden, "ForbiddenException")

	// A table inside whose manifest names the other warehouse's files.
	ncl := client(t, narrowURL)
	tbl, err := ncl.CreateTable(ctx, table.Identifier{"ns", "borrower"}, eventSchema)
	require.NoError(t, err)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(ctx, foreign, nil, false))
	_, err = tx.Commit(ctx)
	require.NoError(t, err)
	rsp, b = nc.do(t, http.MethodDelete, "/v1/{p}/namespaces/ns/tables/borrower?purgeRequested=true", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	for _, f := range foreign {
		_, err := os.Stat(strings.TrimPrefix(f, "file://"))
		assert.NoError(t, err, "the purge left %s alone", f)
	}
	rsp, _ = nc.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/borrower", nil)
	assert.Equal(t, http.StatusNotFound, rsp.StatusCode, "the table itself is dropped")
}
