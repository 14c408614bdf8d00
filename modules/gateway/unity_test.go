package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

const unityAPI = "/api/2.1/unity-catalog"

// ucCall sends a UC API request, as the holder of token when there is
// one, and decodes the JSON answer.
func ucCall(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s %s: %q", method, url, raw)
	return resp.StatusCode, out
}

// ucError checks a UC error answer: status, error_code, and the
// google.rpc.ErrorInfo detail naming the same code.
func ucError(t *testing.T, code int, out map[string]any, wantStatus int, wantCode string, msgAndArgs ...any) {
	t.Helper()
	assert.Equal(t, wantStatus, code, append(msgAndArgs, out)...)
	assert.Equal(t, wantCode, out["error_code"], msgAndArgs...)
	assert.NotEmpty(t, out["message"], msgAndArgs...)
	if details, ok := out["details"].([]any); assert.True(t, ok, "details: %v", out) && assert.Len(t, details, 1) {
		assert.Equal(t, "type.googleapis.com/google.rpc.ErrorInfo", details[0].(map[string]any)["@type"])
		assert.Equal(t, wantCode, details[0].(map[string]any)["reason"])
	}
}

func names(items any, key string) []string {
	var out []string
	for _, it := range items.([]any) {
		out = append(out, it.(map[string]any)[key].(string))
	}
	return out
}

func createSchema(t *testing.T, base, token string, body map[string]any) (int, map[string]any) {
	t.Helper()
	return ucCall(t, http.MethodPost, base+unityAPI+"/schemas", token, body)
}

// Catalogs are the gateway's configuration: listed and loaded, never
// created here.
func TestUnityCatalogs(t *testing.T) {
	base, _ := deltaGateway(t)
	code, out := ucCall(t, http.MethodGet, base+unityAPI+"/catalogs", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"catalogs": []any{map[string]any{"name": "lake", "properties": map[string]any{}}}}, out)

	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs?max_results=1", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"catalogs": []any{map[string]any{"name": "lake", "properties": map[string]any{}}}}, out, "one catalog: no next page")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs?max_results=-1", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")

	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs/lake", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"name": "lake", "properties": map[string]any{}}, out)

	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs/nope", "", nil)
	ucError(t, code, out, http.StatusNotFound, "CATALOG_NOT_FOUND")
	assert.Equal(t, "Catalog not found: nope", out["message"])

	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/catalogs", "", map[string]any{"name": "lake", "comment": "again"})
	ucError(t, code, out, http.StatusBadRequest, "CATALOG_ALREADY_EXISTS")
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/catalogs", "", map[string]any{"name": "fresh"})
	ucError(t, code, out, http.StatusNotImplemented, "UNIMPLEMENTED")
	assert.Contains(t, out["message"], `createCatalog cannot add "fresh"`)
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/catalogs", "", map[string]any{})
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")

	// what the UC API does not serve
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/volumes", "", nil)
	ucError(t, code, out, http.StatusNotFound, "NOT_FOUND")
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/catalogs/lake", "", nil)
	ucError(t, code, out, http.StatusMethodNotAllowed, "UNIMPLEMENTED")
	req, err := http.NewRequest(http.MethodPatch, base+unityAPI+"/tables/lake.sales.t", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "DELETE, GET", resp.Header.Get("Allow"), "a 405 names what is allowed")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/schemas", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")
	assert.Equal(t, "catalog_name is required", out["message"])
}

