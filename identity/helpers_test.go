package identity_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	testIssuer   = "https://idp.example.com"
	testAudience = "lakegate"
)

type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv any
	pub  any
}

func newRSAKey(t testing.TB, kid string) testKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, alg: jose.RS256, priv: k, pub: &k.PublicKey}
}

func newECKey(t testing.TB, kid string) testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, alg: jose.ES256, priv: k, pub: &k.PublicKey}
}

func jwksJSON(t testing.TB, keys ...testKey) string {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.pub, KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goodClaims are valid for the test IdP; override or delete (nil) entries.
func goodClaims(overrides map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":    testIssuer,
		"aud":    testAudience,
		"sub":    "alice",
		"iat":    now.Unix(),
		"nbf":    now.Unix(),
		"exp":    now.Add(time.Hour).Unix(),
		"groups": []string{"analysts", "etl"},
	}
	for k, v := range overrides {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// sign signs claims with k, putting k.kid (if any) in the header.
func sign(t testing.TB, k testKey, claims map[string]any, opts ...func(*jose.SignerOptions)) string {
	t.Helper()
	o := (&jose.SignerOptions{}).WithType("JWT")
	for _, f := range opts {
		f(o)
	}
	var key any = k.priv
	if k.kid != "" {
		key = jose.JSONWebKey{Key: k.priv, KeyID: k.kid}
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: key}, o)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawToken assembles a compact JWS by hand, for tokens no honest library
// produces (alg none, HMAC with a public key).
func rawToken(t testing.TB, header map[string]any, claims map[string]any, hmacKey []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	if hmacKey == nil {
		return input + "."
	}
	m := hmac.New(sha256.New, hmacKey)
	m.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func publicPEM(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func bearerRequest(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/config", nil)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return r
}

// jwksServer serves a JWKS whose content tests can swap, counting fetches.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	body string
	down bool
	hits atomic.Int32
}

func newJWKSServer(t testing.TB, keys ...testKey) *jwksServer {
	s := &jwksServer{body: jwksJSON(t, keys...)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) serve(w http.ResponseWriter, _ *http.Request) {
	s.hits.Add(1)
	s.mu.Lock()
	body, down := s.body, s.down
	s.mu.Unlock()
	if down {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(body))
}

func (s *jwksServer) setKeys(t testing.TB, keys ...testKey) {
	body := jwksJSON(t, keys...)
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
}

func (s *jwksServer) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}
