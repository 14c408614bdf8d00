package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// unifiedGateway serves three embedded members and the unified catalog
// `all` over them: a and below in first, b and below in second, the rest
// in third. extra is merged into the app config; member adds to every
// member's catalog config (a cache, say).
func unifiedGateway(t *testing.T, extra, member map[string]any) string {
	t.Helper()
	var catalogs []any
	for _, name := range []string{"first", "second", "third"} {
		cc := embeddedCatalog(t, name)
		for k, v := range member {
			cc[k] = v
		}
		catalogs = append(catalogs, cc)
	}
	catalogs = append(catalogs, map[string]any{"name": "all", "unified": map[string]any{
		"routes": []any{
			map[string]any{"namespace": []string{"a"}, "catalog": "first"},
			map[string]any{"namespace": []string{"b"}, "catalog": "second"},
		},
		"default": "third",
	}})
	app := map[string]any{"catalogs": catalogs}
	for k, v := range extra {
		app[k] = v
	}
	return gateway(t, app)
}

// iceberg-go's conformance suite passes against the unified catalog, and
// what it creates under a rule's namespace lives in that rule's member
// under the same name.
func TestUnifiedConformance(t *testing.T) {
	base := unifiedGateway(t, nil, nil)
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		SupportsNamespaceProperties: true,
		NewCatalog:                  func(t *testing.T) catalog.Catalog { return gatewayClient(t, base, "all") },
	})

	ctx := context.Background()
	all := gatewayClient(t, base, "all")
	for _, ns := range []table.Identifier{{"a"}, {"a", "x"}, {"b"}} {
		require.NoError(t, all.CreateNamespace(ctx, ns, nil))
	}
	_, err := all.CreateTable(ctx, table.Identifier{"a", "x", "events"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	_, err = all.CreateTable(ctx, table.Identifier{"b", "orders"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	has := func(cat string, id table.Identifier) bool {
		ok, err := gatewayClient(t, base, cat).CheckTableExists(ctx, id)
		require.NoError(t, err)
		return ok
	}
	assert.True(t, has("first", table.Identifier{"a", "x", "events"}))
	assert.False(t, has("third", table.Identifier{"a", "x", "events"}))
	assert.True(t, has("second", table.Identifier{"b", "orders"}))
	assert.False(t, has("first", table.Identifier{"b", "orders"}))

	top, err := all.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	assert.Contains(t, top, table.Identifier{"a"})
	assert.Contains(t, top, table.Identifier{"b"})
	var ids []table.Identifier
	for id, err := range all.ListTables(ctx, table.Identifier{"a", "x"}) {
		require.NoError(t, err)
		ids = append(ids, id)
	}
	assert.Equal(t, []table.Identifier{{"a", "x", "events"}}, ids)

	// a rename across members is refused, nothing moved
	_, err = all.RenameTable(ctx, table.Identifier{"a", "x", "events"}, table.Identifier{"b", "events"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"first"`)
	assert.Contains(t, err.Error(), `"second"`)
	assert.True(t, has("first", table.Identifier{"a", "x", "events"}))
	// within a member it is the member's rename
	_, err = all.RenameTable(ctx, table.Identifier{"a", "x", "events"}, table.Identifier{"a", "events"})
	require.NoError(t, err)
	assert.True(t, has("first", table.Identifier{"a", "events"}))
}

// A write through the unified catalog invalidates the member's cache: a
// load through the member and one through the unified catalog both see
// it, and a write through the member is seen through the unified catalog.
func TestUnifiedCacheAcrossMembers(t *testing.T) {
	base := unifiedGateway(t, nil, map[string]any{"cache": map[string]any{"max_age": "10m"}})
	ctx := context.Background()
	all, first := gatewayClient(t, base, "all"), gatewayClient(t, base, "first")
	require.NoError(t, all.CreateNamespace(ctx, table.Identifier{"a"}, nil))
	id := table.Identifier{"a", "cached"}
	_, err := all.CreateTable(ctx, id, embeddedtest.EventSchema)
	require.NoError(t, err)

	prop := func(cat catalog.Catalog) string {
		tbl, err := cat.LoadTable(ctx, id)
		require.NoError(t, err)
		return tbl.Properties()["k"]
	}
	set := func(cat catalog.Catalog, v string) {
		tbl, err := cat.LoadTable(ctx, id)
		require.NoError(t, err)
		tx := tbl.NewTransaction()
		require.NoError(t, tx.SetProperties(iceberg.Properties{"k": v}))
		_, err = tx.Commit(ctx)
		require.NoError(t, err)
	}
	assert.Empty(t, prop(first)) // both now cached
	assert.Empty(t, prop(all))

	set(all, "via-all")
	assert.Equal(t, "via-all", prop(first))
	assert.Equal(t, "via-all", prop(all))

	set(first, "via-first")
	assert.Equal(t, "via-first", prop(all))
	assert.Equal(t, "via-first", prop(first))
}

const unifiedPolicy = `package lakegate.unifiedtest

decision := {"allow": false, "reason": "b is closed"} if {
	input.resource.catalog == "all"
	input.resource.backend == "unified"
	input.resource.namespace[0] == "b"
} else := {"allow": false, "reason": "b is closed"} if {
	input.resource.catalog == "all"
	input.resource.namespace == null
	input.operation == "createNamespace"
} else := {"allow": true, "reason": "allowed"}

visible contains i if {
	some i, item in input.items
	item.namespace[0] != "b"
}
`

// A policy is written on the unified catalog's names: what it denies
// there is denied whatever member holds it, and listings are filtered on
// those names too. The members themselves answer under their own names.
func TestUnifiedPolicyOnVirtualNames(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.rego"), []byte(unifiedPolicy), 0o600))
	base := unifiedGateway(t, map[string]any{"policy": map[string]any{"dir": dir, "package": "lakegate.unifiedtest"}}, nil)
	ctx := context.Background()
	all, second := gatewayClient(t, base, "all"), gatewayClient(t, base, "second")

	require.NoError(t, second.CreateNamespace(ctx, table.Identifier{"b"}, nil))
	_, err := second.CreateTable(ctx, table.Identifier{"b", "t"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	require.NoError(t, all.CreateNamespace(ctx, table.Identifier{"a"}, nil))

	_, err = all.LoadTable(ctx, table.Identifier{"b", "t"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b is closed")
	_, err = second.LoadTable(ctx, table.Identifier{"b", "t"})
	assert.NoError(t, err, "the member's own name is not the unified one")

	resp, err := http.Get(base + "/v1/all/namespaces")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `["a"]`)
	assert.NotContains(t, string(body), `["b"]`, "the listing is filtered on unified names")
}

// The unified catalog's /v1/config is its own: its name as prefix, and
// the endpoints every member serves.
func TestUnifiedConfig(t *testing.T) {
	base := unifiedGateway(t, nil, nil)
	resp, err := http.Get(base + "/v1/config?warehouse=all")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"prefix":"all"`)
	assert.Contains(t, string(body), `"GET /v1/{prefix}/namespaces/{namespace}/views/{view}"`)
	assert.True(t, strings.Contains(string(body), `"endpoints"`))
	assert.NotContains(t, string(body), "idempotency-key-lifetime", "no member replays keys")
}

// A route with `as` over an embedded member with its own namespace
// separator: the unified sales.eu is the member's eu, both ways, and the
// member's storage defaults travel with its tables.
func TestUnifiedRenamedPrefix(t *testing.T) {
	first := embeddedCatalog(t, "first")
	emb := first["embedded"].(map[string]any)
	emb["namespace_separator"] = "."
	emb["properties"] = map[string]string{"s3.region": "eu-first"}
	base := gateway(t, map[string]any{"catalogs": []any{first, embeddedCatalog(t, "third"),
		map[string]any{"name": "u", "unified": map[string]any{
			"routes":  []any{map[string]any{"namespace": []string{"sales", "eu"}, "catalog": "first", "as": []string{"eu"}}},
			"default": "third",
		}}}})
	call := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for _, ns := range []string{`["sales"]`, `["sales","eu"]`, `["sales","eu","de"]`} {
		status, body := call(http.MethodPost, "/v1/u/namespaces", `{"namespace":`+ns+`}`)
		require.Equal(t, http.StatusOK, status, body)
		assert.Contains(t, body, `"namespace":`+ns)
	}
	ctx := context.Background()
	_, err := gatewayClient(t, base, "u").CreateTable(ctx, table.Identifier{"sales", "eu", "de", "orders"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	_, err = gatewayClient(t, base, "u").CreateTable(ctx, table.Identifier{"sales", "totals"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	status, body := call(http.MethodGet, "/v1/first/namespaces?parent=eu", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"namespaces":[["eu","de"]]}`, body, "the member's own names")
	status, body = call(http.MethodGet, "/v1/u/namespaces?parent=sales", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"namespaces":[["sales","eu"]]}`, body)
	status, body = call(http.MethodGet, "/v1/u/namespaces/sales%1Feu%1Fde/tables", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"identifiers":[{"namespace":["sales","eu","de"],"name":"orders"}]}`, body)

	status, body = call(http.MethodGet, "/v1/u/namespaces/sales%1Feu%1Fde/tables/orders", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"s3.region":"eu-first"`, "the member's defaults go with its tables")

	status, body = call(http.MethodPost, "/v1/u/transactions/commit", `{"table-changes":[
		{"identifier":{"namespace":["sales","eu","de"],"name":"orders"},"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]},
		{"identifier":{"namespace":["sales"],"name":"totals"},"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}]}`)
	assert.Equal(t, http.StatusNotAcceptable, status, body)
	assert.Equal(t, "UnsupportedOperationException", errorType([]byte(body)))
	tbl, err := gatewayClient(t, base, "first").LoadTable(ctx, table.Identifier{"eu", "de", "orders"})
	require.NoError(t, err)
	assert.Empty(t, tbl.Properties()["k"], "nothing committed")
}

// Idempotency-Key replay is the members': a keyed write through the
// unified catalog, retried, is replayed by the member that ran it, and
// the unified /v1/config advertises the members' key lifetime.
func TestUnifiedIdempotencyIsTheMembers(t *testing.T) {
	base := unifiedGateway(t, nil, map[string]any{"idempotency": map[string]any{"lifetime": "20m"}})
	post := func(key string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+"/v1/all/namespaces", strings.NewReader(`{"namespace":["b"]}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	key := "01890a5d-ac96-774b-bcce-b302099a8057"
	status, first := post(key)
	require.Equal(t, http.StatusOK, status, first)
	status, again := post(key)
	assert.Equal(t, http.StatusOK, status, "the retry is replayed, not a conflict: %s", again)
	assert.JSONEq(t, first, again)
	status, other := post("01890a5d-ac96-774b-bcce-b302099a8058")
	assert.Equal(t, http.StatusConflict, status, "a new key runs again: %s", other)

	resp, err := http.Get(base + "/v1/config?warehouse=all")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), `"idempotency-key-lifetime":"PT20M"`)
}

// Nested routes behave as one tree (issue 38): with `sales` on the
// default member and `sales.us` routed to another, `sales.us` can be
// created (its member gets the `sales` it needs to hold it), and `sales`
// cannot be dropped while `sales.us` lives on in the other member.
func TestUnifiedNestedRoutesAreOneTree(t *testing.T) {
	ctx := context.Background()
	main, us := uniqueName("main"), uniqueName("us")
	base := gateway(t, map[string]any{"catalogs": []any{
		embeddedCatalog(t, main), embeddedCatalog(t, us),
		map[string]any{"name": "all", "unified": map[string]any{
			"routes":  []any{map[string]any{"namespace": []string{"sales", "us"}, "catalog": us}},
			"default": main,
		}},
	}})
	all := gatewayClient(t, base, "all")
	require.NoError(t, all.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	require.NoError(t, all.CreateNamespace(ctx, table.Identifier{"sales", "us"}, nil))
	_, err := all.CreateTable(ctx, table.Identifier{"sales", "us", "orders"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	ok, err := gatewayClient(t, base, us).CheckTableExists(ctx, table.Identifier{"sales", "us", "orders"})
	require.NoError(t, err)
	require.True(t, ok, "the table lives in the routed member")
	children, err := all.ListNamespaces(ctx, table.Identifier{"sales"})
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"sales", "us"}}, children)
	top, err := all.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []table.Identifier{{"sales"}}, top, "the member's own `sales` is not shown twice")

	err = all.DropNamespace(ctx, table.Identifier{"sales"})
	require.ErrorIs(t, err, catalog.ErrNamespaceNotEmpty)
	ok, err = all.CheckNamespaceExists(ctx, table.Identifier{"sales"})
	require.NoError(t, err)
	require.True(t, ok, "nothing was dropped")

	require.NoError(t, all.DropTable(ctx, table.Identifier{"sales", "us", "orders"}))
	require.NoError(t, all.DropNamespace(ctx, table.Identifier{"sales", "us"}))
	require.NoError(t, all.DropNamespace(ctx, table.Identifier{"sales"}))
}
