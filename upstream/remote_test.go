package upstream_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// --- test harness -----------------------------------------------------------

// frontDoor is a minimal gateway front door: it parses the client's path
// into a route and hands it to the backend, as the gateway does.
func frontDoor(t *testing.T, b upstream.Backend) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, err := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), icerest.UnitSeparator)
		if err != nil {
			icerest.WriteError(w, r, err)
			return
		}
		b.Serve(w, r, unvetted(r, rt))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newTestRemote builds a Remote on url; edit adjusts its configuration.
func newTestRemote(t *testing.T, url string, edit func(*upstream.RemoteConfig)) *upstream.Remote {
	t.Helper()
	cfg := upstream.RemoteConfig{URL: url}
	if edit != nil {
		edit(&cfg)
	}
	r, err := upstream.NewRemote("test", cfg, nil)
	require.NoError(t, err)
	return r
}

// gateway is a Remote on url behind a front door; it returns the front
// door's URL.
func gateway(t *testing.T, url string, edit func(*upstream.RemoteConfig)) string {
	t.Helper()
	return frontDoor(t, newTestRemote(t, url, edit)).URL
}

// upConfig is the /v1/config answer of the fake backends.
const upConfig = `{"defaults":{},"overrides":{"prefix":"up"}}`

// fakeBackend answers GET /v1/config with prefix "up" and hands every
// other request to h.
func fakeBackend(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/config" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, upConfig)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// answer is the gateway's reply as a test sees it.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
	Err    struct {
		Code    int    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
}

// call sends one request to the gateway. hdr holds extra request headers
// as name, value pairs.
func call(t *testing.T, method, url, body string, hdr ...string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode, Header: resp.Header}
	a.Body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode >= 400 && len(a.Body) > 0 {
		var m struct {
			Error *json.RawMessage `json:"error"`
		}
		require.NoError(t, json.Unmarshal(a.Body, &m), "error body is not JSON: %s", a.Body)
		require.NotNil(t, m.Error, "error body is not in the Iceberg error model: %s", a.Body)
		require.NoError(t, json.Unmarshal(*m.Error, &a.Err))
	}
	return a
}

// wantError checks an Iceberg error answer: status, error.code, error.type.
func wantError(t *testing.T, a answer, status int, typ string) {
	t.Helper()
	assert.Equal(t, status, a.Status, "status; body %s", a.Body)
	assert.Equal(t, status, a.Err.Code, "error.code; body %s", a.Body)
	assert.Equal(t, typ, a.Err.Type, "error.type; body %s", a.Body)
	assert.Equal(t, "application/json", a.Header.Get("Content-Type"))
}

const (
	loadTablePath = "/v1/gw/namespaces/db/tables/t"
	commitBody    = `{"requirements":[],"updates":[]}`
	commitTxPath  = "/v1/gw/transactions/commit"
	commitTxBody  = `{"table-changes":[]}`
	tableOKBody   = `{"metadata-location":"s3://b/m.json","metadata":` + minimalMetadata + `}`
	// anyOKBody carries what every operation the recorder sees must return.
	anyOKBody      = `{"metadata-location":"s3://b/m.json","metadata":` + minimalMetadata + `,"namespace":["db"]}`
	noSuchTableMsg = "Table does not exist: db.t"
	tableUUID      = "9c12d441-03fe-4693-9a96-a0705ddf69c1"
	// minimalMetadata is the least table metadata the spec allows.
	minimalMetadata = `{"format-version":2,"table-uuid":"` + tableUUID + `"}`
)

// cutBody declares a longer body than it writes, then drops the connection.
func cutBody(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "1000")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"metadata-loc`)
	w.(http.Flusher).Flush()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// hangUp drops the connection without answering.
func hangUp(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// sleepy waits for d (or the request's end) before answering.
func sleepy(d time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, tableOKBody)
	}
}

