package identity_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/identity"
)

// idpKeys are the IdP's keys; the JWKS publishes rsa and ec.
type idpKeys struct {
	rsa, ec testKey
}

func newIDPKeys(t testing.TB) idpKeys {
	return idpKeys{rsa: newRSAKey(t, "rsa-1"), ec: newECKey(t, "ec-1")}
}

// keySourceModes builds the same JWT authenticator over a static JWKS and
// over a JWKS served by an httptest server.
func keySourceModes(t *testing.T, keys idpKeys, cfg identity.JWTConfig) map[string]*identity.JWT {
	t.Helper()
	static := cfg
	static.StaticJWKS = jwksJSON(t, keys.rsa, keys.ec)
	remote := cfg
	remote.JWKSURL = newJWKSServer(t, keys.rsa, keys.ec).URL
	out := map[string]*identity.JWT{}
	for name, c := range map[string]identity.JWTConfig{"static_jwks": static, "jwks_url": remote} {
		j, err := identity.NewJWT(c, nil)
		if err != nil {
			t.Fatalf("%s: NewJWT: %v", name, err)
		}
		out[name] = j
	}
	return out
}

func TestBadTokens(t *testing.T) {
	keys := newIDPKeys(t)
	other := newRSAKey(t, "rsa-1") // same kid, different key: a forger
	stranger := newECKey(t, "not-published")
	now := time.Now()
	good := sign(t, keys.ec, goodClaims(nil))

	cases := []struct {
		name, token, want string
	}{
		{"wrong signature", sign(t, other, goodClaims(nil)), "bad signature"},
		{"embedded jwk of the forger", sign(t, other, goodClaims(nil), func(o *jose.SignerOptions) { o.EmbedJWK = true }), "bad signature"},
		{"wrong audience", sign(t, keys.rsa, goodClaims(map[string]any{"aud": "someone-else"})), "wrong audience"},
		{"no audience", sign(t, keys.rsa, goodClaims(map[string]any{"aud": nil})), "wrong audience"},
		{"wrong issuer", sign(t, keys.rsa, goodClaims(map[string]any{"iss": "https://evil.example.com"})), "wrong issuer"},
		{"expired beyond leeway", sign(t, keys.ec, goodClaims(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()})), "expired"},
		{"not yet valid", sign(t, keys.ec, goodClaims(map[string]any{"nbf": now.Add(2 * time.Minute).Unix()})), "not valid yet"},
		{"issued in the future", sign(t, keys.ec, goodClaims(map[string]any{"iat": now.Add(2 * time.Minute).Unix()})), "issued in the future"},
		{"no exp", sign(t, keys.ec, goodClaims(map[string]any{"exp": nil})), "missing exp"},
		{"no sub", sign(t, keys.ec, goodClaims(map[string]any{"sub": nil})), "missing subject"},
		{"groups of wrong type", sign(t, keys.ec, goodClaims(map[string]any{"groups": 42})), "groups claim"},
		{"alg none", rawToken(t, map[string]any{"alg": "none", "typ": "JWT"}, goodClaims(nil), nil), `unsupported alg "none"`},
		{"alg none with kid", rawToken(t, map[string]any{"alg": "none", "kid": "rsa-1"}, goodClaims(nil), nil), `unsupported alg "none"`},
		{"HS256 with the RSA public key PEM", rawToken(t, map[string]any{"alg": "HS256", "kid": "rsa-1"}, goodClaims(nil), publicPEM(t, keys.rsa.pub)), `unsupported alg "HS256"`},
		{"HS256 with the JWKS document", rawToken(t, map[string]any{"alg": "HS256"}, goodClaims(nil), []byte(jwksJSON(t, keys.rsa))), `unsupported alg "HS256"`},
		{"ES256 header on an RSA key", rawToken(t, map[string]any{"alg": "ES256", "kid": "rsa-1"}, goodClaims(nil), []byte("x")), "unknown signing key"},
		{"unknown kid", sign(t, stranger, goodClaims(nil)), "unknown signing key"},
		{"garbage a.b.c", "a.b.c", "malformed"},
		{"empty parts", "..", "malformed"},
		{"truncated", good[:len(good)-7], "invalid token"},
		{"payload cut", good[:strings.LastIndexByte(good, '.')-4] + good[strings.LastIndexByte(good, '.'):], "invalid token"},
		{"not JSON claims", rawToken(t, map[string]any{"alg": "ES256", "kid": "ec-1"}, nil, []byte("x")), "invalid token"},
		{"too large", strings.Repeat("a", 70<<10) + ".b.c", "too large"},
	}
	for mode, j := range keySourceModes(t, keys, identity.JWTConfig{Issuer: testIssuer, Audience: testAudience}) {
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				p, err := j.Authenticate(bearerRequest(tc.token))
				if err == nil || p != nil {
					t.Fatalf("accepted: %+v", p)
				}
				if errors.Is(err, identity.ErrNoCredentials) {
					t.Fatalf("got ErrNoCredentials, want an invalid-credentials error")
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %q does not name %q", err, tc.want)
				}
				if len(tc.token) > 20 && strings.Contains(err.Error(), tc.token) {
					t.Fatalf("error echoes the token")
				}
			})
		}
	}
}

