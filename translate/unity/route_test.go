package unity

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireError checks that err is a UC API error with exactly this
// status, code and message.
func requireError(t *testing.T, err error, status int, code, message string, msgAndArgs ...any) {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, msgAndArgs...)
	require.NotNil(t, e, msgAndArgs...)
	assert.Equal(t, status, e.Status, msgAndArgs...)
	assert.Equal(t, code, e.Code, msgAndArgs...)
	assert.Equal(t, message, e.Message, msgAndArgs...)
}

func query(s string) url.Values {
	q, err := url.ParseQuery(s)
	if err != nil {
		panic(err)
	}
	return q
}

// Every operation, with the Iceberg operation the policy decides and the
// names it addresses.
func TestParseRoute(t *testing.T) {
	for _, tc := range []struct {
		method, path, query string
		want                Route
	}{
		{"GET", "catalogs", "", Route{Op: OpListCatalogs, Iceberg: "getConfig"}},
		{"GET", "catalogs", "max_results=5&page_token=x", Route{Op: OpListCatalogs, Iceberg: "getConfig"}},
		{"POST", "catalogs", "", Route{Op: OpCreateCatalog, Iceberg: "getConfig"}},
		{"GET", "catalogs/lake", "", Route{Op: OpGetCatalog, Iceberg: "getConfig", Catalog: "lake"}},
		{"GET", "catalogs/my%20lake", "", Route{Op: OpGetCatalog, Iceberg: "getConfig", Catalog: "my lake"}},
		{"GET", "schemas", "catalog_name=lake", Route{Op: OpListSchemas, Iceberg: "listNamespaces", Catalog: "lake"}},
		{"GET", "schemas", "catalog_name=lake&max_results=10&page_token=abc", Route{Op: OpListSchemas, Iceberg: "listNamespaces", Catalog: "lake"}},
		// createSchema names its catalog in the body: no query needed, and
		// a query's catalog_name is not what is decided on.
		{"POST", "schemas", "", Route{Op: OpCreateSchema, Iceberg: "createNamespace"}},
		{"POST", "schemas", "catalog_name=other", Route{Op: OpCreateSchema, Iceberg: "createNamespace"}},
		{"GET", "schemas/lake.sales", "", Route{Op: OpGetSchema, Iceberg: "loadNamespaceMetadata", Catalog: "lake", Schema: "sales"}},
		{"DELETE", "schemas/lake.sales", "force=true", Route{Op: OpDeleteSchema, Iceberg: "dropNamespace", Catalog: "lake", Schema: "sales"}},
		{"PATCH", "schemas/lake.sales", "", Route{Op: OpUpdateSchema, Iceberg: "updateProperties", Catalog: "lake", Schema: "sales"}},
		{"POST", "staging-tables", "", Route{Op: OpCreateStagingTable, Iceberg: "createTable"}},
		{"POST", "temporary-table-credentials", "", Route{Op: OpGenerateTemporaryTableCredentials, Iceberg: "loadCredentials"}},
		{"POST", "temporary-path-credentials", "", Route{Op: OpGenerateTemporaryPathCredentials, Iceberg: "loadCredentials"}},
		{"GET", "schemas/lake%2Esales", "", Route{Op: OpGetSchema, Iceberg: "loadNamespaceMetadata", Catalog: "lake", Schema: "sales"}},
		{"GET", "tables", "catalog_name=lake&schema_name=sales", Route{Op: OpListTables, Iceberg: "listTables", Catalog: "lake", Schema: "sales"}},
		{"POST", "tables", "", Route{Op: OpCreateTable, Iceberg: "createTable"}},
		{"GET", "tables/lake.sales.orders", "", Route{Op: OpGetTable, Iceberg: "loadTable", Catalog: "lake", Schema: "sales", Table: "orders"}},
		{"GET", "tables/lake.sales.my%20orders", "", Route{Op: OpGetTable, Iceberg: "loadTable", Catalog: "lake", Schema: "sales", Table: "my orders"}},
		{"DELETE", "tables/lake.sales.orders", "", Route{Op: OpDeleteTable, Iceberg: "dropTable", Catalog: "lake", Schema: "sales", Table: "orders"}},
	} {
		got, err := ParseRoute(tc.method, tc.path, query(tc.query))
		require.NoError(t, err, "%s %s?%s", tc.method, tc.path, tc.query)
		assert.Equal(t, tc.want, got, "%s %s?%s", tc.method, tc.path, tc.query)
	}
}