func status(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// --- bad inputs -------------------------------------------------------------

func TestRemoteBadInputs(t *testing.T) {
	t.Parallel()
	type tc struct {
		name     string
		method   string
		path     string
		body     string
		backend  http.HandlerFunc // nil: no backend listens at all
		edit     func(*upstream.RemoteConfig)
		status   int
		typ      string
		hits     int32 // requests the backend must see past /v1/config (-1: don't care)
		check    func(t *testing.T, a answer)
		noConfig bool // the backend's /v1/config misbehaves too
	}
	iceErr404 := `{"error":{"message":"` + noSuchTableMsg + `","type":"NoSuchTableException","code":404}}`
	iceErr := func(code int, typ string) string {
		return `{"error":{"message":"m","type":"` + typ + `","code":` + itoa(code) + `}}`
	}
	short := func(c *upstream.RemoteConfig) { c.ResponseHeaderTimeout = duration.Duration(200 * time.Millisecond) }
	cases := []tc{
		{name: "non-JSON 200 on loadTable", method: "GET", path: loadTablePath,
			backend: status(200, "application/json", "<html>hello</html>"),
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "non-JSON 200 on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(200, "text/html", "<html>hello</html>"),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "truncated body on loadTable", method: "GET", path: loadTablePath,
			backend: func(w http.ResponseWriter, _ *http.Request) { cutBody(w) },
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "truncated body on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: func(w http.ResponseWriter, _ *http.Request) { cutBody(w) },
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "500 HTML on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(500, "text/html", "<html><body>Internal Server Error</body></html>"),
			status:  http.StatusInternalServerError, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "500 HTML on loadTable", method: "GET", path: loadTablePath,
			backend: status(500, "text/html", "<html><body>Internal Server Error</body></html>"),
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "500 Iceberg error on loadTable passes", method: "GET", path: loadTablePath,
			backend: status(500, "application/json", iceErr(500, icerest.InternalServerError)),
			status:  http.StatusInternalServerError, typ: icerest.InternalServerError, hits: 1},
		{name: "502 on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(502, "application/json", iceErr(502, "BadGatewayException")),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "504 on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(504, "text/plain", "gateway timeout"),
			status:  http.StatusGatewayTimeout, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "502 on commitTransaction", method: "POST", path: commitTxPath, body: commitTxBody,
			backend: status(502, "text/plain", ""),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "504 on commitTransaction", method: "POST", path: commitTxPath, body: commitTxBody,
			backend: status(504, "application/json", iceErr(504, "GatewayTimeoutException")),
			status:  http.StatusGatewayTimeout, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "404 Iceberg error passes unchanged", method: "GET", path: loadTablePath,
			backend: status(404, "application/json", iceErr404),
			status:  http.StatusNotFound, typ: icerest.NoSuchTable, hits: 1,
			check: func(t *testing.T, a answer) {
				assert.Equal(t, noSuchTableMsg, a.Err.Message)
				assert.JSONEq(t, iceErr404, string(a.Body))
			}},
		{name: "409 Iceberg error on commit passes", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(409, "application/json", iceErr(409, icerest.CommitFailed)),
			status:  http.StatusConflict, typ: icerest.CommitFailed, hits: 1},
		{name: "400 non-JSON", method: "GET", path: loadTablePath,
			backend: status(400, "text/plain", "bad request, friend"),
			status:  http.StatusBadRequest, typ: icerest.BadRequest, hits: 1,
			check: func(t *testing.T, a answer) { assert.Contains(t, a.Err.Message, "bad request, friend") }},
		{name: "400 non-JSON on commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(400, "text/plain", "nope"),
			status:  http.StatusBadRequest, typ: icerest.BadRequest, hits: 1},
		// 501 means the backend does not implement the operation: nothing
		// was applied, whatever the body.
		{name: "501 text on updateTable", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(501, "text/plain", "not implemented"),
			status:  http.StatusNotImplemented, typ: icerest.UnsupportedOperation, hits: 1},
		{name: "501 empty on createView", method: "POST", path: "/v1/gw/namespaces/db/views", body: `{}`,
			backend: status(501, "application/json", ""),
			status:  http.StatusNotImplemented, typ: icerest.UnsupportedOperation, hits: 1},
		// A success without what the operation must return is no success.
		{name: "204 without body on createView", method: "POST", path: "/v1/gw/namespaces/db/views", body: `{}`,
			backend: status(204, "application/json", ""),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1,
			check: func(t *testing.T, a answer) { assert.Contains(t, a.Err.Message, `"metadata-location"`) }},
		{name: "204 without body on createTable", method: "POST", path: "/v1/gw/namespaces/db/tables", body: `{}`,
			backend: status(204, "application/json", ""),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		// Lenient but meaningful: null lists are empty ones, in the spec's form.
		{name: "updated null on updateProperties", method: "POST", path: "/v1/gw/namespaces/db/properties", body: `{}`,
			backend: status(200, "application/json", `{"updated":null,"removed":["c"],"missing":["zz"]}`),
			status:  http.StatusOK, hits: 1,
			check: func(t *testing.T, a answer) {
				assert.JSONEq(t, `{"updated":[],"removed":["c"],"missing":["zz"]}`, string(a.Body))
			}},
		{name: "updated missing on updateProperties", method: "POST", path: "/v1/gw/namespaces/db/properties", body: `{}`,
			backend: status(200, "application/json", `{"removed":[]}`),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1,
			check: func(t *testing.T, a answer) { assert.Contains(t, a.Err.Message, `"updated"`) }},
		// An answer whose metadata is not table metadata is never served.
		{name: "loadTable with garbage metadata", method: "GET", path: loadTablePath,
			backend: status(200, "application/json", `{"metadata-location":"file:///evil/m.json","metadata":{"garbage":true}}`),
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1,
			check: func(t *testing.T, a answer) { assert.Contains(t, a.Err.Message, "format-version") }},
		{name: "loadTable with mistyped metadata", method: "GET", path: loadTablePath,
			backend: status(200, "application/json", `{"metadata-location":"s3://b/m.json","metadata":{"format-version":2,"table-uuid":"`+
				tableUUID+`","snapshots":[1,2]}}`),
			status: http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1,
			check: func(t *testing.T, a answer) { assert.Contains(t, a.Err.Message, "snapshots") }},
		{name: "loadTable with a table-uuid that is no UUID", method: "GET", path: loadTablePath,
			backend: status(200, "application/json", `{"metadata-location":"s3://b/m.json","metadata":{"format-version":2,"table-uuid":"x"}}`),
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "commit answered with garbage metadata", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(200, "application/json", `{"metadata-location":"s3://b/m.json","metadata":{"garbage":true}}`),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "empty type on a 422 gets the spec's name", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(422, "application/json", `{"error":{"message":"no","type":"","code":422}}`),
			status:  http.StatusUnprocessableEntity, typ: icerest.UnprocessableEntity, hits: 1},
		{name: "loadTable without metadata", method: "GET", path: loadTablePath,
			backend: status(200, "application/json", `{"metadata-location":"s3://b/m.json","metadata-log":[]}`),
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "commit answered without metadata-location", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(200, "application/json", `{"metadata":{}}`),
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		// Nessie's error bodies carry "type": "": the message is kept, the
		// type comes from the operation.
		{name: "empty type on a namespace drop", method: "DELETE", path: "/v1/gw/namespaces/db",
			backend: status(409, "application/json", `{"error":{"message":"Namespace 'db' is not empty","type":"","code":409}}`),
			status:  http.StatusConflict, typ: icerest.NamespaceNotEmpty, hits: 1,
			check: func(t *testing.T, a answer) { assert.Equal(t, "Namespace 'db' is not empty", a.Err.Message) }},
		{name: "empty type on a table load", method: "GET", path: loadTablePath,
			backend: status(404, "application/json", `{"error":{"message":"Table 'db.t' does not exist","type":"","code":404}}`),
			status:  http.StatusNotFound, typ: icerest.NoSuchTable, hits: 1},
		{name: "empty type on a commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(409, "application/json", `{"error":{"message":"conflict","type":"","code":409}}`),
			status:  http.StatusConflict, typ: icerest.CommitFailed, hits: 1},
		{name: "empty 404 on a read gets the error model", method: "GET", path: loadTablePath,
			backend: status(404, "application/json", ""),
			status:  http.StatusNotFound, typ: icerest.NotFound, hits: 1},
		{name: "hang-up mid-commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: hangUp,
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "hang-up mid-commitTransaction", method: "POST", path: commitTxPath, body: commitTxBody,
			backend: hangUp,
			status:  http.StatusBadGateway, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "hang-up on a read", method: "GET", path: loadTablePath,
			backend: hangUp,
			status:  http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: -1},
		{name: "slow commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: sleepy(2 * time.Second), edit: short,
			status: http.StatusGatewayTimeout, typ: icerest.CommitStateUnknown, hits: 1},
		{name: "slow read", method: "GET", path: loadTablePath,
			backend: sleepy(2 * time.Second), edit: short,
			status: http.StatusGatewayTimeout, typ: icerest.ServiceUnavailable, hits: 1},
		{name: "backend down on a read", method: "GET", path: loadTablePath,
			status: http.StatusServiceUnavailable, typ: icerest.ServiceUnavailable, hits: -1,
			check: func(t *testing.T, a answer) { assert.Equal(t, "1", a.Header.Get("Retry-After")) }},
		{name: "backend down on a commit", method: "POST", path: loadTablePath, body: commitBody,
			status: http.StatusServiceUnavailable, typ: icerest.ServiceUnavailable, hits: -1,
			check: func(t *testing.T, a answer) { assert.Equal(t, "1", a.Header.Get("Retry-After")) }},
		// The commit never left the gateway: its /v1/config fetch timed
		// out first, so the failure is definite.
		{name: "config times out before a commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: sleepy(2 * time.Second), noConfig: true, edit: short,
			status: http.StatusGatewayTimeout, typ: icerest.ServiceUnavailable, hits: 0},
		{name: "config not JSON before a commit", method: "POST", path: loadTablePath, body: commitBody,
			backend: status(200, "text/html", "<html>"), noConfig: true,
			status: http.StatusBadGateway, typ: icerest.ServiceUnavailable, hits: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			url := ""
			switch {
			case c.backend == nil:
				url = closedURL(t)
			case c.noConfig:
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/v1/config" {
						hits.Add(1)
					}
					c.backend(w, r)
				}))
				t.Cleanup(srv.Close)
				url = srv.URL
			default:
				url = fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
					hits.Add(1)
					c.backend(w, r)
				}).URL
			}
			gw := gateway(t, url, c.edit)
			a := call(t, c.method, gw+c.path, c.body)
			if c.status < 400 {
				assert.Equal(t, c.status, a.Status, "%s", a.Body)
			} else {
				wantError(t, a, c.status, c.typ)
			}
			if c.hits >= 0 {
				assert.Equal(t, c.hits, hits.Load(), "backend hits")
			}
			if c.check != nil {
				c.check(t, a)
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// A backend that goes away once its config is cached: reads and writes
// both get 503 with Retry-After (the request never left the gateway).
func TestRemoteBackendGoesDown(t *testing.T) {
	t.Parallel()
	backend := fakeBackend(t, status(200, "application/json", tableOKBody))
	gw := gateway(t, backend.URL, nil)
	a := call(t, "GET", gw+loadTablePath, "")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	backend.Close()
	a = call(t, "GET", gw+loadTablePath, "")
	wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
	assert.Equal(t, "1", a.Header.Get("Retry-After"))
	a = call(t, "POST", gw+loadTablePath, commitBody)
	wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
	assert.Equal(t, "1", a.Header.Get("Retry-After"))
}

// --- path safety ------------------------------------------------------------

// recorder is a fake backend that records every request it gets.
type recorder struct {
	mu    sync.Mutex
	paths []string
	reqs  []*http.Request
	srv   *httptest.Server
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.paths = append(rec.paths, r.URL.EscapedPath())
		rec.reqs = append(rec.reqs, r.Clone(r.Context()))
		rec.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, anyOKBody)
	})
	return rec
}

