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

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
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
			cfg := embeddedtest.Config(t, embedded.SQLite)
			cfg.Warehouse = "s3://" + st.bucket + "/nv"
			backend := embeddedtest.Serve(t, cfg)
			front := withoutViews(t, backend.URL, c.status)
			nv := remote("nv", front, nil)
			nv["allowed_locations"] = []string{cfg.Warehouse}
			nv["storage"] = map[string]any{
				"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
					"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
				"vended_credentials": map[string]any{"role_arn": testRoleARN, "sts_endpoint": sts.URL},
			}
			base := ucVendGateway(t, st, sts.URL, testRoleARN, nv)
			writer := issuedToken(t, base, "writer", "writer-secret")
			status, body := do(t, http.MethodPost, base+"/v1/nv/namespaces", writer, `{"namespace":["sales"]}`, nil)
			require.Equal(t, http.StatusOK, status, "%s", body)

			code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", writer,
				map[string]any{"url": cfg.Warehouse + "/sales/new", "operation": "PATH_CREATE_TABLE"})
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
