package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// listFunctions, loadFunction and unregisterTable are routed on every kind
// of catalog (issue 38: they were 404 "no such endpoint"): the embedded
// catalog answers them itself, a remote forwards them, the unified catalog
// sends them to the member holding the namespace. unregisterTable also
// evicts the table's cached LoadTable answer.
func TestFunctionsAndUnregisterAreRouted(t *testing.T) {
	ctx := context.Background()
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	local, rem := uniqueName("local"), uniqueName("rem")
	lc := embeddedCatalog(t, local)
	lc["cache"] = map[string]any{"max_age": "10m"}
	base := gateway(t, map[string]any{"catalogs": []any{
		lc,
		cached(rem, backend.URL, map[string]any{"max_age": "10m"}, nil),
		map[string]any{"name": "all", "unified": map[string]any{"default": local}},
	}})
	for _, name := range []string{local, rem} {
		cat := gatewayClient(t, base, name)
		require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil))
		for _, tbl := range []string{"t", "u"} {
			_, err := cat.CreateTable(ctx, table.Identifier{"ns", tbl}, embeddedtest.EventSchema)
			require.NoError(t, err)
		}
	}
	get := func(method, path string) (int, map[string]json.RawMessage) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
		require.NoError(t, err)
		rsp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer rsp.Body.Close()
		b, err := io.ReadAll(rsp.Body)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m), "%s %s: %s", method, path, b)
		return rsp.StatusCode, m
	}
	errType := func(m map[string]json.RawMessage) string {
		var e struct{ Type string }
		require.NoError(t, json.Unmarshal(m["error"], &e))
		return e.Type
	}
	for _, cat := range []string{local, rem, "all"} {
		t.Run(cat, func(t *testing.T) {
			code, m := get(http.MethodGet, "/v1/"+cat+"/namespaces/ns/functions")
			require.Equal(t, http.StatusOK, code, "%v", m)
			require.JSONEq(t, `[]`, string(m["identifiers"]))
			code, m = get(http.MethodGet, "/v1/"+cat+"/namespaces/ns/functions/f")
			require.Equal(t, http.StatusNotFound, code)
			require.Equal(t, "NoSuchFunctionException", errType(m))
			code, m = get(http.MethodGet, "/v1/"+cat+"/namespaces/nope/functions")
			require.Equal(t, http.StatusNotFound, code)
			require.Equal(t, "NoSuchNamespaceException", errType(m))
		})
	}
	for _, tc := range []struct{ cat, table, member string }{{local, "t", local}, {rem, "t", rem}, {"all", "u", local}} {
		t.Run("unregister "+tc.cat, func(t *testing.T) {
			path := "/v1/" + tc.cat + "/namespaces/ns/tables/" + tc.table
			code, before := get(http.MethodGet, path) // cached now
			require.Equal(t, http.StatusOK, code)
			code, m := get(http.MethodPost, path+"/unregister")
			require.Equal(t, http.StatusOK, code, "%v", m)
			require.JSONEq(t, string(before["metadata-location"]), string(m["metadata-location"]))
			code, m = get(http.MethodGet, path)
			require.Equal(t, http.StatusNotFound, code, "the cached answer was evicted: %v", m)
			code, _ = get(http.MethodPost, path+"/unregister")
			require.Equal(t, http.StatusNotFound, code)
			// the files stayed: the table registers again from its metadata
			var loc string
			require.NoError(t, json.Unmarshal(before["metadata-location"], &loc))
			_, err := gatewayClient(t, base, tc.member).RegisterTable(ctx, table.Identifier{"ns", tc.table}, loc)
			require.NoError(t, err)
		})
	}
}