func (rec *recorder) take() ([]string, []*http.Request) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	p, r := rec.paths, rec.reqs
	rec.paths, rec.reqs = nil, nil
	return p, r
}

func TestRemotePathSafety(t *testing.T) {
	t.Parallel()
	rec := newRecorder(t, nil)
	gw := gateway(t, rec.srv.URL, nil)
	forwarded := []struct{ method, path, want string }{
		{"GET", "/v1/gw/namespaces/db/tables/a%2Fb", "/v1/up/namespaces/db/tables/a%2Fb"},
		{"GET", "/v1/gw/namespaces/db/tables/..%2F..%2Fconfig", "/v1/up/namespaces/db/tables/..%2F..%2Fconfig"},
		{"DELETE", "/v1/gw/namespaces/db/tables/..%2F..%2F..%2Fdb", "/v1/up/namespaces/db/tables/..%2F..%2F..%2Fdb"},
		{"GET", "/v1/gw/namespaces/a%1Fb/tables/t", "/v1/up/namespaces/a%1Fb/tables/t"},
		{"GET", "/v1/gw/namespaces/a%2F..%1F..%2Fb/tables/%2E%2E%2Fx", "/v1/up/namespaces/a%2F..%1F..%2Fb/tables/..%2Fx"},
		{"GET", "/v1/gw/namespaces/a%1Fb%1Fc", "/v1/up/namespaces/a%1Fb%1Fc"},
		{"GET", "/v1/gw/namespaces/db%3Fx%3D1%23f/views/v%20w", "/v1/up/namespaces/db%3Fx=1%23f/views/v%20w"},
		{"POST", "/v1/gw/namespaces/a%2Fb/tables/c%2Fd/metrics", "/v1/up/namespaces/a%2Fb/tables/c%2Fd/metrics"},
	}
	for _, f := range forwarded {
		body := ""
		if f.method == "POST" {
			body = `{}`
		}
		a := call(t, f.method, gw+f.path, body)
		assert.Less(t, a.Status, 300, "%s %s: %s", f.method, f.path, a.Body)
		paths, _ := rec.take()
		if assert.Len(t, paths, 1, "%s %s", f.method, f.path) {
			assert.Equal(t, f.want, paths[0], "%s %s", f.method, f.path)
		}
	}
	// Dot-segment names ("..", "%2E%2E") are not refused here: the
	// gateway's front door rejects them before a backend is chosen
	// (modules/gateway checkNames).

	// Whatever reached the backend stayed under its prefix, with no
	// segment added or navigated.
	for _, f := range forwarded {
		assert.True(t, strings.HasPrefix(f.want, "/v1/up/namespaces/"), f.want)
		for seg := range strings.SplitSeq(f.want, "/") {
			assert.NotContains(t, []string{".", ".."}, seg, f.want)
		}
	}

	// The parent query parameter is re-encoded for the backend, never
	// spliced into its path.
	a := call(t, "GET", gw+"/v1/gw/namespaces?parent=a%1F..%2Fb&pageToken=x%26y", "")
	assert.Equal(t, 200, a.Status, "%s", a.Body)
	paths, reqs := rec.take()
	require.Len(t, paths, 1)
	assert.Equal(t, "/v1/up/namespaces", paths[0])
	assert.Equal(t, "a\x1f../b", reqs[0].URL.Query().Get("parent"))
	assert.Equal(t, "x&y", reqs[0].URL.Query().Get("pageToken"))

	// RemoteConfig.Prefix overrides the backend's own prefix; it is raw path
	// text, inserted as is.
	gw2 := gateway(t, rec.srv.URL, func(c *upstream.RemoteConfig) { c.Prefix = "alt/pfx" })
	a = call(t, "GET", gw2+"/v1/gw/namespaces/db/tables/t", "")
	assert.Equal(t, 200, a.Status, "%s", a.Body)
	paths, _ = rec.take()
	assert.Equal(t, []string{"/v1/alt/pfx/namespaces/db/tables/t"}, paths)
}