// Bad requests: the exact status, code and message, before anything is
// served.
func TestParseRouteBadInput(t *testing.T) {
	for _, tc := range []struct {
		method, path, query string
		status              int
		code, message       string
	}{
		// malformed paths
		{"GET", "", "", 400, InvalidArgument, `malformed path segment ""`},
		{"GET", "catalogs/", "", 400, InvalidArgument, `malformed path segment ""`},
		{"GET", "catalogs//x", "", 400, InvalidArgument, `malformed path segment ""`},
		{"GET", "/catalogs", "", 400, InvalidArgument, `malformed path segment ""`},
		{"GET", "catalogs/%zz", "", 400, InvalidArgument, `malformed path segment "%zz"`},
		{"GET", "tables/lake.sales.t%", "", 400, InvalidArgument, `malformed path segment "lake.sales.t%"`},
		// listings need their names in the query
		{"GET", "schemas", "", 400, InvalidArgument, "catalog_name is required"},
		{"GET", "schemas", "catalog_name=", 400, InvalidArgument, "catalog_name is required"},
		{"GET", "tables", "", 400, InvalidArgument, "catalog_name is required"},
		{"GET", "tables", "schema_name=sales", 400, InvalidArgument, "catalog_name is required"},
		{"GET", "tables", "catalog_name=lake", 400, InvalidArgument, "schema_name is required"},
		// full names with too few or too many parts
		{"GET", "schemas/lake", "", 400, InvalidArgument, `invalid schema full name "lake": want catalog.schema`},
		{"DELETE", "schemas/lake.a.b", "", 400, InvalidArgument, `invalid schema full name "lake.a.b": want catalog.schema`},
		{"GET", "tables/lake.sales", "", 400, InvalidArgument, `invalid table full name "lake.sales": want catalog.schema.table`},
		{"GET", "tables/lake.sales.a.b", "", 400, InvalidArgument, `invalid table full name "lake.sales.a.b": want catalog.schema.table`},
		{"DELETE", "tables/orders", "", 400, InvalidArgument, `invalid table full name "orders": want catalog.schema.table`},
		// an empty part names nothing (it would leave the table's schema,
		// or the table, out of what the policy decides on)
		{"GET", "tables/lake..orders", "", 400, InvalidArgument, `invalid table full name "lake..orders": want catalog.schema.table`},
		{"DELETE", "tables/lake.sales.", "", 400, InvalidArgument, `invalid table full name "lake.sales.": want catalog.schema.table`},
		{"GET", "tables/.sales.orders", "", 400, InvalidArgument, `invalid table full name ".sales.orders": want catalog.schema.table`},
		{"GET", "tables/..", "", 400, InvalidArgument, `invalid table full name "..": want catalog.schema.table`},
		{"DELETE", "schemas/lake.", "", 400, InvalidArgument, `invalid schema full name "lake.": want catalog.schema`},
		{"GET", "schemas/.sales", "", 400, InvalidArgument, `invalid schema full name ".sales": want catalog.schema`},
		{"GET", "schemas/%2E", "", 400, InvalidArgument, `invalid schema full name ".": want catalog.schema`},
		// names the Iceberg door refuses
		{"GET", "catalogs/%2E%2E", "", 400, InvalidArgument, `invalid name "..": is not allowed`},
		{"GET", "schemas", "catalog_name=.", 400, InvalidArgument, `invalid name ".": is not allowed`},
		{"GET", "tables", "catalog_name=lake&schema_name=a%0Ab", 400, InvalidArgument, `invalid name "a\nb": contains a control character`},
		{"GET", "tables/lake.sales.a%01b", "", 400, InvalidArgument, `invalid name "a\x01b": contains a control character`},
		{"GET", "tables/lake.sales.%FF", "", 400, InvalidArgument, `invalid name "\xff": is not valid UTF-8`},
		{"GET", "schemas/lake.%7F", "", 400, InvalidArgument, `invalid name "\x7f": contains a control character`},
		// unknown endpoints
		{"GET", "volumes", "", 404, NotFound, "no Unity Catalog API endpoint at /volumes"},
		{"GET", "functions/lake.sales.f", "", 404, NotFound, "no Unity Catalog API endpoint at /functions/lake.sales.f"},
		{"GET", "tables/lake/sales", "", 404, NotFound, "no Unity Catalog API endpoint at /tables/lake/sales"},
		{"GET", "catalogs/lake/schemas", "", 404, NotFound, "no Unity Catalog API endpoint at /catalogs/lake/schemas"},
		{"GET", "Catalogs", "", 404, NotFound, "no Unity Catalog API endpoint at /Catalogs"},
		// served resources, other methods
		{"PATCH", "catalogs/lake", "", 405, Unimplemented, "PATCH /catalogs/{name} is not served by lakegate"},
		{"DELETE", "catalogs/lake", "", 405, Unimplemented, "DELETE /catalogs/{name} is not served by lakegate"},
		{"DELETE", "catalogs", "", 405, Unimplemented, "DELETE /catalogs is not served by lakegate"},
		{"PUT", "schemas", "", 405, Unimplemented, "PUT /schemas is not served by lakegate"},
		{"PUT", "schemas/lake.sales", "", 405, Unimplemented, "PUT /schemas/{name} is not served by lakegate"},
		{"GET", "temporary-table-credentials", "", 405, Unimplemented, "GET /temporary-table-credentials is not served by lakegate"},
		{"GET", "temporary-path-credentials", "", 405, Unimplemented, "GET /temporary-path-credentials is not served by lakegate"},
		{"GET", "staging-tables", "", 405, Unimplemented, "GET /staging-tables is not served by lakegate"},
		{"POST", "temporary-volume-credentials", "", 404, NotFound, "no Unity Catalog API endpoint at /temporary-volume-credentials"},
		{"POST", "temporary-table-credentials/x", "", 404, NotFound, "no Unity Catalog API endpoint at /temporary-table-credentials/x"},
		{"PATCH", "tables", "", 405, Unimplemented, "PATCH /tables is not served by lakegate"},
		{"HEAD", "tables/lake.sales.t", "", 405, Unimplemented, "HEAD /tables/{name} is not served by lakegate"},
		{"get", "catalogs", "", 405, Unimplemented, "get /catalogs is not served by lakegate"},
	} {
		_, err := ParseRoute(tc.method, tc.path, query(tc.query))
		requireError(t, err, tc.status, tc.code, tc.message, "%s %s?%s", tc.method, tc.path, tc.query)
	}
}