// TestNotJWTShaped: bearers that are not JWTs are left to the next
// authenticator; through a chain with static tokens they are still refused.
func TestNotJWTShaped(t *testing.T) {
	keys := newIDPKeys(t)
	random := make([]byte, 48)
	_, _ = rand.Read(random)
	static, err := identity.NewStaticTokens([]identity.StaticToken{{ID: "ci", SHA256: identity.HashSecret("right-token")}})
	if err != nil {
		t.Fatal(err)
	}
	for mode, j := range keySourceModes(t, keys, identity.JWTConfig{Issuer: testIssuer}) {
		for _, tok := range []string{"x.y", base64.StdEncoding.EncodeToString(random), "a.b.c.d.e", "Bearer"} {
			t.Run(mode+"/"+tok, func(t *testing.T) {
				if _, err := j.Authenticate(bearerRequest(tok)); !errors.Is(err, identity.ErrNoCredentials) {
					t.Fatalf("JWT alone: got %v, want ErrNoCredentials", err)
				}
				p, err := identity.Chain{j, static}.Authenticate(bearerRequest(tok))
				if err == nil || errors.Is(err, identity.ErrNoCredentials) || p != nil {
					t.Fatalf("chain: got (%v, %v), want an invalid-credentials error", p, err)
				}
			})
		}
		t.Run(mode+"/no header", func(t *testing.T) {
			if _, err := j.Authenticate(bearerRequest("")); !errors.Is(err, identity.ErrNoCredentials) {
				t.Fatalf("got %v, want ErrNoCredentials", err)
			}
		})
		t.Run(mode+"/basic auth", func(t *testing.T) {
			r := bearerRequest("")
			r.SetBasicAuth("user", "pass")
			if _, err := j.Authenticate(r); !errors.Is(err, identity.ErrNoCredentials) {
				t.Fatalf("got %v, want ErrNoCredentials", err)
			}
		})
	}
}