// A backend under a base path keeps it, and the base path's own escaping.
func TestRemoteBasePath(t *testing.T) {
	t.Parallel()
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/v1/config") {
			_, _ = io.WriteString(w, upConfig)
			return
		}
		_, _ = io.WriteString(w, tableOKBody)
	}))
	t.Cleanup(srv.Close)
	gw := gateway(t, srv.URL+"/iceberg/", nil)
	a := call(t, "GET", gw+"/v1/gw/namespaces/db/tables/a%2Fb", "")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	assert.Equal(t, []string{"/iceberg/v1/config", "/iceberg/v1/up/namespaces/db/tables/a%2Fb"}, got)
}

// --- headers ----------------------------------------------------------------

func TestRemoteHeaders(t *testing.T) {
	t.Parallel()
	clientHeaders := []string{
		"Authorization", "Bearer client-secret-token",
		"Cookie", "session=client-cookie",
		"Proxy-Authorization", "Basic cHJveHk6cHc=",
		"X-Forwarded-For", "10.0.0.1",
		"X-Some-Client-Header", "private",
		"Idempotency-Key", "0190b7e4-7c5c-7f7e-8d2e-5a3b1c2d3e4f",
		"If-None-Match", `"etag-1"`,
		"X-Iceberg-Access-Delegation", "vended-credentials",
		"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"tracestate", "congo=t61rcWkgMzE",
	}
	forwarded := map[string]string{
		"If-None-Match":               `"etag-1"`,
		"X-Iceberg-Access-Delegation": "vended-credentials",
		"Traceparent":                 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"Tracestate":                  "congo=t61rcWkgMzE",
	}
	// A backend that does not advertise idempotency-key-lifetime is not
	// sent the key (TestRemoteForwardsDerivedKeys).
	never := []string{"Cookie", "Proxy-Authorization", "X-Forwarded-For", "X-Some-Client-Header", "Idempotency-Key"}

	for _, mode := range []string{upstream.AuthNone, upstream.AuthPassthrough} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder(t, nil)
			gw := gateway(t, rec.srv.URL, func(c *upstream.RemoteConfig) { c.Auth.Mode = mode })
			for _, m := range []struct{ method, body string }{{"GET", ""}, {"POST", commitBody}} {
				a := call(t, m.method, gw+loadTablePath, m.body, clientHeaders...)
				require.Equal(t, 200, a.Status, "%s", a.Body)
				_, reqs := rec.take()
				require.Len(t, reqs, 1)
				h := reqs[0].Header
				for k, v := range forwarded {
					assert.Equal(t, v, h.Get(k), "%s %s", m.method, k)
				}
				for _, k := range never {
					assert.Empty(t, h.Values(k), "%s %s reached the backend", m.method, k)
				}
				if mode == upstream.AuthPassthrough {
					assert.Equal(t, "Bearer client-secret-token", h.Get("Authorization"))
				} else {
					assert.Empty(t, h.Values("Authorization"), "the client's Authorization reached the backend")
				}
				if m.method == "POST" {
					assert.Equal(t, "application/json", h.Get("Content-Type"))
				}
			}
		})
	}

	t.Run("hop-by-hop response headers", func(t *testing.T) {
		t.Parallel()
		rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Connection", "X-Hop-Custom")
			h.Set("X-Hop-Custom", "conn-scoped")
			h.Set("Keep-Alive", "timeout=5, max=1000")
			h.Set("Proxy-Authenticate", `Basic realm="backend"`)
			h.Set("Proxy-Connection", "keep-alive")
			h.Set("Upgrade", "h2c")
			h.Set("Set-Cookie", "backend-session=1")
			h.Set("ETag", `"v7"`)
			h.Set("X-Backend-Kept", "yes")
			_, _ = io.WriteString(w, tableOKBody)
		})
		gw := gateway(t, rec.srv.URL, nil)
		a := call(t, "GET", gw+loadTablePath, "")
		require.Equal(t, 200, a.Status, "%s", a.Body)
		for _, k := range []string{"Connection", "X-Hop-Custom", "Keep-Alive", "Proxy-Authenticate",
			"Proxy-Connection", "Upgrade", "Set-Cookie"} {
			assert.Empty(t, a.Header.Values(k), "%s reached the client", k)
		}
		assert.Equal(t, `"v7"`, a.Header.Get("ETag"))
		assert.Equal(t, "yes", a.Header.Get("X-Backend-Kept"))
		assert.JSONEq(t, tableOKBody, string(a.Body))
	})
}

