package gateway_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// ucExternal registers an EXTERNAL table through UC's createTable and
// returns its TableInfo.
func ucExternal(t *testing.T, base, token, dir, name string) map[string]any {
	t.Helper()
	body := map[string]any{"name": name, "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": "file:" + filepath.Join(dir, name),
		"columns": []map[string]any{{"name": "id", "type_json": `{"name":"id","type":"long","nullable":true,"metadata":{}}`}}}
	code, info := ucCall(t, http.MethodPost, base+unityAPI+"/tables", token, body)
	require.Equal(t, http.StatusOK, code, "%v", info)
	return info
}

func tableCreds(t *testing.T, base, token string, body any) (int, map[string]any) {
	t.Helper()
	return ucCall(t, http.MethodPost, base+unityAPI+"/temporary-table-credentials", token, body)
}

// UC's table credentials, by the table_id getTable shows: a local table
// has nothing to vend, and the answer is its url, as UC answers. A table
// the index never saw (created through the Delta API) or whose entry is
// stale (renamed since) is found by the scan.
func TestUnityTemporaryTableCredentials(t *testing.T) {
	base, dir := deltaGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	info := ucExternal(t, base, "", dir, "ext")
	id := info["table_id"].(string)

	for _, op := range []string{"READ", "READ_WRITE"} {
		code, out = tableCreds(t, base, "", map[string]any{"table_id": id, "operation": op})
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "file://"+filepath.Join(dir, "ext"), out["url"], op)
		assert.Greater(t, out["expiration_time"], float64(0), "delta-rs requires an expiration_time")
		assert.Equal(t, map[string]any{"access_key_id": "", "secret_access_key": ""}, out["aws_temp_credentials"],
			"an empty set for a local table: %v", out)
	}

	// created through the Delta API: not in the index, found by the scan
	created := createOrders(t, base, dir, "orders")
	code, out = tableCreds(t, base, "", map[string]any{"table_id": meta(created)["table-uuid"], "operation": "READ"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "file://"+filepath.Join(dir, "orders"), out["url"])

	// renamed: the index names the old name, which is checked and skipped
	code, out = call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/ext/rename", map[string]any{"new-name": "ext2"})
	require.Equal(t, http.StatusNoContent, code, "%v", out)
	code, out = tableCreds(t, base, "", map[string]any{"table_id": id, "operation": "READ"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "file://"+filepath.Join(dir, "ext"), out["url"], "the location stays with the renamed table")

	code, out = tableCreds(t, base, "", map[string]any{"table_id": uuid.NewString(), "operation": "READ"})
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")
}

// Bad bodies are refused in UC's model before any table is looked for.
func TestUnityTemporaryCredentialsBadBodies(t *testing.T) {
	base, dir := deltaGateway(t)
	id := uuid.NewString()
	for name, c := range map[string]struct {
		path, body string
	}{
		"no table_id":          {"temporary-table-credentials", `{"operation":"READ"}`},
		"empty table_id":       {"temporary-table-credentials", `{"table_id":"","operation":"READ"}`},
		"table_id no uuid":     {"temporary-table-credentials", `{"table_id":"lake.sales.t","operation":"READ"}`},
		"no operation":         {"temporary-table-credentials", `{"table_id":"` + id + `"}`},
		"unknown operation":    {"temporary-table-credentials", `{"table_id":"` + id + `","operation":"WRITE"}`},
		"placeholder op":       {"temporary-table-credentials", `{"table_id":"` + id + `","operation":"UNKNOWN_TABLE_OPERATION"}`},
		"path op on table":     {"temporary-table-credentials", `{"table_id":"` + id + `","operation":"PATH_READ"}`},
		"repeated key":         {"temporary-table-credentials", `{"table_id":"` + id + `","operation":"READ","operation":"READ_WRITE"}`},
		"case variant":         {"temporary-table-credentials", `{"Table_ID":"` + id + `","operation":"READ"}`},
		"not json":             {"temporary-table-credentials", `table`},
		"no url":               {"temporary-path-credentials", `{"operation":"PATH_READ"}`},
		"relative url":         {"temporary-path-credentials", `{"url":"data/t","operation":"PATH_READ"}`},
		"dot-dot url":          {"temporary-path-credentials", `{"url":"file://` + dir + `/../x","operation":"PATH_READ"}`},
		"table op on path":     {"temporary-path-credentials", `{"url":"file://` + dir + `/x","operation":"READ"}`},
		"unknown path op":      {"temporary-path-credentials", `{"url":"file://` + dir + `/x","operation":"PATH_DELETE"}`},
		"dry_run not bool":     {"temporary-path-credentials", `{"url":"file://` + dir + `/x","operation":"PATH_READ","dry_run":"yes"}`},
		"staging no schema":    {"staging-tables", `{"catalog_name":"lake","name":"t"}`},
		"staging dotted name":  {"staging-tables", `{"catalog_name":"lake","schema_name":"sales","name":"a.b"}`},
		"staging unknown kind": {"staging-tables", `{"catalog_name":"lake","schema_name":"sales","name":["t"]}`},
	} {
		code, out := rawUC(t, http.MethodPost, base+unityAPI+"/"+c.path, c.body)
		ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT", name)
	}
}

// rawUC sends body as it is written (ucCall would encode it).
func rawUC(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// confinedGateway is a gateway whose catalog lake is confined to the
// embedded backend's warehouse (allowed_locations: dir), with more app
// settings; backend is the URL of an embedded catalog to reuse ("" for a
// new one, whose warehouse dir is then made).
func confinedGateway(t *testing.T, app map[string]any, backend, dir string) (base, backendURL, warehouse string) {
	t.Helper()
	if backend == "" {
		cfg, d := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
		cfg.AllowedLocations = []string{d}
		backend, dir = embeddedtest.Serve(t, cfg).URL, d
	}
	addr := freeAddr(t)
	lake := remote("lake", backend, nil)
	lake["allowed_locations"] = []string{"file://" + dir}
	app["catalogs"] = []any{lake}
	base = serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	return base, backend, dir
}

// Path credentials: a local path inside a catalog's allowed locations is
// answered with its url; outside every catalog's, 403; an object store
// path without path_credentials configured, 501.
func TestUnityTemporaryPathCredentials(t *testing.T) {
	base, _, dir := confinedGateway(t, map[string]any{}, "", "")
	for _, op := range []string{"PATH_READ", "PATH_READ_WRITE", "PATH_CREATE_TABLE"} {
		code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", "",
			map[string]any{"url": "file:" + filepath.Join(dir, "new") + "/", "operation": op})
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "file://"+filepath.Join(dir, "new"), out["url"], op)
		assert.Equal(t, map[string]any{"access_key_id": "", "secret_access_key": ""}, out["aws_temp_credentials"], op)
	}
	code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", "",
		map[string]any{"url": "file:///etc", "operation": "PATH_READ"})
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", "",
		map[string]any{"url": "s3://bucket/t", "operation": "PATH_READ", "dry_run": true})
	ucError(t, code, out, http.StatusNotImplemented, "UNIMPLEMENTED")
}

