package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

const deltaAPI = "/api/2.1/unity-catalog/delta/v1"

// deltaGateway serves the Delta and Iceberg front doors for one embedded
// catalog "lake" started on its own port; it returns the gateway URL and
// a directory for table locations (one of the catalog's allowed_locations).
func deltaGateway(t *testing.T) (string, string) {
	return deltaGatewayWith(t, map[string]any{})
}

// deltaGatewayWith is deltaGateway with more lakegate app settings.
func deltaGatewayWith(t *testing.T, app map[string]any) (string, string) {
	t.Helper()
	cfg, dir := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
	cfg.AllowedLocations = []string{dir}
	backend := embeddedtest.Serve(t, cfg)
	addr := freeAddr(t)
	app["catalogs"] = []any{remote("lake", backend.URL, nil)}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	return base, dir
}

// call sends a Delta API request and decodes a JSON answer.
func call(t *testing.T, method, url string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

const ordersColumns = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":false,"metadata":{"comment":"order id"}},
 {"name":"region","type":"string","nullable":true,"metadata":{}},
 {"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
 {"name":"qty","type":"short","nullable":true,"metadata":{"delta.generationExpression":"1"}},
 {"name":"tags","type":{"type":"array","element-type":"string","contains-null":true},"nullable":true,"metadata":{}},
 {"name":"attrs","type":{"type":"map","key-type":"string","value-type":"integer","value-contains-null":false},"nullable":true,"metadata":{}},
 {"name":"ship","type":{"type":"struct","fields":[{"name":"at","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
]}`

func createOrders(t *testing.T, base, dir, name string) map[string]any {
	t.Helper()
	return createOrdersAs(t, base, dir, name, "EXTERNAL")
}

func createOrdersAs(t *testing.T, base, dir, name, tableType string) map[string]any {
	t.Helper()
	code, out := call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables", map[string]any{
		"name": name, "location": "file://" + filepath.Join(dir, name), "table-type": tableType,
		"comment": "orders table", "columns": json.RawMessage(ordersColumns),
		"partition-columns":        []string{"region"},
		"protocol":                 map[string]any{"min-reader-version": 3, "min-writer-version": 7, "reader-features": []string{"deletionVectors"}, "writer-features": []string{"deletionVectors"}},
		"properties":               map[string]string{"delta.enableDeletionVectors": "true"},
		"last-commit-timestamp-ms": 1700000000000,
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	return out
}

func meta(out map[string]any) map[string]any { return out["metadata"].(map[string]any) }

// Every table operation through the gateway, checking the Iceberg side
// with iceberg-go after each Delta call and the Delta side after Iceberg
// changes.
func TestDeltaTableLifecycle(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tables := base + deltaAPI + "/catalogs/lake/schemas/sales/tables"

	// config
	code, cfg := call(t, http.MethodGet, base+deltaAPI+"/config?catalog=lake&protocol-versions=1.4,2.0", nil)
	require.Equal(t, http.StatusOK, code, "%v", cfg)
	assert.Equal(t, "1.0", cfg["protocol-version"])
	assert.Contains(t, cfg["endpoints"], "POST /v1/catalogs/{catalog}/schemas/{schema}/tables")
	assert.NotContains(t, cfg["endpoints"], "GET /v1/temporary-path-credentials")
	code, cfg = call(t, http.MethodGet, base+deltaAPI+"/config?catalog=nope&protocol-versions=1.0", nil)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "NoSuchCatalogException", cfg["error"].(map[string]any)["type"])

	// create → Iceberg side. MANAGED, since Iceberg writes to it follow
	// (an EXTERNAL table's Iceberg side is read-only: its log is its truth).
	created := createOrdersAs(t, base, dir, "orders", "MANAGED")
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	s := tbl.Schema()
	idField, _ := s.FindFieldByName("id")
	assert.Equal(t, iceberg.PrimitiveTypes.Int64, idField.Type)
	assert.True(t, idField.Required)
	assert.Equal(t, "order id", idField.Doc)
	qty, _ := s.FindFieldByName("qty")
	assert.Equal(t, iceberg.PrimitiveTypes.Int32, qty.Type)
	ship, _ := s.FindFieldByName("ship.at")
	assert.Equal(t, iceberg.PrimitiveTypes.TimestampTz, ship.Type)
	spec := tbl.Spec()
	require.Equal(t, 1, spec.NumFields())
	region, _ := s.FindFieldByName("region")
	assert.Equal(t, region.ID, spec.Field(0).SourceIDs[0])
	assert.Equal(t, iceberg.IdentityTransform{}, spec.Field(0).Transform)
	assert.Equal(t, "true", tbl.Properties()["delta.enableDeletionVectors"])
	assert.Equal(t, "orders table", tbl.Properties()["comment"])
	assert.Equal(t, "file://"+filepath.Join(dir, "orders"), tbl.Location())

	// load → the Delta side is what was created
	code, loaded := call(t, http.MethodGet, tables+"/orders", nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	m := meta(loaded)
	cols, _ := json.Marshal(m["columns"])
	assert.JSONEq(t, ordersColumns, string(cols))
	assert.Equal(t, []any{"region"}, m["partition-columns"])
	assert.Equal(t, tbl.Metadata().TableUUID().String(), m["table-uuid"])
	assert.Equal(t, "MANAGED", m["table-type"])
	props := m["properties"].(map[string]any)
	assert.Equal(t, "true", props["delta.enableDeletionVectors"])
	assert.Equal(t, "3", props["delta.minReaderVersion"])
	assert.Equal(t, "7", props["delta.minWriterVersion"])
	assert.Equal(t, "supported", props["delta.feature.deletionVectors"])
	assert.NotContains(t, props, "lakegate.delta.protocol")
	assert.Equal(t, float64(0), loaded["latest-table-version"])
	assert.Equal(t, meta(created)["etag"], m["etag"])
	etag0 := m["etag"].(string)

	// exists
	code, _ = call(t, http.MethodHead, tables+"/orders", nil)
	assert.Equal(t, http.StatusNoContent, code)
	code, _ = call(t, http.MethodHead, tables+"/missing", nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, out := call(t, http.MethodGet, tables+"/missing", nil)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "NoSuchTableException", out["error"].(map[string]any)["type"])

	// an Iceberg-side column shows up in Delta columns, with a new etag
	cur := tbl.Schema()
	next := iceberg.NewSchema(0, append(cur.Fields(), iceberg.NestedField{ID: tbl.Metadata().LastColumnID() + 1, Name: "added", Type: iceberg.PrimitiveTypes.String})...)
	_, _, err = ice.CommitTable(ctx, table.Identifier{"sales", "orders"},
		[]table.Requirement{table.AssertCurrentSchemaID(cur.ID)},
		[]table.Update{table.NewAddSchemaUpdate(next), table.NewSetCurrentSchemaUpdate(-1)})
	require.NoError(t, err)
	code, loaded = call(t, http.MethodGet, tables+"/orders", nil)
	require.Equal(t, http.StatusOK, code)
	m = meta(loaded)
	fields := m["columns"].(map[string]any)["fields"].([]any)
	assert.Equal(t, map[string]any{"name": "added", "type": "string", "nullable": true, "metadata": map[string]any{}}, fields[len(fields)-1])
	assert.NotEqual(t, etag0, m["etag"])

	// a stale etag is a conflict; the current one updates
	uuid := m["table-uuid"].(string)
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-etag", "etag": etag0}},
		"updates":      []any{map[string]any{"action": "set-table-comment", "comment": "x"}},
	})
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "UpdateRequirementConflictException", out["error"].(map[string]any)["type"])
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-etag", "etag": m["etag"]}},
		"updates": []any{
			map[string]any{"action": "remove-properties", "removals": []string{"delta.enableDeletionVectors"}},
			map[string]any{"action": "set-properties", "updates": map[string]string{"owner.team": "sales"}},
			map[string]any{"action": "set-table-comment", "comment": "renamed comment"},
			map[string]any{"action": "set-protocol", "protocol": map[string]any{"min-reader-version": 3, "min-writer-version": 7,
				"reader-features": []string{"deletionVectors"}, "writer-features": []string{"deletionVectors", "domainMetadata", "clustering"}}},
			map[string]any{"action": "set-domain-metadata", "updates": map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"region"}}}}},
		},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	assert.Equal(t, "sales", tbl.Properties()["owner.team"])
	assert.NotContains(t, tbl.Properties(), "delta.enableDeletionVectors")
	assert.Equal(t, "renamed comment", tbl.Properties()["comment"])
	props = meta(out)["properties"].(map[string]any)
	assert.Equal(t, "7", props["delta.minWriterVersion"])
	assert.Equal(t, "supported", props["delta.feature.clustering"])
	assert.Equal(t, `[["region"]]`, props["delta.clusteringColumns"])

	// set-columns keeps field ids by name, drops and adds
	idBefore, _ := tbl.Schema().FindFieldByName("amount")
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates": []any{map[string]any{"action": "set-columns", "columns": json.RawMessage(`{"type":"struct","fields":[
			{"name":"id","type":"long","nullable":false,"metadata":{}},
			{"name":"region","type":"string","nullable":true,"metadata":{}},
			{"name":"amount","type":"decimal(12,2)","nullable":true,"metadata":{}},
			{"name":"note","type":"string","nullable":true,"metadata":{}}]}`)}},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	idAfter, _ := tbl.Schema().FindFieldByName("amount")
	assert.Equal(t, idBefore.ID, idAfter.ID)
	assert.Equal(t, iceberg.DecimalTypeOf(12, 2), idAfter.Type)
	note, ok := tbl.Schema().FindFieldByName("note")
	require.True(t, ok)
	assert.Greater(t, note.ID, idBefore.ID)
	_, ok = tbl.Schema().FindFieldByName("tags")
	assert.False(t, ok)
	// dropping the partition column is refused
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates": []any{map[string]any{"action": "set-columns", "columns": json.RawMessage(`{"type":"struct","fields":[
			{"name":"id","type":"long","nullable":false,"metadata":{}}]}`)}},
	})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	// the table is empty: partition columns may change
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates":      []any{map[string]any{"action": "set-partition-columns", "partition-columns": []string{"id"}}},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []any{"id"}, meta(out)["partition-columns"])
	// an external table commits to its own Delta log, not through add-commit
	code, out = call(t, http.MethodPost, tables+"/orders", map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates": []any{map[string]any{"action": "add-commit", "commit": map[string]any{
			"version": 1, "timestamp": 1, "file-name": "x.json", "file-size": 1, "file-modification-timestamp": 1}}},
	})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "InvalidParameterValueException", out["error"].(map[string]any)["type"])

	// credentials and metrics
	code, out = call(t, http.MethodGet, tables+"/orders/credentials?operation=READ", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.NotNil(t, out["storage-credentials"])
	code, _ = call(t, http.MethodGet, tables+"/orders/credentials?operation=WRITE", nil)
	assert.Equal(t, http.StatusBadRequest, code)
	code, out = call(t, http.MethodPost, tables+"/orders/metrics", map[string]any{"table-id": uuid,
		"report": map[string]any{"commit-report": map[string]any{"num-files-added": 2, "num-rows-inserted": 10}}})
	assert.Equal(t, http.StatusNoContent, code, "%v", out)
	code, out = call(t, http.MethodPost, tables+"/orders/metrics", map[string]any{"table-id": "123e4567-e89b-12d3-a456-426614174000"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "InvalidParameterValueException", out["error"].(map[string]any)["type"])
	code, out = call(t, http.MethodGet, base+deltaAPI+"/temporary-path-credentials?location=file:///x&operation=READ", nil)
	assert.Equal(t, http.StatusNotImplemented, code, "%v", out)

	// rename within the schema; cross-schema is refused
	code, out = call(t, http.MethodPost, tables+"/orders/rename", map[string]any{"new-name": "orders2"})
	require.Equal(t, http.StatusNoContent, code, "%v", out)
	ok, err = ice.CheckTableExists(ctx, table.Identifier{"sales", "orders2"})
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = ice.CheckTableExists(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	assert.False(t, ok)
	code, _ = call(t, http.MethodPost, tables+"/orders2/rename", map[string]any{"new-name": "other.orders"})
	assert.Equal(t, http.StatusBadRequest, code)
	// renaming a table to its own name changes nothing, as in Unity Catalog
	code, out = call(t, http.MethodGet, tables+"/orders2", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, _ = call(t, http.MethodPost, tables+"/orders2/rename", map[string]any{"new-name": "orders2"})
	assert.Equal(t, http.StatusNoContent, code)
	code, same := call(t, http.MethodGet, tables+"/orders2", nil)
	require.Equal(t, http.StatusOK, code, "%v", same)
	assert.Equal(t, meta(out)["etag"], meta(same)["etag"])
	code, _ = call(t, http.MethodPost, tables+"/nothing/rename", map[string]any{"new-name": "nothing"})
	assert.Equal(t, http.StatusNotFound, code, "a missing table is still missing")

	// delete
	code, _ = call(t, http.MethodDelete, tables+"/orders2", nil)
	assert.Equal(t, http.StatusNoContent, code)
	ok, err = ice.CheckTableExists(ctx, table.Identifier{"sales", "orders2"})
	require.NoError(t, err)
	assert.False(t, ok)
}

// Two updates asserting the same etag: exactly one wins, the other 409s.
func TestDeltaConcurrentUpdatesSameEtag(t *testing.T) {
	concurrentUpdates(t, map[string]any{})
}

// The same with the update lock in Redis, as replicas share it.
func TestDeltaConcurrentUpdatesSameEtagRedis(t *testing.T) {
	concurrentUpdates(t, map[string]any{"redis": redistest.URL(t)})
}

func concurrentUpdates(t *testing.T, app map[string]any) {
	ctx := context.Background()
	base, dir := deltaGatewayWith(t, app)
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	created := createOrders(t, base, dir, "orders")
	m := meta(created)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/orders"
	const n = 4
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = call(t, http.MethodPost, url, map[string]any{
				"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": m["table-uuid"]}, map[string]any{"type": "assert-etag", "etag": m["etag"]}},
				"updates":      []any{map[string]any{"action": "set-properties", "updates": map[string]string{"writer": strings.Repeat("x", i+1)}}},
			})
		}()
	}
	wg.Wait()
	wins := 0
	for _, c := range codes {
		if c == http.StatusOK {
			wins++
		} else {
			assert.Equal(t, http.StatusConflict, c)
		}
	}
	assert.Equal(t, 1, wins, "codes %v", codes)
}

// A staging table allocates uuid and location; a create there commits it
// with that uuid.
func TestDeltaStagingTable(t *testing.T) {
	ctx := context.Background()
	base, _ := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	code, st := call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/staging-tables", map[string]any{"name": "staged"})
	require.Equal(t, http.StatusOK, code, "%v", st)
	id, loc := st["table-id"].(string), st["location"].(string)
	assert.Equal(t, "MANAGED", st["table-type"])
	// Two writers racing to create one name get two locations: a create
	// finds its staging table by location.
	code, st2 := call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/staging-tables", map[string]any{"name": "staged"})
	require.Equal(t, http.StatusOK, code, "%v", st2)
	assert.NotEqual(t, loc, st2["location"])
	assert.NotEqual(t, id, st2["table-id"])
	// A create that names another staging table's id is refused.
	code, out := call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables", map[string]any{
		"name": "staged", "location": loc, "table-type": "MANAGED", "columns": json.RawMessage(ordersColumns),
		"protocol":   map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties": map[string]string{"io.unitycatalog.tableId": st2["table-id"].(string)}, "last-commit-timestamp-ms": time.Now().UnixMilli(),
	})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	// what data commits need to become Iceberg snapshots (datacommit.go)
	assert.Equal(t, map[string]any{"delta.enableDeletionVectors": "false", "delta.enableRowTracking": "false"}, st["required-properties"])
	ok, err := ice.CheckTableExists(ctx, table.Identifier{"sales", "staged"})
	require.NoError(t, err)
	assert.False(t, ok, "staging creates nothing")

	code, out = call(t, http.MethodGet, base+deltaAPI+"/staging-tables/"+id+"/credentials", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, _ = call(t, http.MethodGet, base+deltaAPI+"/staging-tables/123e4567-e89b-12d3-a456-426614174000/credentials", nil)
	assert.Equal(t, http.StatusNotFound, code)

	code, out = call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables", map[string]any{
		"name": "staged", "location": loc, "table-type": "MANAGED", "columns": json.RawMessage(ordersColumns),
		"protocol": map[string]any{"min-reader-version": 1, "min-writer-version": 2}, "properties": map[string]string{},
		"last-commit-timestamp-ms": time.Now().UnixMilli(),
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, id, meta(out)["table-uuid"])
	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "staged"})
	require.NoError(t, err)
	assert.Equal(t, id, tbl.Metadata().TableUUID().String())
	assert.Equal(t, loc, tbl.Location())
	// the staging table is used up
	code, _ = call(t, http.MethodGet, base+deltaAPI+"/staging-tables/"+id+"/credentials", nil)
	assert.Equal(t, http.StatusNotFound, code)
}

// Bodies that fail validation never reach the catalog and answer 400 in
// the Delta error model.
func TestDeltaBadRequestsThroughGateway(t *testing.T) {
	base, _ := deltaGateway(t)
	tables := base + deltaAPI + "/catalogs/lake/schemas/sales/tables"
	for _, tc := range []struct {
		method, url string
		body        any
		code        int
		typ         string
	}{
		{http.MethodPost, tables, map[string]any{"name": "t"}, 400, "InvalidParameterValueException"},
		{http.MethodPost, tables + "/t", map[string]any{"requirements": []any{}, "updates": []any{}}, 400, "BadRequestException"},
		{http.MethodPost, tables + "/t/rename", map[string]any{}, 400, "InvalidParameterValueException"},
		{http.MethodGet, base + deltaAPI + "/config?catalog=lake", nil, 400, "InvalidParameterValueException"},
		{http.MethodGet, base + deltaAPI + "/config?catalog=lake&protocol-versions=2.0", nil, 400, "InvalidParameterValueException"},
		{http.MethodGet, base + deltaAPI + "/nowhere", nil, 404, "NotFoundException"},
		{http.MethodGet, base + deltaAPI + "/catalogs/nope/schemas/s/tables/t", nil, 404, "NoSuchCatalogException"},
		{http.MethodGet, base + deltaAPI + "/catalogs/lake/schemas/nope/tables/t", nil, 404, "NoSuchSchemaException"},
		{http.MethodPut, tables + "/t", nil, 405, "BadRequestException"},
		// names no catalog can hold name nothing (tableExists lists no 400)
		{http.MethodGet, tables + "/%2E%2E", nil, 404, "NoSuchTableException"},
		{http.MethodDelete, tables + "/%2E", nil, 404, "NoSuchTableException"},
		{http.MethodGet, base + deltaAPI + "/catalogs/lake/schemas/a..b/tables/t", nil, 404, "NoSuchSchemaException"},
		{http.MethodGet, base + deltaAPI + "/staging-tables/not-a-uuid/credentials", nil, 404, "NoSuchTableException"},
	} {
		code, out := call(t, tc.method, tc.url, tc.body)
		assert.Equal(t, tc.code, code, "%s %s: %v", tc.method, tc.url, out)
		if assert.NotNil(t, out["error"], "%s %s", tc.method, tc.url) {
			assert.Equal(t, tc.typ, out["error"].(map[string]any)["type"], "%s %s", tc.method, tc.url)
		}
	}
}

// The root Caddyfile serves the Delta API for its `local` catalog, under
// the demo policy: the Delta delete of a table named "protected" is denied
// in the Delta error model.
func TestDeltaRootCaddyfile(t *testing.T) {
	addr, data, caddyCfg := rootCaddyfile(t)
	base := serveOn(t, addr, caddyCfg)
	code, cfg := call(t, http.MethodGet, base+deltaAPI+"/config?catalog=local&protocol-versions=1.0", nil)
	require.Equal(t, http.StatusOK, code, "%v", cfg)
	require.NoError(t, gatewayClient(t, base, "local").CreateNamespace(context.Background(), table.Identifier{"sales"}, nil))
	code, out := call(t, http.MethodPost, base+deltaAPI+"/catalogs/local/schemas/sales/tables", map[string]any{
		"name": "protected", "location": "file://" + filepath.Join(data, "local", "warehouse", "protected"), "table-type": "EXTERNAL",
		"columns":  json.RawMessage(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`),
		"protocol": map[string]any{"min-reader-version": 1, "min-writer-version": 2}, "properties": map[string]string{},
		"last-commit-timestamp-ms": 1,
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = call(t, http.MethodDelete, base+deltaAPI+"/catalogs/local/schemas/sales/tables/protected", nil)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "PermissionDeniedException", out["error"].(map[string]any)["type"])
	assert.Contains(t, out["error"].(map[string]any)["message"], "deleteTable: dropTable is refused")
}

// A Delta request body over the catalog's max_request_body is a 413 in the
// UC error model, declared length or not, and never reaches the backend.
func TestDeltaBodyLimit(t *testing.T) {
	var hits atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/config" {
			hits.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"defaults":{},"overrides":{}}`)
	}))
	t.Cleanup(backend.Close)
	lake := remote("lake", backend.URL, nil)
	lake["max_request_body"] = 64
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{lake}},
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	body := `{"name":"t","location":"file:///tmp/t","table-type":"EXTERNAL","columns":` + strings.Repeat(" ", 100) + `{}}`
	for name, rd := range map[string]func() io.Reader{
		"declared length": func() io.Reader { return strings.NewReader(body) },
		"chunked":         func() io.Reader { return io.MultiReader(strings.NewReader(body)) },
	} {
		req, err := http.NewRequest(http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables", rd())
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, name)
		assert.Equal(t, "BadRequestException", out["error"].(map[string]any)["type"], name)
		assert.Contains(t, errMessage(out), "exceeds", name)
	}
	assert.Zero(t, hits.Load(), "an oversized body reached the backend")
}
