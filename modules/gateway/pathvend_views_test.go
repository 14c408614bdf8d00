package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A catalog whose backend has no views (it answers 501 or 404 to
// listViews) still gets path credentials: it has no view to protect. One
// whose view listing fails otherwise (500) gets none: the enumeration is
// partial, and 503 says so.
func TestUnityTemporaryPathCredentialsWithoutViews(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	for _, c := range []struct {
		name   string
		status int // the backend's answer to listViews
		want   int
	}{
		{"no views (501)", http.StatusNotImplemented, http.StatusOK},
		{"no views (404)", http.StatusNotFound, http.StatusOK},
		{"listing fails (500)", http.StatusInternalServerError, http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			backend, warehouse := storeBackend(t, st, "nv")
			nv := storeCatalog(t, "nv", withoutViews(t, backend, c.status), warehouse, st, sts.URL, false)
			base := ucVendGateway(t, st, sts.URL, testRoleARN, nv)
			writer := issuedToken(t, base, "writer", "writer-secret")
			status, body := do(t, http.MethodPost, base+"/v1/nv/namespaces", writer, `{"namespace":["sales"]}`, nil)
			require.Equal(t, http.StatusOK, status, "%s", body)

			code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", writer,
				map[string]any{"url": warehouse + "/sales/new", "operation": "PATH_CREATE_TABLE"})
			assert.Equal(t, c.want, code, "%v", out)
			if c.want != http.StatusOK {
				assert.Contains(t, out["message"], "listViews sales answered 500", "%v", out)
			}
		})
	}
}

// withoutViews fronts backend, answering status to every view listing.
func withoutViews(t *testing.T, backend string, status int) string {
	target, err := url.Parse(backend)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/views") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"views are not served here","type":"NotImplementedException","code":` +
				strconv.Itoa(status) + `}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
