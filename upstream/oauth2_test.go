package upstream_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// authSpy wraps an embedded catalog that requires authentication: it
// counts token requests and the bearer tokens requests carry, and can
// refuse tokens with 401 the way a backend that revoked them would.
type authSpy struct {
	h         http.Handler
	tokenReqs atomic.Int32

	mu             sync.Mutex
	calls          int            // requests other than token requests
	uses           map[string]int // bearer token → requests carrying it
	last           string         // the last bearer token seen
	revoked        map[string]bool
	rejectFirstUse bool // refuse every token the first time it is used
	refused        int  // 401s the spy answered
	backend401     int  // 401s the catalog answered
}

func (s *authSpy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/oauth/tokens" {
		s.tokenReqs.Add(1)
		s.h.ServeHTTP(w, r)
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	s.calls++
	s.uses[tok]++
	s.last = tok
	refuse := s.revoked[tok] || (s.rejectFirstUse && s.uses[tok] == 1)
	if refuse {
		s.refused++
	}
	s.mu.Unlock()
	if refuse {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "token revoked"))
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	s.h.ServeHTTP(rec, r)
	if rec.status == http.StatusUnauthorized {
		s.mu.Lock()
		s.backend401++
		s.mu.Unlock()
	}
}

func (s *authSpy) revokeLast() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[s.last] = true
	return s.last
}

type spyStats struct{ calls, tokens, refused, backend401, distinct int }

func (s *authSpy) stats() spyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok := range s.uses {
		if tok != "" {
			n++
		}
	}
	return spyStats{calls: s.calls, tokens: int(s.tokenReqs.Load()), refused: s.refused,
		backend401: s.backend401, distinct: n}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// authCatalog serves an embedded catalog with auth behind an authSpy on
// its own loopback port.
func authCatalog(t *testing.T, auth embedded.AuthConfig) (*authSpy, string) {
	t.Helper()
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Auth = auth
	cat, err := embedded.Open(context.Background(), cfg, nil)
	require.NoError(t, err)
	spy := &authSpy{h: cat, uses: map[string]int{}, revoked: map[string]bool{}}
	srv := httptest.NewServer(spy)
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, cat.Close())
	})
	return spy, srv.URL
}

const (
	oauthClient = "lakegate"
	oauthSecret = "s3cret-client-credential"
)

func oauth2Remote(secret string) func(*upstream.RemoteConfig) {
	return func(c *upstream.RemoteConfig) {
		c.Auth = upstream.Auth{Mode: upstream.AuthOAuth2, ClientID: oauthClient, ClientSecret: secret}
	}
}

func TestOAuth2TokenLifecycle(t *testing.T) {
	t.Parallel()
	spy, url := authCatalog(t, embedded.AuthConfig{
		Clients: map[string]string{oauthClient: oauthSecret}, TokenTTL: duration.Duration(time.Second)})
	gw := gateway(t, url, oauth2Remote(oauthSecret))

	a := call(t, "POST", gw+"/v1/gw/namespaces", `{"namespace":["db"]}`)
	require.Equal(t, 200, a.Status, "%s", a.Body)

	// Requests keep succeeding across more than two token lifetimes: the
	// token is renewed before it expires, and cached in between.
	start := time.Now()
	n := 0
	for time.Since(start) < 2600*time.Millisecond {
		a := call(t, "GET", gw+"/v1/gw/namespaces/db", "")
		require.Equal(t, 200, a.Status, "after %v: %s", time.Since(start), a.Body)
		n++
		time.Sleep(40 * time.Millisecond)
	}
	elapsed := time.Since(start)
	st := spy.stats()
	t.Logf("%d requests in %v: %d token requests, %d distinct tokens used", n, elapsed, st.tokens, st.distinct)
	assert.GreaterOrEqual(t, st.tokens, 3, "the token was not renewed")
	assert.LessOrEqual(t, st.tokens, int(elapsed/(900*time.Millisecond))+2, "tokens are not cached")
	assert.Less(t, 3*st.tokens, st.calls, "tokens are not cached")
	assert.Equal(t, st.tokens, st.distinct)
	assert.Zero(t, st.backend401, "a request carried an expired token")
	assert.Zero(t, st.refused)

	// A token the backend refuses on a read: one refresh, one retry.
	before := spy.stats()
	revoked := spy.revokeLast()
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	st = spy.stats()
	assert.Equal(t, before.tokens+1, st.tokens, "token requests")
	assert.Equal(t, before.calls+2, st.calls, "backend requests")
	assert.Equal(t, before.refused+1, st.refused)
	assert.NotEqual(t, revoked, spy.last)

	// On a write the 401 passes through: the write is not retried.
	before = spy.stats()
	spy.revokeLast()
	a = call(t, "POST", gw+"/v1/gw/namespaces/db/properties", `{"updates":{"k":"v"}}`)
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)
	st = spy.stats()
	assert.Equal(t, before.tokens, st.tokens, "token requests")
	assert.Equal(t, before.calls+1, st.calls, "backend requests")
	// The next read renews it.
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	assert.Equal(t, before.tokens+1, spy.stats().tokens)

	// A backend that refuses the renewed token too: exactly one refresh,
	// then its 401 reaches the client (no loop).
	spy.mu.Lock()
	spy.rejectFirstUse = true
	spy.mu.Unlock()
	before = spy.stats()
	spy.revokeLast()
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)
	st = spy.stats()
	assert.Equal(t, before.tokens+1, st.tokens, "token requests")
	assert.Equal(t, before.calls+2, st.calls, "backend requests")
}

