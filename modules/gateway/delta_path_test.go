package gateway_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// pathCredsGateway fronts an embedded catalog confined to a temp dir as
// catalog `lake` (allowed_locations = that dir), with the Delta API vending
// path credentials through namespace `staging`; props are the embedded
// catalog's properties (what it vends).
func pathCredsGateway(t *testing.T, props map[string]string) (string, string) {
	return pathCredsGatewayWith(t, props, map[string]any{})
}

// pathCredsGatewayWith is pathCredsGateway with more lakegate app settings.
func pathCredsGatewayWith(t *testing.T, props map[string]string, app map[string]any) (string, string) {
	t.Helper()
	cfg, dir := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
	cfg.AllowedLocations = []string{dir}
	cfg.Properties = props
	backend := embeddedtest.Serve(t, cfg)
	addr := freeAddr(t)
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{"file://" + dir}
	app["catalogs"] = []any{lake}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_delta", "path_credentials": []any{map[string]any{"catalog": "lake", "namespace": []string{"staging"}}}},
		map[string]any{"handler": "lakegate_iceberg"}))
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(context.Background(), table.Identifier{"staging"}, nil))
	return base, dir
}

func pathCreds(t *testing.T, base, loc, op string) (int, map[string]any) {
	t.Helper()
	return call(t, http.MethodGet, base+deltaAPI+"/temporary-path-credentials?location="+url.QueryEscape(loc)+"&operation="+op, nil)
}

// getTemporaryPathCredentials vends what the catalog vends for a new table
// at the path, only inside the catalog's allowed locations.
func TestDeltaTemporaryPathCredentials(t *testing.T) {
	base, dir := pathCredsGateway(t, map[string]string{
		"s3.access-key-id": "AKIAPATHTEST", "s3.secret-access-key": "path-secret", "s3.region": "us-east-1"})
	loc := "file://" + filepath.Join(dir, "new_table")
	code, cfg := call(t, http.MethodGet, base+deltaAPI+"/config?catalog=lake&protocol-versions=1.0", nil)
	require.Equal(t, http.StatusOK, code, "%v", cfg)
	assert.Contains(t, cfg["endpoints"], "GET /v1/temporary-path-credentials", "configured, so served")
	for _, op := range []string{"READ", "READ_WRITE"} {
		code, out := pathCreds(t, base, loc, op)
		require.Equal(t, http.StatusOK, code, "%v", out)
		creds := out["storage-credentials"].([]any)
		require.Len(t, creds, 1)
		c := creds[0].(map[string]any)
		assert.Equal(t, loc+"/", c["prefix"], "the path and below, not a sibling such as new_table2")
		assert.Equal(t, op, c["operation"])
		assert.Equal(t, "AKIAPATHTEST", c["config"].(map[string]any)["s3.access-key-id"])
		assert.NotZero(t, c["expiration-time-ms"])
	}
	// vending created nothing
	code, out := call(t, http.MethodGet, base+"/v1/lake/namespaces/staging/tables", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Empty(t, out["identifiers"])

	// A path inside a table of the namespace would reach its files past
	// its own policy.
	_, err := gatewayClient(t, base, "lake").CreateTable(context.Background(), table.Identifier{"staging", "kept"},
		embeddedtest.EventSchema, catalog.WithLocation("file://"+filepath.Join(dir, "kept")))
	require.NoError(t, err)
	code, out = pathCreds(t, base, "file://"+filepath.Join(dir, "kept", "data"), "READ")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Contains(t, errMessage(out), "overlaps table staging.kept")

	for _, tc := range []struct {
		name, loc, op string
		code          int
		typ           string
	}{
		{"outside", "file:///elsewhere/t", "READ", 403, "PermissionDeniedException"},
		{"relative", "new_table", "READ", 400, "InvalidParameterValueException"},
		{"dot segments", "file://" + dir + "/../x", "READ", 400, "InvalidParameterValueException"},
		{"bad operation", loc, "WRITE", 400, "InvalidParameterValueException"},
		{"no location", "", "READ", 400, "InvalidParameterValueException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := pathCreds(t, base, tc.loc, tc.op)
			require.Equal(t, tc.code, code, "%v", out)
			assert.Equal(t, tc.typ, out["error"].(map[string]any)["type"])
		})
	}
}

