package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `lakegate health` exits 0 on the endpoint's 200 (printing the answer)
// and fails with the endpoint's reason on anything else, on no listener,
// and on no answer in time.
func TestHealthCmd(t *testing.T) {
	var degraded atomic.Bool
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet:
			http.NotFound(w, r)
		case r.URL.Path == "/lakegate/health/live":
			_, _ = w.Write([]byte(`{"status":"ok"}`))
		case r.URL.Path == "/lakegate/health/ready" && degraded.Load():
			_, _ = w.Write([]byte(`{"status":"degraded"}`))
		case r.URL.Path == "/lakegate/health/ready":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"not ready","catalogs":[{"name":"lake","reason":"breaker open"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(admin.Close)
	addr := strings.TrimPrefix(admin.URL, "http://")

	var out strings.Builder
	require.NoError(t, healthCmd(addr, true, 5*time.Second, &out))
	assert.Equal(t, `{"status":"ok"}`, out.String())

	out.Reset()
	err := healthCmd(addr, false, 5*time.Second, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 503")
	assert.Contains(t, err.Error(), "breaker open", "the reason, from the answer's body")
	assert.Empty(t, out.String())

	degraded.Store(true)
	require.NoError(t, healthCmd(addr, false, 5*time.Second, &out), "degraded still serves")

	admin.Close()
	err = healthCmd(addr, false, 5*time.Second, &out)
	require.Error(t, err, "nothing listens")
}

// A gateway that does not answer fails the probe after the timeout,
// instead of hanging the healthcheck.
func TestHealthCmdTimeout(t *testing.T) {
	release := make(chan struct{})
	admin := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(admin.Close)
	t.Cleanup(func() { close(release) })
	err := healthCmd(strings.TrimPrefix(admin.URL, "http://"), false, 50*time.Millisecond, &strings.Builder{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no answer within 50ms")
}