// --- breaker ----------------------------------------------------------------

func TestRemoteBreaker(t *testing.T) {
	t.Parallel()
	var mode, hits atomic.Int32 // mode: the status the backend answers
	mode.Store(200)
	// A backend in trouble answers its /v1/config (the breaker's probe)
	// with the same 502/503/504; its 4xx and 500 are answers to requests.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		code := int(mode.Load())
		if r.URL.Path == "/v1/config" {
			if code >= 502 {
				w.WriteHeader(code)
			}
			_, _ = io.WriteString(w, upConfig)
			return
		}
		hits.Add(1)
		switch code {
		case 200:
			_, _ = io.WriteString(w, tableOKBody)
		default:
			w.WriteHeader(code)
			_, _ = io.WriteString(w, `{"error":{"message":"m","type":"T","code":`+itoa(code)+`}}`)
		}
	}))
	t.Cleanup(backend.Close)
	gw := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
		c.Breaker = upstream.Breaker{Failures: 3, Timeout: duration.Duration(500 * time.Millisecond)}
	})
	get := func(want int) answer {
		t.Helper()
		a := call(t, "GET", gw+loadTablePath, "")
		require.Equal(t, want, a.Status, "%s", a.Body)
		return a
	}
	wantOpen := func() {
		t.Helper()
		before := hits.Load()
		a := get(http.StatusServiceUnavailable)
		wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
		assert.Equal(t, "1", a.Header.Get("Retry-After"))
		assert.Contains(t, a.Err.Message, "circuit breaker open")
		// A write while open never left: a definite failure.
		a = call(t, "POST", gw+loadTablePath, commitBody)
		wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
		assert.Equal(t, "1", a.Header.Get("Retry-After"))
		assert.Equal(t, before, hits.Load(), "the backend was called while the breaker was open")
	}

	get(200)
	// 4xx answers never trip it.
	mode.Store(404)
	for range 10 {
		get(404)
	}
	mode.Store(409)
	for range 5 {
		a := call(t, "POST", gw+loadTablePath, commitBody)
		require.Equal(t, 409, a.Status, "%s", a.Body)
	}
	assert.Equal(t, int32(16), hits.Load())
	// A 500 is the backend's answer to that request (often to bad input):
	// on writes it never counts, on reads not by default.
	mode.Store(500)
	for range 5 {
		a := call(t, "POST", gw+loadTablePath, commitBody)
		require.Equal(t, 500, a.Status, "%s", a.Body)
		get(500)
	}
	assert.Equal(t, int32(26), hits.Load())
	// Failures must be consecutive: a 4xx in between is a success.
	mode.Store(503)
	get(503)
	get(503)
	mode.Store(404)
	get(404)
	mode.Store(502)
	get(502)
	get(502)
	assert.Equal(t, int32(31), hits.Load())
	// The third consecutive 502/503/504 trips it.
	mode.Store(504)
	get(504)
	assert.Equal(t, int32(32), hits.Load())
	wantOpen()

	// After the timeout one probe goes through; a failing probe reopens it.
	time.Sleep(600 * time.Millisecond)
	get(504)
	assert.Equal(t, int32(33), hits.Load())
	wantOpen()

	// A healthy probe closes it.
	time.Sleep(600 * time.Millisecond)
	mode.Store(200)
	get(200)
	assert.Equal(t, int32(34), hits.Load())
	for range 3 {
		get(200)
	}
	assert.Equal(t, int32(37), hits.Load())

	// count_read_500: 500s to reads count too (writes still never do).
	strict := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
		c.Breaker = upstream.Breaker{Failures: 3, Timeout: duration.Duration(time.Minute), CountRead500: true}
	})
	mode.Store(500)
	for range 5 {
		a := call(t, "POST", strict+loadTablePath, commitBody)
		require.Equal(t, 500, a.Status, "%s", a.Body)
	}
	for range 3 {
		a := call(t, "GET", strict+loadTablePath, "")
		require.Equal(t, 500, a.Status, "%s", a.Body)
	}
	a := call(t, "GET", strict+loadTablePath, "")
	wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
	assert.Contains(t, a.Err.Message, "circuit breaker open")
}

