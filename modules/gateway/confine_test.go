package gateway_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// TestRemoteAllowedLocations: a remote catalog with allowed_locations
// refuses, at the gateway, every write naming a location outside them,
// from the Iceberg and the Delta front doors alike, although the backend
// itself (an embedded catalog allowing more) would accept it.
func TestRemoteAllowedLocations(t *testing.T) {
	ctx := context.Background()
	inside, outside := t.TempDir(), t.TempDir()
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.AllowedLocations = []string{inside, outside}
	backend := embeddedtest.Serve(t, cfg)
	addr := freeAddr(t)
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{"file://" + inside}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{lake}},
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))

	// What the backend accepts directly, to register from below.
	direct := embeddedtest.Client(t, backend.URL)
	require.NoError(t, direct.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	away, err := direct.CreateTable(ctx, table.Identifier{"sales", "away"}, embeddedtest.EventSchema,
		catalog.WithLocation("file://"+filepath.Join(outside, "away")))
	require.NoError(t, err)

	tables := base + "/v1/lake/namespaces/sales/tables"
	schema := `"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`
	forbidden := func(name, method, url, body string) {
		t.Helper()
		status, b := do(t, method, url, "", body, nil)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", name, b)
		assert.Equal(t, "ForbiddenException", errorType(b), "%s: %s", name, b)
	}
	forbidden("create outside", "POST", tables, `{"name":"t1",`+schema+`,"location":"file://`+outside+`/t1"}`)
	forbidden("data path outside", "POST", tables, `{"name":"t1",`+schema+`,"properties":{"write.data.path":"s3://x/y"}}`)
	forbidden("namespace location outside", "POST", base+"/v1/lake/namespaces",
		`{"namespace":["n2"],"properties":{"location":"file://`+outside+`"}}`)
	forbidden("register outside", "POST", base+"/v1/lake/namespaces/sales/register",
		`{"name":"r","metadata-location":"`+away.MetadataLocation()+`"}`)
	forbidden("transaction set-location outside", "POST", base+"/v1/lake/transactions/commit",
		`{"table-changes":[{"identifier":{"namespace":["sales"],"name":"away"},"requirements":[],
		  "updates":[{"action":"set-location","location":"file:///etc"}]}]}`)

	status, b := do(t, "POST", tables, "", `{"name":"t1",`+schema+`,"location":"file://`+inside+`/t1"}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	forbidden("commit set-location outside", "POST", tables+"/t1",
		`{"requirements":[],"updates":[{"action":"set-location","location":"file://`+outside+`/t1"}]}`)

	// The Delta front door: a location, and UniForm metadata, outside.
	code, out := createEvents(t, base, outside, "d1", nil)
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "PermissionDeniedException", errType(out))
	code, out = createEvents(t, base, inside, "d2", map[string]any{
		"location": "file://" + filepath.Join(inside, "d2"),
		"uniform":  map[string]any{"iceberg": map[string]any{"metadata-location": away.MetadataLocation(), "converted-delta-version": 1}},
	})
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "PermissionDeniedException", errType(out))
	code, out = createEvents(t, base, inside, "d3", nil)
	assert.Equal(t, http.StatusOK, code, "%v", out)

	// nothing refused reached the backend
	var names []string
	for id, err := range direct.ListTables(ctx, table.Identifier{"sales"}) {
		require.NoError(t, err)
		names = append(names, strings.Join(id, "."))
	}
	assert.ElementsMatch(t, []string{"sales.away", "sales.t1", "sales.d3"}, names)
}