// Where the catalog vends nothing, or nothing is configured, the answer
// is 501 NotImplemented, never an empty success.
func TestDeltaTemporaryPathCredentialsNotVended(t *testing.T) {
	base, dir := pathCredsGateway(t, nil)
	code, out := pathCreds(t, base, "file://"+filepath.Join(dir, "t"), "READ")
	require.Equal(t, http.StatusNotImplemented, code, "%v", out)
	assert.Contains(t, out["error"].(map[string]any)["message"], `catalog "lake" vends no storage credentials`)

	plain, _ := deltaGateway(t)
	code, out = pathCreds(t, plain, "file:///tmp/t", "READ")
	require.Equal(t, http.StatusNotImplemented, code, "%v", out)
	assert.Contains(t, out["error"].(map[string]any)["message"], "path_credentials")
}

const pathPolicy = `package lakegate.pathtest

decision := {"allow": false, "reason": "private paths are denied"} if {
	input.operation == "loadCredentials"
	contains(input.resource.location, "/private/")
} else := {"allow": false, "reason": "no new tables"} if {
	input.operation == "createTable"
	contains(input.resource.location, "/nocreate/")
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// The policy decides on the path (resource.location) before anything is
// vended; both operations need createTable too, since the catalog vends
// what it vends for a new table there.
func TestDeltaTemporaryPathCredentialsPolicy(t *testing.T) {
	base, dir := pathCredsGatewayWith(t, map[string]string{"s3.access-key-id": "AKIAPATHTEST"},
		map[string]any{"policy": testPolicy(t, pathPolicy)})
	code, out := pathCreds(t, base, "file://"+filepath.Join(dir, "public", "t"), "READ")
	require.Equal(t, http.StatusOK, code, "%v", out)
	for _, tc := range []struct{ loc, op, message string }{
		{filepath.Join(dir, "private", "t"), "READ", "getTemporaryPathCredentials: private paths are denied"},
		{filepath.Join(dir, "nocreate", "t"), "READ", "getTemporaryPathCredentials: no new tables"},
		{filepath.Join(dir, "nocreate", "t"), "READ_WRITE", "getTemporaryPathCredentials: no new tables"},
	} {
		code, out := pathCreds(t, base, "file://"+tc.loc, tc.op)
		require.Equal(t, http.StatusForbidden, code, "%v", out)
		assert.Equal(t, "PermissionDeniedException", errType(out))
		assert.Equal(t, tc.message, errMessage(out))
	}
}

// A path_credentials source that cannot vend is refused at load, by
// Validate, with the source named.
func TestDeltaPathCredentialsConfigRefused(t *testing.T) {
	confined := remote("lake", "http://127.0.0.1:9", nil)
	confined["allowed_locations"] = []string{"file:///srv/lake"}
	for name, tc := range map[string]struct {
		src  map[string]any
		want string
	}{
		"unknown catalog":   {map[string]any{"catalog": "nowhere", "namespace": []string{"s"}}, `lakegate_delta path_credentials: no catalog named "nowhere"`},
		"unconfined remote": {map[string]any{"catalog": "open", "namespace": []string{"s"}}, `lakegate_delta path_credentials: catalog "open" has no allowed_locations to confine paths to`},
		"no namespace":      {map[string]any{"catalog": "lake"}, `lakegate_delta path_credentials: catalog "lake" needs a namespace`},
	} {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			app := map[string]any{"catalogs": []any{confined, remote("open", "http://127.0.0.1:9", nil)}}
			err := caddy.Load(caddyJSONHandlers(t, addr, app,
				map[string]any{"handler": "lakegate_delta", "path_credentials": []any{tc.src}}), true)
			t.Cleanup(func() { _ = caddy.Stop() })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