func TestParseCreateSchema(t *testing.T) {
	req, err := ParseCreateSchema([]byte(`{"name":"sales","catalog_name":"lake","comment":"c",
		"properties":{"k":"v"},"storage_root":"file:///w/sales"}`))
	require.NoError(t, err)
	assert.Equal(t, "sales", *req.Name)
	assert.Equal(t, "lake", *req.CatalogName)
	assert.Equal(t, "c", *req.Comment)
	assert.Equal(t, map[string]string{"k": "v"}, req.Properties)
	assert.Equal(t, "file:///w/sales", *req.StorageRoot)

	req, err = ParseCreateSchema([]byte(`{"name":"s","catalog_name":"lake"}`))
	require.NoError(t, err)
	assert.Nil(t, req.Comment)
	assert.Nil(t, req.StorageRoot)
	assert.Nil(t, req.Properties)
}

func TestParseCreateSchemaBadBodies(t *testing.T) {
	for _, tc := range []struct{ body, message string }{
		{`{`, "malformed CreateSchema: unexpected end of JSON input"},
		{``, "malformed CreateSchema: empty body"},
		{`[]`, "malformed CreateSchema: json: cannot unmarshal array into Go value of type unity.CreateSchema"},
		{`{"name":1,"catalog_name":"lake"}`, "malformed CreateSchema: json: cannot unmarshal number into Go struct field CreateSchema.name of type string"},
		{`{"name":"s","catalog_name":"lake","properties":{"k":1}}`, "malformed CreateSchema: json: cannot unmarshal number into Go struct field CreateSchema.properties of type string"},
		{`{"catalog_name":"lake"}`, "name is required"},
		{`{"name":"","catalog_name":"lake"}`, "name is required"},
		{`{"name":null,"catalog_name":"lake"}`, "name is required"},
		{`{"name":"s"}`, "catalog_name is required"},
		{`{"name":"s","catalog_name":""}`, "catalog_name is required"},
		{`{"name":"..","catalog_name":"lake"}`, `invalid name "..": is not allowed`},
		{`{"name":"a\u0001b","catalog_name":"lake"}`, `invalid name "a\x01b": contains a control character`},
		{`{"name":"s","catalog_name":"."}`, `invalid catalog_name ".": is not allowed`},
		{`{"name":"s","catalog_name":"la\nke"}`, `invalid catalog_name "la\nke": contains a control character`},
		// both missing: the name is reported, every time
		{`{}`, "name is required"},
		{`null`, "name is required"},
		// a dotted name could never be addressed by a full name
		{`{"name":"a.b","catalog_name":"lake"}`, `invalid name "a.b": contains a period, which separates the parts of a full name`},
		{`{"name":"s","catalog_name":"la.ke"}`, `invalid catalog_name "la.ke": contains a period, which separates the parts of a full name`},
	} {
		_, err := ParseCreateSchema([]byte(tc.body))
		requireError(t, err, http.StatusBadRequest, InvalidArgument, tc.message, "%s", tc.body)
	}
}

// A 405 names the methods the resource serves, as HTTP requires.
func TestParseRouteAllow(t *testing.T) {
	for path, want := range map[string][]string{
		"catalogs":                    {"GET", "POST"},
		"catalogs/lake":               {"GET"},
		"schemas":                     {"GET", "POST"},
		"schemas/lake.sales":          {"DELETE", "GET", "PATCH"},
		"staging-tables":              {"POST"},
		"temporary-table-credentials": {"POST"},
		"temporary-path-credentials":  {"POST"},
		"tables":                      {"GET", "POST"},
		"tables/lake.sales.t":         {"DELETE", "GET"},
	} {
		_, err := ParseRoute(http.MethodPut, path, nil)
		var e *Error
		require.ErrorAs(t, err, &e, path)
		assert.Equal(t, http.StatusMethodNotAllowed, e.Status, path)
		assert.Equal(t, want, e.Allow, path)
	}
	_, err := ParseRoute(http.MethodGet, "volumes", nil)
	assert.Nil(t, AsError(err).Allow, "a 404 allows nothing")
}