func TestOAuth2WrongSecret(t *testing.T) {
	t.Parallel()
	spy, url := authCatalog(t, embedded.AuthConfig{
		Clients: map[string]string{oauthClient: oauthSecret}, TokenTTL: duration.Duration(time.Second)})
	const wrong = "not-the-client-secret"
	gw := gateway(t, url, oauth2Remote(wrong))
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/v1/gw/namespaces", ""},
		{"POST", "/v1/gw/namespaces", `{"namespace":["db"]}`},
	} {
		a := call(t, rq.method, gw+rq.path, rq.body)
		// The token endpoint refused lakegate's own credentials: a gateway
		// fault, not the client's, so not a 401.
		wantError(t, a, http.StatusBadGateway, icerest.NotAuthorized)
		assert.Contains(t, a.Err.Message, "invalid_client")
		assert.NotContains(t, string(a.Body), wrong)
		assert.NotContains(t, string(a.Body), oauthSecret)
	}
	st := spy.stats()
	assert.Equal(t, 0, st.calls, "a request went out without a token")
	assert.Equal(t, 2, st.tokens)
}

func TestBearerStaticToken(t *testing.T) {
	t.Parallel()
	spy, url := authCatalog(t, embedded.AuthConfig{Tokens: []string{"static-token"}})
	gw := gateway(t, url, func(c *upstream.RemoteConfig) {
		c.Auth = upstream.Auth{Mode: upstream.AuthBearer, Token: "static-token"}
	})
	a := call(t, "POST", gw+"/v1/gw/namespaces", `{"namespace":["db"]}`, "Authorization", "Bearer client-token")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "", "Authorization", "Bearer client-token")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	spy.mu.Lock()
	assert.Equal(t, map[string]int{"static-token": 3}, spy.uses) // config, create, load
	spy.mu.Unlock()
	assert.Zero(t, spy.tokenReqs.Load())

	// A wrong static token: the backend refuses the gateway's config
	// fetch, and the client learns it was refused.
	bad := gateway(t, url, func(c *upstream.RemoteConfig) {
		c.Auth = upstream.Auth{Mode: upstream.AuthBearer, Token: "stale-token"}
	})
	a = call(t, "GET", bad+"/v1/gw/namespaces", "")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)
	assert.NotContains(t, string(a.Body), "stale-token")
}

// Passthrough: the backend authenticates the clients themselves, the
// gateway's /v1/config fetch included.
func TestPassthroughAuth(t *testing.T) {
	t.Parallel()
	spy, url := authCatalog(t, embedded.AuthConfig{Tokens: []string{"alice-token"}})
	gw := gateway(t, url, func(c *upstream.RemoteConfig) { c.Auth.Mode = upstream.AuthPassthrough })

	// No credentials: the backend's 401 reaches the client.
	a := call(t, "GET", gw+"/v1/gw/namespaces", "")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)
	a = call(t, "GET", gw+"/v1/gw/namespaces", "", "Authorization", "Bearer mallory")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)

	a = call(t, "POST", gw+"/v1/gw/namespaces", `{"namespace":["db"]}`, "Authorization", "Bearer alice-token")
	require.Equal(t, 200, a.Status, "%s", a.Body)
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "", "Authorization", "Bearer alice-token")
	require.Equal(t, 200, a.Status, "%s", a.Body)

	// Once the config is cached, a client without credentials still gets
	// the backend's own 401.
	a = call(t, "GET", gw+"/v1/gw/namespaces/db", "")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)
	a = call(t, "DELETE", gw+"/v1/gw/namespaces/db", "", "Authorization", "Bearer mallory")
	wantError(t, a, http.StatusUnauthorized, icerest.NotAuthorized)

	spy.mu.Lock()
	defer spy.mu.Unlock()
	assert.Equal(t, 3, spy.uses["alice-token"]) // config, create, load
	assert.Equal(t, 2, spy.uses["mallory"])
	assert.Equal(t, 2, spy.uses[""])
	assert.Zero(t, spy.tokenReqs.Load())
}
