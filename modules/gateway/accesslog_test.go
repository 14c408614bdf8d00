package gateway_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// loggedSharingGateway is sharingGateway with Caddy's access log in one
// file and every other logger, at DEBUG, in another.
func loggedSharingGateway(t *testing.T) (base, accessLog, otherLog string) {
	t.Helper()
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	dir := t.TempDir()
	accessLog, otherLog = filepath.Join(dir, "access.log"), filepath.Join(dir, "other.log")
	addr := freeAddr(t)
	app := map[string]any{"catalogs": []any{remote("lake", backend.URL, nil)}}
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(caddyJSONHandlers(t, addr, app,
		sharingHandler(map[string]any{"change_data_dir": t.TempDir()}), map[string]any{"handler": "lakegate_iceberg"}), &cfg))
	cfg["logging"] = map[string]any{"logs": map[string]any{
		"default": map[string]any{"level": "DEBUG", "exclude": []string{"http.log.access"},
			"writer": map[string]any{"output": "file", "filename": otherLog}},
		"access": map[string]any{"include": []string{"http.log.access"}, "encoder": map[string]any{"format": "json"},
			"writer": map[string]any{"output": "file", "filename": accessLog}},
	}}
	server := cfg["apps"].(map[string]any)["http"].(map[string]any)["servers"].(map[string]any)["lakegate"].(map[string]any)
	server["logs"] = map[string]any{}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	return serveOn(t, addr, raw), accessLog, otherLog
}

// accessLineFor is the access log's line for the request whose logged
// URI starts with prefix.
func accessLineFor(t *testing.T, lines []map[string]any, prefix string) map[string]any {
	t.Helper()
	for _, l := range lines {
		if req, ok := l["request"].(map[string]any); ok && strings.HasPrefix(req["uri"].(string), prefix) {
			return l
		}
	}
	require.Failf(t, "no access log line", "for %s in %v", prefix, lines)
	return nil
}

// A Delta Sharing file URL is the download's credential: its token never
// reaches the access log (nor any other log line), while the URL still
// downloads the file. A query parameter that names a credential is
// blanked the same way, and the line lakegate writes in Caddy's place
// has Caddy's fields.
func TestAccessLogHidesCredentialURIs(t *testing.T) {
	base, accessLog, otherLog := loggedSharingGateway(t)
	ctx := context.Background()
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, orderSchema)
	require.NoError(t, err)
	appendOrders(t, tbl, orders(0, 5))

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	r := c.do("POST", "/shares/demo/schemas/sales/tables/orders/query", nil, "{}")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	fileURL := r.lines(t)[2]["file"].(map[string]any)["url"].(string)
	u, err := url.Parse(fileURL)
	require.NoError(t, err)
	token := u.Path[strings.LastIndexByte(u.Path, '/')+1:]
	require.Greater(t, len(token), 20)
	data := download(t, fileURL) // no Authorization: the URL is the credential
	assert.Equal(t, orders(0, 5), sortOrders(parquetRows(t, data, false)))

	const querySecret = "q-secret-0f3a9c77"
	r = c.do("GET", "/shares?maxResults=5&access_token="+querySecret+"&X-Amz-Signature="+querySecret+"2", nil, "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	lines := accessLines(t, accessLog)
	file := accessLineFor(t, lines, "/delta-sharing/files/")
	req := file["request"].(map[string]any)
	assert.Equal(t, "/delta-sharing/files/REDACTED?sp=r", req["uri"])
	assert.Equal(t, "GET", req["method"])
	assert.InDelta(t, float64(http.StatusOK), file["status"], 0)
	assert.InDelta(t, float64(len(data)), file["size"], 0)
	assert.Equal(t, "handled request", file["msg"])
	assert.Equal(t, "http.log.access", file["logger"])
	assert.Equal(t, map[string]any{"api": "sharing", "operation": "getFile"}, file["lakegate"])

	listing := accessLineFor(t, lines, "/delta-sharing/shares?")
	assert.Equal(t, "/delta-sharing/shares?maxResults=5&access_token=REDACTED&X-Amz-Signature=REDACTED",
		listing["request"].(map[string]any)["uri"])
	assert.Equal(t, "recipient:demo/partner", listing["user_id"])

	// Caddy's own line (the query, with no credential in its URI) and
	// lakegate's have the same fields.
	query := accessLineFor(t, lines, "/delta-sharing/shares/demo/schemas/sales/tables/orders/query")
	assert.Equal(t, keys(query), keys(file))
	assert.Equal(t, keys(query["request"]), keys(file["request"]))
	assert.Equal(t, []any{"REDACTED"}, listing["request"].(map[string]any)["headers"].(map[string]any)["Authorization"])
	assert.Len(t, lines, 3+countURIs(lines, "/v1/"), "one line per request, none twice")

	for _, path := range []string{accessLog, otherLog} {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), token, "%s holds the file URL's token", path)
		assert.NotContains(t, string(raw), querySecret, "%s holds a query credential", path)
	}
}

func keys(v any) []string {
	return slices.Sorted(maps.Keys(v.(map[string]any)))
}

func countURIs(lines []map[string]any, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l["request"].(map[string]any)["uri"].(string), prefix) {
			n++
		}
	}
	return n
}