// credsPolicy: bob may not vend credentials; carol may read but not
// write, nor create tables; nobody is shown any table in a listing, so
// only the table-id index finds a table.
const credsPolicy = `package lakegate.unitycreds

decision := {"allow": false, "reason": "bob gets no credentials"} if {
	input.principal.id == "bob"
	input.operation == "loadCredentials"
} else := {"allow": false, "reason": "carol may not write"} if {
	input.principal.id == "carol"
	input.operation in {"updateTable", "createTable"}
	input.api_operation != "createTable"
} else := {"allow": true, "reason": "allowed"}
`

// The policy decides table and path credentials as the Delta API's
// credentials are decided. The index lives in Redis, so a table shown
// before a restart (a new gateway on the same Redis and catalog) is found
// by id after it, though listings show the caller nothing.
func TestUnityTemporaryCredentialsPolicyAndRestart(t *testing.T) {
	m := miniredis.RunT(t)
	app := func() map[string]any {
		return map[string]any{"redis": "redis://" + m.Addr(), "policy": testPolicy(t, credsPolicy),
			"identity": map[string]any{"tokens": []any{tokenFor("alice", "alice-token"), tokenFor("bob", "bob-token"), tokenFor("carol", "carol-token")}}}
	}
	one, backend, dir := confinedGateway(t, app(), "", "")
	code, out := createSchema(t, one, "alice-token", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	id := ucExternal(t, one, "alice-token", dir, "ext")["table_id"].(string)
	require.True(t, m.Exists("lakegate:unity:table-id:"+id), "the id is in Redis: %v", m.Keys())

	two, _, _ := confinedGateway(t, app(), backend, dir)
	code, out = ucCall(t, http.MethodGet, two+unityAPI+"/tables?catalog_name=lake&schema_name=sales", "alice-token", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, []any{}, out["tables"], "the policy's visible rule shows no table")

	code, out = tableCreds(t, two, "alice-token", map[string]any{"table_id": id, "operation": "READ_WRITE"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "file://"+filepath.Join(dir, "ext"), out["url"])

	code, out = tableCreds(t, two, "bob-token", map[string]any{"table_id": id, "operation": "READ"})
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "generateTemporaryTableCredentials: bob gets no credentials", out["message"])
	code, out = tableCreds(t, two, "carol-token", map[string]any{"table_id": id, "operation": "READ"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = tableCreds(t, two, "carol-token", map[string]any{"table_id": id, "operation": "READ_WRITE"})
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	assert.Equal(t, "generateTemporaryTableCredentials: carol may not write", out["message"])

	path := func(token, op string) (int, map[string]any) {
		return ucCall(t, http.MethodPost, two+unityAPI+"/temporary-path-credentials", token,
			map[string]any{"url": "file://" + filepath.Join(dir, "new"), "operation": op})
	}
	code, out = path("carol-token", "PATH_READ")
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = path("carol-token", "PATH_CREATE_TABLE")
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, out = path("bob-token", "PATH_READ")
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")

	// without the index entry, the scan sees only what alice may list: none
	m.Del("lakegate:unity:table-id:" + id)
	code, out = tableCreds(t, two, "alice-token", map[string]any{"table_id": id, "operation": "READ"})
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")
}

// updateSchema sets the comment and replaces the properties (as UC does),
// keeps the storage root, and refuses a rename no Iceberg catalog can do.
func TestUnityUpdateSchema(t *testing.T) {
	base, dir := deltaGateway(t)
	root := "file://" + filepath.Join(dir, "sales")
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake",
		"comment": "old", "properties": map[string]string{"owner": "team", "tier": "gold"}, "storage_root": root})
	require.Equal(t, http.StatusOK, code, "%v", out)
	schemaURL := base + unityAPI + "/schemas/lake.sales"

	code, out = ucCall(t, http.MethodPatch, schemaURL, "", map[string]any{"comment": "new", "properties": map[string]string{"owner": "ops"}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "new", out["comment"])
	assert.Equal(t, root, out["storage_root"])
	assert.Equal(t, map[string]any{"owner": "ops", "comment": "new", "location": root}, out["properties"])
	code, got := ucCall(t, http.MethodGet, schemaURL, "", nil)
	require.Equal(t, http.StatusOK, code, "%v", got)
	assert.Equal(t, out, got)

	code, out = ucCall(t, http.MethodPatch, schemaURL, "", map[string]any{"new_name": "sales"})
	require.Equal(t, http.StatusOK, code, "a rename to its own name changes nothing: %v", out)
	assert.Equal(t, got, out)
	code, out = ucCall(t, http.MethodPatch, schemaURL, "", map[string]any{"new_name": "sales2"})
	ucError(t, code, out, http.StatusNotImplemented, "UNIMPLEMENTED")
	code, out = ucCall(t, http.MethodPatch, schemaURL, "", map[string]any{"properties": map[string]string{"location": "file:///elsewhere"}})
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")
	code, out = rawUC(t, http.MethodPatch, schemaURL, `{"comment":"a","comment":"b"}`)
	ucError(t, code, out, http.StatusBadRequest, "INVALID_ARGUMENT")
	code, out = ucCall(t, http.MethodPatch, base+unityAPI+"/schemas/lake.nope", "", map[string]any{"comment": "x"})
	ucError(t, code, out, http.StatusNotFound, "SCHEMA_NOT_FOUND")
}

// A staging table (UC's createStagingTable, the Delta API's staging store)
// becomes a MANAGED table when createTable names its location, keeping
// its id; a MANAGED create anywhere else is refused.
func TestUnityStagingTable(t *testing.T) {
	base, _ := deltaGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, staged := ucCall(t, http.MethodPost, base+unityAPI+"/staging-tables", "",
		map[string]any{"catalog_name": "lake", "schema_name": "sales", "name": "m"})
	require.Equal(t, http.StatusOK, code, "%v", staged)
	assert.Equal(t, "m", staged["name"])
	assert.Equal(t, "sales", staged["schema_name"])
	_, err := uuid.Parse(staged["id"].(string))
	require.NoError(t, err)
	require.NotEmpty(t, staged["staging_location"])

	body := map[string]any{"name": "m", "catalog_name": "lake", "schema_name": "sales", "table_type": "MANAGED",
		"data_source_format": "DELTA", "storage_location": staged["staging_location"],
		"columns": []map[string]any{{"name": "id", "type_json": `{"name":"id","type":"long","nullable":true,"metadata":{}}`}}}
	other := map[string]any{}
	for k, v := range body {
		other[k] = v
	}
	other["storage_location"] = staged["staging_location"].(string) + "-other"
	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", other)
	ucError(t, code, out, http.StatusNotFound, "TABLE_NOT_FOUND")

	code, info := ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", body)
	require.Equal(t, http.StatusOK, code, "%v", info)
	assert.Equal(t, "MANAGED", info["table_type"])
	assert.Equal(t, staged["id"], info["table_id"], "the staging table's id is the table's")
	assert.Equal(t, staged["staging_location"], info["storage_location"])

	code, out = tableCreds(t, base, "", map[string]any{"table_id": info["table_id"], "operation": "READ_WRITE"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, staged["staging_location"], out["url"])

	code, out = ucCall(t, http.MethodPost, base+unityAPI+"/staging-tables", "",
		map[string]any{"catalog_name": "nope", "schema_name": "sales", "name": "m"})
	ucError(t, code, out, http.StatusNotFound, "CATALOG_NOT_FOUND")
}