func TestGoodTokens(t *testing.T) {
	keys := newIDPKeys(t)
	noKid := keys.ec
	noKid.kid = ""
	now := time.Now()
	cases := []struct {
		name   string
		cfg    identity.JWTConfig
		token  string
		sub    string
		groups []string
	}{
		{"RS256 list groups", identity.JWTConfig{}, sign(t, keys.rsa, goodClaims(nil)), "alice", []string{"analysts", "etl"}},
		{"ES256 single-string group", identity.JWTConfig{}, sign(t, keys.ec, goodClaims(map[string]any{"groups": "admins"})), "alice", []string{"admins"}},
		{"ES256 without kid", identity.JWTConfig{}, sign(t, noKid, goodClaims(nil)), "alice", []string{"analysts", "etl"}},
		{"no groups", identity.JWTConfig{}, sign(t, keys.ec, goodClaims(map[string]any{"groups": nil})), "alice", []string{}},
		{"audience in a list", identity.JWTConfig{}, sign(t, keys.ec, goodClaims(map[string]any{"aud": []string{"other", testAudience}})), "alice", []string{"analysts", "etl"}},
		{"expired within leeway", identity.JWTConfig{}, sign(t, keys.ec, goodClaims(map[string]any{"exp": now.Add(-30 * time.Second).Unix()})), "alice", []string{"analysts", "etl"}},
		{
			"nested groups path", identity.JWTConfig{GroupsClaim: "realm_access.roles"},
			sign(t, keys.rsa, goodClaims(map[string]any{"realm_access": map[string]any{"roles": []string{"reader"}}})),
			"alice", []string{"reader"},
		},
		{
			"namespaced claim with dots", identity.JWTConfig{GroupsClaim: "https://lakegate.dev/groups"},
			sign(t, keys.rsa, goodClaims(map[string]any{"https://lakegate.dev/groups": []string{"ns"}})),
			"alice", []string{"ns"},
		},
		{
			"custom subject claim", identity.JWTConfig{SubjectClaim: "preferred_username"},
			sign(t, keys.ec, goodClaims(map[string]any{"preferred_username": "bob"})),
			"bob", []string{"analysts", "etl"},
		},
	}
	for _, tc := range cases {
		cfg := tc.cfg
		cfg.Issuer, cfg.Audience = testIssuer, testAudience
		for mode, j := range keySourceModes(t, keys, cfg) {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				p, err := j.Authenticate(bearerRequest(tc.token))
				if err != nil {
					t.Fatal(err)
				}
				if p.ID != tc.sub || !slices.Equal(p.Groups, tc.groups) {
					t.Fatalf("principal %q %q, want %q %q", p.ID, p.Groups, tc.sub, tc.groups)
				}
				if p.Groups == nil || p.Claims["iss"] != testIssuer {
					t.Fatalf("principal incomplete: %+v", p)
				}
			})
		}
	}
}

func TestNewJWTConfig(t *testing.T) {
	keys := newIDPKeys(t)
	bad := map[string]identity.JWTConfig{
		"no key source":           {Issuer: testIssuer},
		"discover without issuer": {Discover: true},
		"url and discover":        {JWKSURL: "https://idp.example.com/jwks", Discover: true, Issuer: testIssuer},
		"relative url":            {JWKSURL: "/jwks"},
		"negative leeway":         {StaticJWKS: jwksJSON(t, keys.ec), Leeway: duration.Duration(-time.Second)},
		"jwks not json":           {StaticJWKS: "{"},
		"jwks without keys":       {StaticJWKS: `{"keys":[]}`},
		"jwks symmetric only":     {StaticJWKS: `{"keys":[{"kty":"oct","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA","kid":"h"}]}`},
	}
	for name, cfg := range bad {
		if _, err := identity.NewJWT(cfg, nil); err == nil {
			t.Errorf("%s: NewJWT accepted %+v", name, cfg)
		}
	}
	// An IdP that is down at start does not prevent NewJWT.
	if _, err := identity.NewJWT(identity.JWTConfig{JWKSURL: "http://127.0.0.1:1/jwks"}, nil); err != nil {
		t.Fatalf("NewJWT with unreachable JWKS: %v", err)
	}
}

// TestKeyRotation: a token of a new key is accepted after the refetch on its
// unknown kid; the removed key stops working once that refetch happened.
func TestKeyRotation(t *testing.T) {
	oldKey, newKey := newECKey(t, "2024"), newECKey(t, "2025")
	srv := newJWKSServer(t, oldKey)
	j, err := identity.NewJWT(identity.JWTConfig{JWKSURL: srv.URL, Issuer: testIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	oldTok, newTok := sign(t, oldKey, goodClaims(nil)), sign(t, newKey, goodClaims(nil))
	mustAccept(t, j, oldTok)
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}

	srv.setKeys(t, newKey)
	// Within 10s of the last fetch, unknown kids do not hit the IdP again.
	for range 5 {
		mustReject(t, j, newTok, "unknown signing key")
	}
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("rate limit: JWKS fetched %d times, want 1", n)
	}

	identity.SetRefetchGap(j, 0) // as if 10s had passed
	mustAccept(t, j, newTok)
	if n := srv.hits.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2", n)
	}
	mustReject(t, j, oldTok, "unknown signing key")
}