// Timeouts and dropped connections count as failures too.
func TestRemoteBreakerConnectionFailures(t *testing.T) {
	t.Parallel()
	var hits, configs atomic.Int32
	// It answers its first /v1/config, then drops every connection.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" && configs.Add(1) == 1 {
			_, _ = io.WriteString(w, upConfig)
			return
		}
		if r.URL.Path != "/v1/config" {
			hits.Add(1)
		}
		hangUp(w, r)
	}))
	t.Cleanup(backend.Close)
	gw := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
		c.Breaker = upstream.Breaker{Failures: 2, Timeout: duration.Duration(time.Minute)}
	})
	a := call(t, "POST", gw+loadTablePath, commitBody)
	wantError(t, a, http.StatusBadGateway, icerest.CommitStateUnknown)
	a = call(t, "POST", gw+loadTablePath, commitBody)
	wantError(t, a, http.StatusBadGateway, icerest.CommitStateUnknown)
	require.Equal(t, int32(2), hits.Load())
	a = call(t, "POST", gw+loadTablePath, commitBody)
	wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
	assert.Equal(t, "60", a.Header.Get("Retry-After"))
	assert.Equal(t, int32(2), hits.Load())
}

// A hung backend fails reads fast (read_timeout) while writes get their own,
// longer bound; consecutive timeouts open the breaker.
func TestRemoteReadAndWriteTimeouts(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	backend := fakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		sleepy(400*time.Millisecond)(w, r)
	})
	gw := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
		c.ReadTimeout = duration.Duration(100 * time.Millisecond)
		c.WriteTimeout = duration.Duration(5 * time.Second)
		c.Breaker = upstream.Breaker{Failures: 3, Timeout: duration.Duration(time.Minute)}
	})
	a := call(t, "POST", gw+loadTablePath, commitBody)
	require.Equal(t, http.StatusOK, a.Status, "a write waits for its own timeout: %s", a.Body)
	for range 3 {
		a = call(t, "GET", gw+loadTablePath, "")
		wantError(t, a, http.StatusGatewayTimeout, icerest.ServiceUnavailable)
	}
	before := hits.Load()
	a = call(t, "GET", gw+loadTablePath, "")
	wantError(t, a, http.StatusServiceUnavailable, icerest.ServiceUnavailable)
	assert.Contains(t, a.Err.Message, "circuit breaker open")
	assert.Equal(t, before, hits.Load(), "the open breaker kept the read from the backend")
}