// Schemas are one-level namespaces: created with their comment,
// properties and storage root, listed a page at a time, loaded, deleted.
func TestUnitySchemas(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	root := "file://" + filepath.Join(dir, "sales")

	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake",
		"comment": "sales data", "properties": map[string]string{"owner": "team"}, "storage_root": root})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "sales", out["name"])
	assert.Equal(t, "lake", out["catalog_name"])
	assert.Equal(t, "lake.sales", out["full_name"])
	assert.Equal(t, "sales data", out["comment"])
	assert.Equal(t, root, out["storage_root"])
	assert.Equal(t, "team", out["properties"].(map[string]any)["owner"])
	props, err := ice.LoadNamespaceProperties(ctx, table.Identifier{"sales"})
	require.NoError(t, err)
	assert.Equal(t, "team", props["owner"])
	assert.Equal(t, "sales data", props["comment"], "the comment under Iceberg's key")
	assert.Equal(t, root, props["location"], "the storage root under Iceberg's key")

	code, again := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	ucError(t, code, again, http.StatusBadRequest, "SCHEMA_ALREADY_EXISTS")
	assert.Equal(t, "Schema already exists: sales", again["message"])
	code, bad := createSchema(t, base, "", map[string]any{"name": "s", "catalog_name": "nope"})
	ucError(t, code, bad, http.StatusNotFound, "CATALOG_NOT_FOUND")
	code, bad = createSchema(t, base, "", map[string]any{"catalog_name": "lake"})
	ucError(t, code, bad, http.StatusBadRequest, "INVALID_ARGUMENT")
	// a storage root outside the catalog's allowed locations is refused
	// as the Iceberg door refuses it, and nothing is created
	code, bad = createSchema(t, base, "", map[string]any{"name": "outside", "catalog_name": "lake", "storage_root": "file:///elsewhere/outside"})
	ucError(t, code, bad, http.StatusForbidden, "PERMISSION_DENIED")
	exists, err := ice.CheckNamespaceExists(ctx, table.Identifier{"outside"})
	require.NoError(t, err)
	assert.False(t, exists)

	code, got := ucCall(t, http.MethodGet, base+unityAPI+"/schemas/lake.sales", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", got)
	assert.Equal(t, out, got, "getSchema answers what createSchema did")
	code, got = ucCall(t, http.MethodGet, base+unityAPI+"/schemas/lake.nope", "", nil)
	ucError(t, code, got, http.StatusNotFound, "SCHEMA_NOT_FOUND")
	assert.Equal(t, "Schema not found: lake.nope", got["message"])
	code, got = ucCall(t, http.MethodGet, base+unityAPI+"/schemas/nope.sales", "", nil)
	ucError(t, code, got, http.StatusNotFound, "CATALOG_NOT_FOUND")

	// pages of max_results, followed to the end
	for _, n := range []string{"s1", "s2", "s3", "s4"} {
		code, out := createSchema(t, base, "", map[string]any{"name": n, "catalog_name": "lake"})
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	var seen []string
	token, pages := "", 0
	for {
		url := base + unityAPI + "/schemas?catalog_name=lake&max_results=2"
		if token != "" {
			url += "&page_token=" + token
		}
		code, page := ucCall(t, http.MethodGet, url, "", nil)
		require.Equal(t, http.StatusOK, code, "%v", page)
		pages++
		schemas := page["schemas"].([]any)
		assert.LessOrEqual(t, len(schemas), 2)
		for _, s := range schemas {
			assert.Equal(t, "lake", s.(map[string]any)["catalog_name"])
		}
		seen = append(seen, names(schemas, "name")...)
		next, _ := page["next_page_token"].(string)
		if next == "" {
			break
		}
		require.Less(t, pages, 10, "paging does not end")
		token = next
	}
	slices.Sort(seen)
	assert.Equal(t, []string{"s1", "s2", "s3", "s4", "sales"}, seen)
	assert.GreaterOrEqual(t, pages, 3)
	code, all := ucCall(t, http.MethodGet, base+unityAPI+"/schemas?catalog_name=lake", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", all)
	assert.ElementsMatch(t, []string{"s1", "s2", "s3", "s4", "sales"}, names(all["schemas"], "name"))
	for _, bad := range []string{"-1", "x", "1.5"} {
		code, out := ucCall(t, http.MethodGet, base+unityAPI+"/schemas?catalog_name=lake&max_results="+bad, "", nil)
		ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT", "max_results=%s", bad)
	}

	// delete: an empty schema goes; a missing one is 404
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.s1", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, out)
	exists, err = ice.CheckNamespaceExists(ctx, table.Identifier{"s1"})
	require.NoError(t, err)
	assert.False(t, exists)
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.s1", "", nil)
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
}

// A schema holding a table is deleted only with force, which drops its
// tables (Delta or not) first.
func TestUnityDeleteSchemaForce(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	createOrders(t, base, dir, "orders")
	_, err := ice.CreateTable(ctx, table.Identifier{"sales", "plain"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "FAILED_PRECONDITION")
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=false", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "FAILED_PRECONDITION")
	for _, name := range []string{"orders", "plain"} {
		exists, err := ice.CheckTableExists(ctx, table.Identifier{"sales", name})
		require.NoError(t, err)
		assert.True(t, exists, "a refused delete drops nothing: %s", name)
	}

	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=true", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, out)
	exists, err := ice.CheckNamespaceExists(ctx, table.Identifier{"sales"})
	require.NoError(t, err)
	assert.False(t, exists)
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.orders", "", nil)
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/schemas/lake.sales", "", nil)
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=true", "", nil)
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
}

// column is one ColumnInfo of a TableInfo, by name.
func column(t *testing.T, info map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range info["columns"].([]any) {
		if c.(map[string]any)["name"] == name {
			return c.(map[string]any)
		}
	}
	t.Fatalf("no column %q in %v", name, info["columns"])
	return nil
}

// A table created through the Delta API is a UC table, described as the
// Delta API loads it; an Iceberg-only table is not one.
func TestUnityTables(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	created := createOrders(t, base, dir, "orders")
	_, err := ice.CreateTable(ctx, table.Identifier{"sales", "plain"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	code, list := ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=sales", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", list)
	assert.Equal(t, []string{"orders"}, names(list["tables"], "name"), "the Iceberg-only table is left out")

	code, info := ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.orders", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", info)
	assert.Equal(t, list["tables"].([]any)[0], any(info), "listTables describes a table as getTable does")
	assert.Equal(t, "orders", info["name"])
	assert.Equal(t, "lake", info["catalog_name"])
	assert.Equal(t, "sales", info["schema_name"])
	assert.Equal(t, "EXTERNAL", info["table_type"])
	assert.Equal(t, "DELTA", info["data_source_format"])
	assert.Equal(t, "file://"+filepath.Join(dir, "orders"), info["storage_location"])
	assert.Equal(t, meta(created)["table-uuid"], info["table_id"])
	assert.Equal(t, "true", info["properties"].(map[string]any)["delta.enableDeletionVectors"])
	assert.Equal(t, "orders table", info["comment"], "the table comment createOrders set")
	assert.Greater(t, info["created_at"], float64(0))
	assert.Greater(t, info["updated_at"], float64(0))

	cols := info["columns"].([]any)
	require.Len(t, cols, 7)
	for i, want := range []struct {
		name, text, typeName string
		nullable             bool
	}{
		{"id", "bigint", "LONG", false},
		{"region", "string", "STRING", true},
		{"amount", "decimal(10,2)", "DECIMAL", true},
		{"qty", "smallint", "SHORT", true},
		{"tags", "array<string>", "ARRAY", true},
		{"attrs", "map<string,int>", "MAP", true},
		{"ship", "struct<at:timestamp>", "STRUCT", true},
	} {
		c := cols[i].(map[string]any)
		assert.Equal(t, want.name, c["name"], "column %d", i)
		assert.Equal(t, want.text, c["type_text"], want.name)
		assert.Equal(t, want.typeName, c["type_name"], want.name)
		assert.Equal(t, float64(i), c["position"], want.name)
		assert.Equal(t, want.nullable, c["nullable"], want.name)
		// type_json is the column as Spark writes it, the Delta API's field
		var field map[string]any
		require.NoError(t, json.Unmarshal([]byte(c["type_json"].(string)), &field), want.name)
		assert.Equal(t, want.name, field["name"])
		assert.Equal(t, want.nullable, field["nullable"])
		if want.name == "region" {
			assert.Equal(t, float64(0), c["partition_index"])
		} else {
			assert.NotContains(t, c, "partition_index", want.name)
		}
	}
	id := column(t, info, "id")
	assert.Equal(t, "order id", id["comment"])
	assert.JSONEq(t, `{"name":"id","type":"long","nullable":false,"metadata":{"comment":"order id"}}`, id["type_json"].(string))
	amount := column(t, info, "amount")
	assert.Equal(t, float64(10), amount["type_precision"])
	assert.Equal(t, float64(2), amount["type_scale"])
	assert.JSONEq(t, `{"name":"attrs","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":false},"nullable":true,"metadata":{}}`,
		column(t, info, "attrs")["type_json"].(string))
	assert.NotContains(t, column(t, info, "region"), "type_precision")

	// an Iceberg-only table, a missing one, a missing schema
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.plain", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "UNSUPPORTED_TABLE_FORMAT")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.missing", "", nil)
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=nope", "", nil)
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=sales&max_results=-3", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")

	// deleteTable drops the Delta table, and only a Delta table
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/tables/lake.sales.plain", "", nil)
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")
	exists, err := ice.CheckTableExists(ctx, table.Identifier{"sales", "plain"})
	require.NoError(t, err)
	assert.True(t, exists, "the Iceberg-only table stays")
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/tables/lake.sales.orders", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, out)
	exists, err = ice.CheckTableExists(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	assert.False(t, exists)
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.orders", "", nil)
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")
	code, list = ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=sales", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", list)
	assert.Equal(t, []any{}, list["tables"])
}

// listTables pages follow the catalog's pagination; Iceberg-only tables
// leave their page short, never end the listing.
func TestUnityListTablesPages(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	for _, n := range []string{"t1", "t2", "t3"} {
		code, out := createEvents(t, base, dir, n, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	for _, n := range []string{"p1", "p2"} {
		_, err := ice.CreateTable(ctx, table.Identifier{"sales", n}, embeddedtest.EventSchema)
		require.NoError(t, err)
	}
	var seen []string
	token, pages := "", 0
	for {
		url := base + unityAPI + "/tables?catalog_name=lake&schema_name=sales&max_results=2"
		if token != "" {
			url += "&page_token=" + token
		}
		code, page := ucCall(t, http.MethodGet, url, "", nil)
		require.Equal(t, http.StatusOK, code, "%v", page)
		pages++
		tables := page["tables"].([]any)
		assert.LessOrEqual(t, len(tables), 2)
		seen = append(seen, names(tables, "name")...)
		next, _ := page["next_page_token"].(string)
		if next == "" {
			break
		}
		require.Less(t, pages, 10, "paging does not end")
		token = next
	}
	slices.Sort(seen)
	assert.Equal(t, []string{"t1", "t2", "t3"}, seen)
	assert.GreaterOrEqual(t, pages, 3, "five tables, two a page")
}

// With required identity, the UC API answers 401 UNAUTHENTICATED in its
// own error model, with a Bearer challenge.
func TestUnityRequiresCredentials(t *testing.T) {
	sum := sha256.Sum256([]byte("good-token"))
	base, _ := deltaGatewayWith(t, map[string]any{
		"identity": map[string]any{"required": true, "tokens": []any{map[string]any{"id": "alice", "sha256": hex.EncodeToString(sum[:])}}},
	})
	for token, reason := range map[string]string{
		"":          "authentication required",
		"bad-token": "invalid credentials: unknown token",
	} {
		req, err := http.NewRequest(http.MethodGet, base+unityAPI+"/catalogs", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		ucError(t, resp.StatusCode, out, http.StatusUnauthorized, "UNAUTHENTICATED", "token %q", token)
		assert.Equal(t, reason, out["message"], "token %q", token)
		assert.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
	}
	code, out := ucCall(t, http.MethodGet, base+unityAPI+"/catalogs", "good-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"lake"}, names(out["catalogs"], "name"))
}

// unityPolicy: bob may drop no table; the catalog "hidden" is off limits
// to everyone.
const unityPolicy = `package lakegate.unitytest

decision := {"allow": false, "reason": "bob may not drop tables"} if {
	input.principal.id == "bob"
	input.operation == "dropTable"
} else := {"allow": false, "reason": "the hidden catalog is off limits"} if {
	input.resource.catalog == "hidden"
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// tokenFor is a static token entry naming its principal.
func tokenFor(id, token string) map[string]any {
	sum := sha256.Sum256([]byte(token))
	return map[string]any{"id": id, "sha256": hex.EncodeToString(sum[:])}
}

// policyUnityGateway serves two embedded catalogs, lake and hidden, under
// rego, with the static tokens alice-token and bob-token (callers without
// one are anonymous).
func policyUnityGateway(t *testing.T, rego string) (string, string) {
	t.Helper()
	cfg, dir := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
	cfg.AllowedLocations = []string{dir}
	lake := embeddedtest.Serve(t, cfg)
	hidden := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	addr := freeAddr(t)
	app := map[string]any{
		"catalogs": []any{remote("lake", lake.URL, nil), remote("hidden", hidden.URL, nil)},
		"identity": map[string]any{"tokens": []any{tokenFor("alice", "alice-token"), tokenFor("bob", "bob-token")}},
		"policy":   testPolicy(t, rego),
	}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	return base, dir
}

// The policy decides UC operations as the Iceberg operations they are:
// a catalog it denies is not listed, and a force delete of a schema is
// refused, dropping nothing, when one of its tables may not be dropped.
func TestUnityPolicy(t *testing.T) {
	base, dir := policyUnityGateway(t, unityPolicy)

	code, out := ucCall(t, http.MethodGet, base+unityAPI+"/catalogs", "alice-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"lake"}, names(out["catalogs"], "name"), "hidden is not listed")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs?max_results=1", "alice-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"lake"}, names(out["catalogs"], "name"))
	assert.NotContains(t, out, "next_page_token", "no page holds hidden")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs?page_token=lake", "alice-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []any{}, out["catalogs"], "hidden is not on a later page either")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/catalogs/hidden", "alice-token", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "getCatalog: the hidden catalog is off limits", out["message"])
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/catalogs", "alice-token", map[string]any{"name": "hidden"})
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, out = createSchema(t, base, "alice-token", map[string]any{"name": "s", "catalog_name": "hidden"})
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "createSchema: the hidden catalog is off limits", out["message"])

	code, out = createSchema(t, base, "bob-token", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	createOrders(t, base, dir, "orders")

	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=true", "bob-token", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "deleteSchema: bob may not drop tables", out["message"])
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.orders", "bob-token", nil)
	require.Equal(t, http.StatusOK, code, "the table is still there: %v", out)
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/tables/lake.sales.orders", "bob-token", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "deleteTable: bob may not drop tables", out["message"])

	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=true", "alice-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/schemas/lake.sales", "alice-token", nil)
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
}

// keepPolicy refuses to drop the table z_keep and the view keep.
const keepPolicy = `package lakegate.unitykeep

decision := {"allow": false, "reason": "the table z_keep stays"} if {
	input.operation == "dropTable"
	input.resource.table == "z_keep"
} else := {"allow": false, "reason": "the view keep stays"} if {
	input.operation == "dropView"
	input.resource.view == "keep"
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// A force delete decides the drop of every table and view (each as what
// it is) before it drops any: one refusal leaves the schema as it was.
func TestUnityDeleteSchemaForceDecidesEveryDrop(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGatewayWith(t, map[string]any{"policy": testPolicy(t, keepPolicy)})
	ice := gatewayClient(t, base, "lake")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	for _, n := range []string{"a_orders", "z_keep"} {
		code, out := createEvents(t, base, dir, n, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.sales?force=true", "", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "deleteSchema: the table z_keep stays", out["message"])
	for _, n := range []string{"a_orders", "z_keep"} {
		exists, err := ice.CheckTableExists(ctx, table.Identifier{"sales", n})
		require.NoError(t, err)
		assert.True(t, exists, "%s was dropped by a refused delete", n)
	}

	// a view is decided as a view (dropView on resource.view)
	code, out = createSchema(t, base, "", map[string]any{"name": "views", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	_, err := ice.CreateTable(ctx, table.Identifier{"views", "plain"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	version := &view.Version{VersionID: 1, SchemaID: 0, TimestampMS: time.Now().UnixMilli(),
		Summary: map[string]string{}, DefaultNamespace: []string{"views"},
		Representations: []view.Representation{{Type: "sql", Sql: "select 1", Dialect: "spark"}}}
	_, err = ice.CreateView(ctx, table.Identifier{"views", "keep"}, version, embeddedtest.EventSchema)
	require.NoError(t, err)
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.views?force=true", "", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "deleteSchema: the view keep stays", out["message"])
	exists, err := ice.CheckViewExists(ctx, table.Identifier{"views", "keep"})
	require.NoError(t, err)
	assert.True(t, exists, "the view was dropped")
	exists, err = ice.CheckTableExists(ctx, table.Identifier{"views", "plain"})
	require.NoError(t, err)
	assert.True(t, exists, "the table was dropped by a refused delete")

	// a view the policy lets go is dropped with the schema
	code, out = createSchema(t, base, "", map[string]any{"name": "more", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	version.DefaultNamespace = []string{"more"}
	_, err = ice.CreateView(ctx, table.Identifier{"more", "v"}, version, embeddedtest.EventSchema)
	require.NoError(t, err)
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.more", "", nil)
	ucError(t, code, out, http.StatusBadRequest, "FAILED_PRECONDITION")
	code, out = ucCall(t, http.MethodDelete, base+unityAPI+"/schemas/lake.more?force=true", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	exists, err = ice.CheckNamespaceExists(ctx, table.Identifier{"more"})
	require.NoError(t, err)
	assert.False(t, exists)
}

// listPolicy hides the table "secret" and the schema "attic" from
// listings, and lets nobody load the table "classified" or the schema
// "private".
const listPolicy = `package lakegate.unitylist

decision := {"allow": false, "reason": "classified tables are not loaded"} if {
	input.operation == "loadTable"
	input.resource.table == "classified"
} else := {"allow": false, "reason": "the private schema is not loaded"} if {
	input.operation == "loadNamespaceMetadata"
	input.resource.namespace[0] == "private"
} else := {"allow": true, "reason": "allowed"}

visible contains i if {
	some i, item in input.items
	not hidden(item)
}

hidden(item) if item.table == "secret"

hidden(item) if item.namespace[0] == "attic"
`

// UC's listings answer what a load of each item would: they show only
// what the policy's visible rule keeps (as the Iceberg door's listings
// do) and what the caller may load.
func TestUnityListingsFollowThePolicy(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGatewayWith(t, map[string]any{"policy": testPolicy(t, listPolicy)})
	for _, n := range []string{"sales", "private", "attic"} {
		code, out := createSchema(t, base, "", map[string]any{"name": n, "catalog_name": "lake"})
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	for _, n := range []string{"orders", "secret", "classified"} {
		code, out := createEvents(t, base, dir, n, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
	}
	// the Iceberg door's listings, for comparison
	namespaces, err := gatewayClient(t, base, "lake").ListNamespaces(ctx, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []table.Identifier{{"sales"}, {"private"}}, namespaces)

	code, out := ucCall(t, http.MethodGet, base+unityAPI+"/schemas?catalog_name=lake", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"sales"}, names(out["schemas"], "name"))
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=sales", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"orders"}, names(out["tables"], "name"))

	// loads are decided as they are at the Iceberg door
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.classified", "", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/schemas/lake.private", "", nil)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.secret", "", nil)
	assert.Equal(t, http.StatusOK, code, "hidden from listings, not from loads: %v", out)
}

// CREATE TABLE ... USING delta LOCATION through the UC Spark connector:
// UC's createTable of an external table (the body as the connector sends
// it), then the table is the Delta API's, and a second create is 400.
func TestUnityCreateExternalTable(t *testing.T) {
	base, dir := deltaGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	body := map[string]any{"name": "ext", "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": "file:" + filepath.Join(dir, "ext"), "properties": map[string]string{},
		"columns": []map[string]any{{"name": "id", "type_json": `{"name":"id","type":"long","nullable":true,"metadata":{}}`, "partition_index": 0}}}
	code, info := ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", body)
	require.Equal(t, http.StatusOK, code, "%v", info)
	assert.Equal(t, "EXTERNAL", info["table_type"])
	assert.Equal(t, "file://"+filepath.Join(dir, "ext"), info["storage_location"])
	assert.Equal(t, "bigint", column(t, info, "id")["type_text"])
	assert.EqualValues(t, 0, column(t, info, "id")["partition_index"])

	code, loaded := call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/ext", nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	assert.Equal(t, info["table_id"], meta(loaded)["table-uuid"])
	// The engine's log holds the versions; the catalog was told none.
	assert.NotContains(t, loaded, "latest-table-version")
	assert.NotContains(t, meta(loaded), "last-commit-version")

	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", body)
	ucError(t, code, out, http.StatusBadRequest, "TABLE_ALREADY_EXISTS")

	// The UC Spark connector registers a LOCATION table with no columns
	// (they are in its log); the Delta API's own create needs one.
	noCols := maps.Clone(body)
	noCols["name"], noCols["columns"], noCols["storage_location"] = "bare", []any{}, "file:"+filepath.Join(dir, "bare")
	code, info = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", noCols)
	require.Equal(t, http.StatusOK, code, "%v", info)
	code, out = createEvents(t, base, dir, "nocols", map[string]any{"columns": map[string]any{"type": "struct", "fields": []any{}}})
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	body["storage_location"] = "file:///elsewhere/ext2"
	body["name"] = "ext2"
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", body)
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED", "outside the catalog's allowed locations")
}