// TestPeriodicRefresh: keys removed from the JWKS stop working after the
// refresh interval even though their kid stays cached until then.
func TestPeriodicRefresh(t *testing.T) {
	oldKey, newKey := newECKey(t, "old"), newECKey(t, "new")
	srv := newJWKSServer(t, oldKey, newKey)
	j, err := identity.NewJWT(identity.JWTConfig{JWKSURL: srv.URL, Issuer: testIssuer, RefreshInterval: duration.Duration(50 * time.Millisecond)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	identity.SetRefetchGap(j, 0)
	oldTok := sign(t, oldKey, goodClaims(nil))
	mustAccept(t, j, oldTok)
	srv.setKeys(t, newKey)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := j.Authenticate(bearerRequest(oldTok))
		if err != nil {
			if !strings.Contains(err.Error(), "unknown signing key") {
				t.Fatalf("unexpected error %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("removed key still accepted after refresh interval")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustAccept(t, j, sign(t, newKey, goodClaims(nil)))
}

// TestIdPDownAtStart: keys are fetched lazily; while the IdP is down tokens
// get an error (401), not a panic and not ErrNoCredentials.
func TestIdPDownAtStart(t *testing.T) {
	key := newECKey(t, "k")
	srv := newJWKSServer(t, key)
	srv.setDown(true)
	j, err := identity.NewJWT(identity.JWTConfig{JWKSURL: srv.URL, Issuer: testIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := sign(t, key, goodClaims(nil))
	mustReject(t, j, tok, "signing keys unavailable")
	mustReject(t, j, tok, "signing keys unavailable") // rate-limited, still an error
	srv.setDown(false)
	identity.SetRefetchGap(j, 0)
	mustAccept(t, j, tok)
	// Once keys are cached, an IdP outage does not lock callers out.
	srv.setDown(true)
	mustAccept(t, j, tok)
}

func TestOIDCDiscovery(t *testing.T) {
	key := newRSAKey(t, "rsa")
	var docIssuer atomic.Value // what the discovery document claims
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"` + docIssuer.Load().(string) + `","jwks_uri":"http://` + r.Host + `/protocol/openid-connect/certs"}`))
	})
	mux.HandleFunc("GET /protocol/openid-connect/certs", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(jwksJSON(t, key)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	issuer := srv.URL
	docIssuer.Store(issuer)

	j, err := identity.NewJWT(identity.JWTConfig{Issuer: issuer, Discover: true, Audience: testAudience}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	p := mustAccept(t, j, sign(t, key, goodClaims(map[string]any{"iss": issuer})))
	if p.ID != "alice" {
		t.Fatalf("principal %q", p.ID)
	}
	mustReject(t, j, sign(t, key, goodClaims(nil)), "wrong issuer")

	// A discovery document for another issuer must not be trusted.
	docIssuer.Store("https://evil.example.com")
	j2, err := identity.NewJWT(identity.JWTConfig{Issuer: issuer, Discover: true}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	mustReject(t, j2, sign(t, key, goodClaims(map[string]any{"iss": issuer})), "signing keys unavailable")
}

func mustAccept(t *testing.T, a identity.Authenticator, tok string) *identity.Principal {
	t.Helper()
	p, err := a.Authenticate(bearerRequest(tok))
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	return p
}

func mustReject(t *testing.T, a identity.Authenticator, tok, reason string) {
	t.Helper()
	p, err := a.Authenticate(bearerRequest(tok))
	if err == nil || p != nil {
		t.Fatalf("accepted: %+v", p)
	}
	if errors.Is(err, identity.ErrNoCredentials) || !strings.Contains(err.Error(), reason) {
		t.Fatalf("error %q, want one naming %q", err, reason)
	}
}

// TestConcurrentFirstUse: a burst of requests on a cold cache fetches the
// JWKS once, not once per request.
func TestConcurrentFirstUse(t *testing.T) {
	key := newECKey(t, "k")
	srv := newJWKSServer(t, key)
	j, err := identity.NewJWT(identity.JWTConfig{JWKSURL: srv.URL, Issuer: testIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, unknown := sign(t, key, goodClaims(nil)), sign(t, newECKey(t, "other"), goodClaims(nil))
	var wg sync.WaitGroup
	for n := range 32 {
		wg.Go(func() {
			tok := good
			if n%2 == 1 {
				tok = unknown
			}
			_, _ = j.Authenticate(bearerRequest(tok))
		})
	}
	wg.Wait()
	if n := srv.hits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", n)
	}
	mustAccept(t, j, good)
}