// The breaker's opening and closing are logged at warn, for the
// operator; its half-open probing is not.
func TestRemoteBreakerTransitionsLogged(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"m","type":"T","code":503}}`)
			return
		}
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, upConfig)
			return
		}
		_, _ = io.WriteString(w, tableOKBody)
	}))
	t.Cleanup(backend.Close)
	core, logs := observer.New(zap.InfoLevel)
	r, err := upstream.NewRemote("test", upstream.RemoteConfig{URL: backend.URL,
		Breaker: upstream.Breaker{Failures: 2, Timeout: duration.Duration(200 * time.Millisecond)}}, zap.New(core))
	require.NoError(t, err)
	gw := frontDoor(t, r).URL
	for range 2 {
		call(t, "GET", gw+loadTablePath, "")
	}
	opened := logs.FilterMessageSnippet("breaker opened").All()
	require.Len(t, opened, 1, "%v", logs.All())
	assert.Equal(t, zap.WarnLevel, opened[0].Level)

	down.Store(false)
	require.Eventually(t, func() bool {
		return call(t, "GET", gw+loadTablePath, "").Status == http.StatusOK
	}, 5*time.Second, 50*time.Millisecond)
	closed := logs.FilterMessageSnippet("breaker closed").All()
	require.Len(t, closed, 1, "%v", logs.All())
	assert.Equal(t, zap.WarnLevel, closed[0].Level)
	assert.Equal(t, "half-open", closed[0].ContextMap()["from"])
	assert.Equal(t, 2, logs.FilterMessageSnippet("circuit breaker").Len(), "nothing logged for half-open")
}

// A backend that dedupes keys itself (it advertises
// idempotency-key-lifetime) is sent a key derived from the principal, the
// catalog and the client's key: the same for a retry, never the client's
// own, and different for another principal using the same key (the backend
// sees every caller as lakegate's one credential).
func TestRemoteForwardsDerivedKeys(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, `{"defaults":{},"overrides":{"prefix":"up"},"idempotency-key-lifetime":"PT30M"}`)
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		_, _ = io.WriteString(w, anyOKBody)
	}))
	t.Cleanup(srv.Close)
	remote := newTestRemote(t, srv.URL, nil)
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, err := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), icerest.UnitSeparator)
		require.Nil(t, err)
		r = r.WithContext(caller.With(r.Context(), caller.Caller{Principal: r.Header.Get("X-Principal")}))
		remote.Serve(w, r, unvetted(r, rt))
	}))
	t.Cleanup(door.Close)
	const key = "0190b7e4-7c5c-7f7e-8d2e-5a3b1c2d3e4f"
	for _, who := range []string{"alice", "alice", "bob"} {
		a := call(t, "POST", door.URL+loadTablePath, commitBody, "Idempotency-Key", key, "X-Principal", who)
		require.Equal(t, 200, a.Status, "%s", a.Body)
	}
	require.Len(t, keys, 3)
	for _, k := range keys {
		u, err := uuid.Parse(k)
		require.NoError(t, err, k)
		assert.Equal(t, uuid.Version(7), u.Version())
		assert.NotEqual(t, key, k, "the client's own key reached the backend")
	}
	assert.Equal(t, keys[0], keys[1], "a retry is sent the same key")
	assert.NotEqual(t, keys[0], keys[2], "two principals' keys collide at the backend")
}

// One client cannot open the breaker for everyone: requests that crash the
// backend's handler (the connection drops) or get a 502 while the backend
// still answers its /v1/config are that request's own failures. Every
// other caller's reads go on.
func TestRemoteBreakerBlamesTheRequest(t *testing.T) {
	t.Parallel()
	var probes atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/v1/config":
			probes.Add(1)
			_, _ = io.WriteString(w, upConfig)
		case strings.Contains(string(body), "crash"):
			hangUp(w, r)
		case strings.Contains(string(body), "gateway"):
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"error":{"message":"upstream of the backend failed","type":"T","code":502}}`)
		default:
			_, _ = io.WriteString(w, anyOKBody)
		}
	}))
	t.Cleanup(backend.Close)
	gw := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
		c.Breaker = upstream.Breaker{Failures: 2, Timeout: duration.Duration(time.Minute)}
	})
	for i := range 5 {
		a := call(t, "POST", gw+"/v1/gw/namespaces", `{"namespace":["crash`+itoa(i)+`"]}`)
		wantError(t, a, http.StatusBadGateway, icerest.CommitStateUnknown)
		a = call(t, "POST", gw+"/v1/gw/namespaces", `{"namespace":["gateway`+itoa(i)+`"]}`)
		assert.Equal(t, http.StatusBadGateway, a.Status, "%s", a.Body)
	}
	a := call(t, "GET", gw+loadTablePath, "")
	assert.Equal(t, http.StatusOK, a.Status, "another caller's read was turned away: %s", a.Body)
	assert.Greater(t, probes.Load(), int32(1), "no probe decided the failures")
}

// A backend that quotes the credentials it got (its Authorization header,
// lakegate's configured secrets) in an error never shows them to a
// client: they are scrubbed, plain and JSON-escaped, as on the status
// page.
func TestRemoteErrorsCarryNoSecrets(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-backend-token<&>"
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/config" && r.URL.Query().Get("warehouse") == "refuse" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, "forbidden for "+r.Header.Get("Authorization"))
			return
		}
		if r.URL.Path == "/v1/config" {
			_, _ = io.WriteString(w, upConfig)
			return
		}
		quoted, _ := json.Marshal("rejected credentials " + r.Header.Get("Authorization"))
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":`+string(quoted)+`,"type":"ServerError","code":500}}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest) // a text body, not Iceberg's error model
		_, _ = io.WriteString(w, "bad request from "+r.Header.Get("Authorization"))
	}))
	t.Cleanup(backend.Close)
	bearer := func(c *upstream.RemoteConfig) { c.Auth = upstream.Auth{Mode: upstream.AuthBearer, Token: token} }
	gw := gateway(t, backend.URL, bearer)
	for _, a := range []answer{
		call(t, "GET", gw+loadTablePath, ""),
		call(t, "POST", gw+loadTablePath, commitBody),
		call(t, "GET", gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
			bearer(c)
			c.Warehouse = "refuse"
		})+loadTablePath, ""),
	} {
		assert.GreaterOrEqual(t, a.Status, 400)
		assert.NotContains(t, string(a.Body), "s3cr3t", "a backend credential reached the client")
		assert.Contains(t, string(a.Body), "[redacted]", "%s", a.Body)
	}
}

