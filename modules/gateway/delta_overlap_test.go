package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// metadataProxy forwards to backend, answering LoadTable of a table named
// in damage with its metadata changed by that function: metadata a backend
// stored that way passes through the Iceberg door as bytes.
func metadataProxy(t *testing.T, backend string, damage map[string]func(md map[string]any)) *httptest.Server {
	edits := map[string]func(load map[string]any){}
	for name, f := range damage {
		edits[name] = func(load map[string]any) { f(load["metadata"].(map[string]any)) }
	}
	return answerProxy(t, backend, edits)
}

// answerProxy forwards to backend, answering LoadTable of a table named
// in edits with the whole answer changed by that function (its ETag
// dropped, as the bytes are no longer the backend's).
func answerProxy(t *testing.T, backend string, edits map[string]func(load map[string]any)) *httptest.Server {
	t.Helper()
	target, err := url.Parse(backend)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		i := strings.LastIndex(resp.Request.URL.Path, "/tables/")
		if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK || i < 0 {
			return nil
		}
		f := edits[resp.Request.URL.Path[i+len("/tables/"):]]
		if f == nil {
			return nil
		}
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var load map[string]any
		if err := json.Unmarshal(raw, &load); err != nil {
			return err
		}
		f(load)
		out, err := json.Marshal(load)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(out))
		resp.ContentLength = int64(len(out))
		resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
		resp.Header.Del("ETag")
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

// duplicateSnapshot lists the first snapshot twice, which iceberg-go (and
// so lakegate's own parse) refuses.
func duplicateSnapshot(md map[string]any) {
	snaps := md["snapshots"].([]any)
	md["snapshots"] = append(snaps, snaps[0])
}

// A table lakegate cannot parse (a duplicate snapshot id) does not break
// the creates of its schema: the overlap check reads only its location,
// so a create elsewhere succeeds and one inside it is still refused.
func TestDeltaCreateBesideUnparseableTable(t *testing.T) {
	ctx := context.Background()
	cfg, dir := embeddedtest.Config(t, embedded.SQLite), t.TempDir()
	cfg.AllowedLocations = []string{dir}
	backend := embeddedtest.Serve(t, cfg)
	// The table and its snapshot are written straight to the backend.
	direct := embeddedtest.Client(t, backend.URL)
	require.NoError(t, direct.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	broken, err := direct.CreateTable(ctx, table.Identifier{"sales", "broken"}, embeddedtest.EventSchema,
		catalog.WithLocation("file://"+filepath.Join(dir, "broken")))
	require.NoError(t, err)
	appendEvents(t, broken, 0, 3)

	// A table whose metadata names no location at all, in its own schema.
	require.NoError(t, direct.CreateNamespace(ctx, table.Identifier{"other"}, nil))
	_, err = direct.CreateTable(ctx, table.Identifier{"other", "lost"}, embeddedtest.EventSchema,
		catalog.WithLocation("file://"+filepath.Join(dir, "lost")))
	require.NoError(t, err)

	proxy := metadataProxy(t, backend.URL, map[string]func(map[string]any){
		"broken": duplicateSnapshot,
		"lost":   func(md map[string]any) { delete(md, "location") },
	})
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{remote("lake", proxy.URL, nil)}},
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))

	code, out := call(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/broken", nil)
	require.Equal(t, http.StatusOK, code, "the Iceberg door passes the bytes: %v", out)
	code, out = call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/broken", nil)
	require.Equal(t, http.StatusBadGateway, code, "lakegate cannot parse it: %v", out)
	require.Contains(t, errMessage(out), "duplicate snapshot ID")

	code, out = createEvents(t, base, dir, "events", nil)
	assert.Equal(t, http.StatusOK, code, "a create apart from the broken table: %v", out)
	inside := "file://" + filepath.Join(dir, "broken", "sub")
	code, out = createEvents(t, base, dir, "inside", map[string]any{"location": inside})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, `location "`+inside+`" overlaps table sales.broken at "file://`+filepath.Join(dir, "broken")+`"`, errMessage(out))

	// Where even the location cannot be read, the new location might lie
	// inside that table: the create is refused, naming the table.
	code, out = call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/other/tables", map[string]any{
		"name": "t", "location": "file://" + filepath.Join(dir, "t"), "table-type": "EXTERNAL",
		"columns": json.RawMessage(eventsColumns), "protocol": map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties": map[string]string{}, "last-commit-timestamp-ms": 1,
	})
	assert.Equal(t, http.StatusBadGateway, code, "%v", out)
	assert.Contains(t, errMessage(out), "table other.lost has no readable location")
}