// A backend that quotes the credentials it got in another form than it
// got them (its JSON encoder's \u escapes, base64 of the header, a
// message cut short) does not get them to the client either.
func TestRemoteErrorsCarryNoEncodedSecrets(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-backend-token+/=&x"
	echoes := map[string]func(authz string) string{
		"\\u-escaped": func(authz string) string {
			var b strings.Builder
			for _, r := range authz {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
			return b.String()
		},
		"base64":     func(authz string) string { return base64.StdEncoding.EncodeToString([]byte(authz)) },
		"base64 url": func(authz string) string { return base64.RawURLEncoding.EncodeToString([]byte("was:" + authz)) },
		"cut":        func(authz string) string { return authz[:len(authz)-6] + "..." },
		"percent":    func(authz string) string { return url.QueryEscape(authz) },
	}
	for name, echo := range echoes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v1/config" {
					_, _ = io.WriteString(w, upConfig)
					return
				}
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":{"message":"rejected credentials `+echo(r.Header.Get("Authorization"))+
					`","type":"ServerError","code":500}}`)
			}))
			t.Cleanup(backend.Close)
			gw := gateway(t, backend.URL, func(c *upstream.RemoteConfig) {
				c.Auth = upstream.Auth{Mode: upstream.AuthBearer, Token: token}
			})
			a := call(t, "GET", gw+loadTablePath, "")
			assert.Equal(t, http.StatusInternalServerError, a.Status)
			assert.NotContains(t, string(a.Body), echo("Bearer "+token), "the echoed credential reached the client")
			assert.NotContains(t, string(a.Body), "s3cr3t")
			assert.Contains(t, string(a.Body), "rejected credentials [redacted]", "%s", a.Body)
		})
	}
}

// A write the backend's /v1/config does not list is refused with a 501
// UnsupportedOperationException and never sent. Unity Catalog OSS's
// Iceberg endpoint lists only reads, and its router answers a write with
// a text/plain 405 (which reached the client as type "HTTP405") or, for
// paths it has no route for, a 404 (which clients take for "no such
// namespace" or "no such table" although it exists). Reads it does not
// list (HEAD of a namespace) are still sent, and a backend that lists no
// endpoints gets every write.
func TestRemoteRefusesWritesTheBackendDoesNotList(t *testing.T) {
	t.Parallel()
	// Unity Catalog's /v1/config?warehouse=unity at c9ed6b14.
	const ucConfig = `{"defaults":{},"overrides":{"prefix":"catalogs/unity"},"endpoints":[` +
		`"GET /v1/{prefix}/namespaces","GET /v1/{prefix}/namespaces/{namespace}",` +
		`"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",` +
		`"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",` +
		`"GET /v1/{prefix}/namespaces/{namespace}/views/{view}",` +
		`"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",` +
		`"GET /v1/{prefix}/namespaces/{namespace}/tables"]}`
	var mu sync.Mutex
	var seen []string
	uc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/config" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, ucConfig)
			return
		}
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, anyOKBody)
		default: // Armeria's answer to a method its routes lack
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = io.WriteString(w, "Status: 405\nDescription: Method Not Allowed\n")
		}
	}))
	t.Cleanup(uc.Close)
	gw := gateway(t, uc.URL, nil)

	writes := []struct{ method, path, body, op string }{
		{"POST", "/v1/gw/namespaces", `{"namespace":["x"]}`, "createNamespace"},
		{"DELETE", "/v1/gw/namespaces/db", "", "dropNamespace"},
		{"POST", "/v1/gw/namespaces/db/properties", `{"updates":{"a":"b"}}`, "updateProperties"},
		{"POST", "/v1/gw/namespaces/db/tables", `{"name":"t","schema":{"type":"struct","fields":[]}}`, "createTable"},
		{"POST", "/v1/gw/namespaces/db/register", `{"name":"t","metadata-location":"s3://b/m.json"}`, "registerTable"},
		{"POST", loadTablePath, commitBody, "updateTable"},
		{"DELETE", loadTablePath, "", "dropTable"},
		{"POST", "/v1/gw/tables/rename", `{"source":{"namespace":["db"],"name":"t"},"destination":{"namespace":["db"],"name":"u"}}`, "renameTable"},
		{"POST", commitTxPath, commitTxBody, "commitTransaction"},
		{"POST", "/v1/gw/namespaces/db/views", `{"name":"v","schema":{"type":"struct","fields":[]},"view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"representations":[],"default-namespace":[]},"properties":{}}`, "createView"},
	}
	for _, wr := range writes {
		a := call(t, wr.method, gw+wr.path, wr.body)
		wantError(t, a, http.StatusNotImplemented, icerest.UnsupportedOperation)
		assert.Contains(t, a.Err.Message, wr.op, "%s %s", wr.method, wr.path)
		assert.NotContains(t, a.Err.Message, uc.URL, "the backend's address is the operator's")
	}
	mu.Lock()
	assert.Empty(t, seen, "a write the backend does not list reached it")
	mu.Unlock()

	// Reads, listed or not, are sent.
	assert.Equal(t, http.StatusOK, call(t, "GET", gw+loadTablePath, "").Status)
	assert.Equal(t, http.StatusOK, call(t, "HEAD", gw+"/v1/gw/namespaces/db", "").Status)
	mu.Lock()
	assert.Equal(t, []string{"GET /v1/catalogs/unity/namespaces/db/tables/t", "HEAD /v1/catalogs/unity/namespaces/db"}, seen)
	mu.Unlock()

	// A backend that lists no endpoints gets the write.
	rec := newRecorder(t, nil)
	a := call(t, "POST", gateway(t, rec.srv.URL, nil)+"/v1/gw/namespaces", `{"namespace":["x"]}`)
	assert.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
	paths, _ := rec.take()
	assert.Equal(t, []string{"/v1/up/namespaces"}, paths)
}
