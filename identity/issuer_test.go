package identity_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/telemetry/telemetrytest"
)

const (
	sparkSecret  = "spark-client-secret-0123456789"
	sharedSecret = "a-shared-signing-secret-of-32-bytes-or-more"
)

// issuerConfig has a bcrypt client (spark) and one with the deprecated
// secret_sha256 (trino): both kinds work side by side.
func issuerConfig() identity.IssuerConfig {
	return identity.IssuerConfig{Clients: []identity.Client{
		{ID: "spark", SecretBcrypt: bcryptOf(sparkSecret), Groups: []string{"analysts", "etl"}},
		{ID: "trino", SecretSHA256: identity.HashSecret("trino-secret-abcdefghijklmnop")},
	}}
}

var bcryptHashes sync.Map // secret -> hash: one bcrypt run per secret per test binary

// bcryptOf is HashSecretBcrypt's hash of secret, made once.
func bcryptOf(secret string) string {
	if h, ok := bcryptHashes.Load(secret); ok {
		return h.(string)
	}
	h, err := identity.HashSecretBcrypt(secret)
	if err != nil {
		panic(err)
	}
	bcryptHashes.Store(secret, h)
	return h
}

func newIssuer(t testing.TB, cfg identity.IssuerConfig) *identity.Issuer {
	t.Helper()
	i, err := identity.NewIssuer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func postToken(i *identity.Issuer, form url.Values, edit ...func(*http.Request)) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/oauth/tokens", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, f := range edit {
		f(r)
	}
	w := httptest.NewRecorder()
	i.ServeToken(w, r)
	return w
}

func clientCredentials(id, secret string) url.Values {
	v := url.Values{"grant_type": {"client_credentials"}, "scope": {"PRINCIPAL_ROLE:ALL"}}
	if id != "" {
		v.Set("client_id", id)
	}
	if secret != "" {
		v.Set("client_secret", secret)
	}
	return v
}

// issueToken posts valid credentials and returns the access token.
func issueToken(t *testing.T, i *identity.Issuer, id, secret string) string {
	t.Helper()
	w := postToken(i, clientCredentials(id, secret))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var resp map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	tok, _ := resp["access_token"].(string)
	return tok
}

func TestIssuerIssuesValidTokens(t *testing.T) {
	for name, secret := range map[string]string{"ephemeral ES256": "", "shared HS256": sharedSecret} {
		t.Run(name, func(t *testing.T) {
			cfg := issuerConfig()
			cfg.SigningSecret = secret
			i := newIssuer(t, cfg)
			w := postToken(i, clientCredentials("spark", sparkSecret))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
				t.Fatalf("Cache-Control %q", cc)
			}
			var resp struct {
				AccessToken     string `json:"access_token"`
				TokenType       string `json:"token_type"`
				ExpiresIn       int    `json:"expires_in"`
				IssuedTokenType string `json:"issued_token_type"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			if resp.TokenType != "bearer" || resp.ExpiresIn != 3600 || resp.IssuedTokenType != "urn:ietf:params:oauth:token-type:access_token" {
				t.Fatalf("response %+v", resp)
			}
			p := mustAccept(t, i.Authenticator(), resp.AccessToken)
			if p.ID != "spark" || !slices.Equal(p.Groups, []string{"analysts", "etl"}) {
				t.Fatalf("principal %+v", p)
			}
			for _, c := range []string{"iss", "aud", "iat", "nbf", "exp", "jti"} {
				if p.Claims[c] == nil {
					t.Errorf("issued token lacks %q", c)
				}
			}
			if p.Claims["iss"] != "lakegate" || p.Claims["aud"] != "lakegate" {
				t.Errorf("iss/aud %v %v", p.Claims["iss"], p.Claims["aud"])
			}
			if p := mustAccept(t, i.Authenticator(), issueToken(t, i, "trino", "trino-secret-abcdefghijklmnop")); p.ID != "trino" || p.Groups == nil {
				t.Fatalf("principal %+v", p)
			}
		})
	}
}

func TestIssuerErrors(t *testing.T) {
	i := newIssuer(t, issuerConfig())
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	cases := []struct {
		name   string
		form   url.Values
		edit   []func(*http.Request)
		status int
		code   string
	}{
		{"wrong secret", clientCredentials("spark", "nope"), nil, 401, "invalid_client"},
		{"other client's secret", clientCredentials("trino", sparkSecret), nil, 401, "invalid_client"},
		{"unknown client", clientCredentials("hive", sparkSecret), nil, 401, "invalid_client"},
		{"no credentials", clientCredentials("", ""), nil, 401, "invalid_client"},
		{"id without secret", clientCredentials("spark", ""), nil, 401, "invalid_client"},
		{"wrong Basic secret", url.Values{"grant_type": {"client_credentials"}}, []func(*http.Request){basic("spark", "nope")}, 401, "invalid_client"},
		{"missing grant_type", url.Values{"client_id": {"spark"}, "client_secret": {sparkSecret}}, nil, 400, "invalid_request"},
		{"password grant", url.Values{"grant_type": {"password"}, "client_id": {"spark"}, "client_secret": {sparkSecret}}, nil, 400, "unsupported_grant_type"},
		{"token exchange", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}}, nil, 400, "unsupported_grant_type"},
		{"repeated parameter", url.Values{"grant_type": {"client_credentials"}, "client_id": {"spark", "trino"}, "client_secret": {sparkSecret}}, nil, 400, "invalid_request"},
		{"Basic and form secret", clientCredentials("", sparkSecret), []func(*http.Request){basic("spark", sparkSecret)}, 400, "invalid_request"},
		{"secret in the URL", clientCredentials("spark", ""), []func(*http.Request){func(r *http.Request) { r.URL.RawQuery = "client_secret=" + sparkSecret }}, 400, "invalid_request"},
		{"JSON body", nil, []func(*http.Request){func(r *http.Request) {
			body := `{"grant_type":"client_credentials","client_id":"spark","client_secret":"` + sparkSecret + `"}`
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			r.Header.Set("Content-Type", "application/json")
		}}, 400, "invalid_request"},
		{"GET", clientCredentials("spark", sparkSecret), []func(*http.Request){func(r *http.Request) { r.Method = http.MethodGet }}, 405, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := postToken(i, tc.form, tc.edit...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			var e struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
				t.Fatalf("body %q: %v", w.Body, err)
			}
			if e.Error != tc.code || e.Description == "" {
				t.Fatalf("error %+v, want %s", e, tc.code)
			}
			if strings.Contains(w.Body.String(), sparkSecret) || strings.Contains(w.Body.String(), "access_token") {
				t.Fatal("error response leaks a secret or a token")
			}
			if w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
			}
		})
	}
	if w := postToken(i, url.Values{"grant_type": {"client_credentials"}}, basic("spark", "nope")); w.Header().Get("WWW-Authenticate") == "" {
		t.Error("401 after Basic lacks WWW-Authenticate")
	}
	if w := postToken(i, nil, func(r *http.Request) { r.Method = http.MethodGet }); w.Header().Get("Allow") != http.MethodPost {
		t.Error("405 lacks Allow: POST")
	}
}

func TestIssuerClientAuthMethods(t *testing.T) {
	i := newIssuer(t, issuerConfig())
	grant := url.Values{"grant_type": {"client_credentials"}}
	cases := []struct {
		name string
		form url.Values
		user string
		pass string
	}{
		{"Basic", grant, "spark", sparkSecret},
		{"Basic form-encoded (RFC 6749 2.3.1)", grant, "spark", url.QueryEscape(sparkSecret + " +%")},
		{"Basic with matching client_id", url.Values{"grant_type": {"client_credentials"}, "client_id": {"spark"}}, "spark", sparkSecret},
	}
	cfg := issuerConfig()
	cfg.Clients[0].SecretBcrypt = bcryptOf(sparkSecret + " +%")
	odd := newIssuer(t, cfg) // a secret with characters that form-encoding changes
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			iss := i
			if strings.Contains(tc.name, "form-encoded") {
				iss = odd
			}
			w := postToken(iss, tc.form, func(r *http.Request) { r.SetBasicAuth(tc.user, tc.pass) })
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
		})
	}
	mismatch := url.Values{"grant_type": {"client_credentials"}, "client_id": {"trino"}}
	if w := postToken(i, mismatch, func(r *http.Request) { r.SetBasicAuth("spark", sparkSecret) }); w.Code != http.StatusBadRequest {
		t.Fatalf("client_id differing from Basic: status %d", w.Code)
	}
	// Iceberg clients configured with `credential=<secret>` (no "id:") send
	// only client_secret.
	if p := mustAccept(t, i.Authenticator(), issueToken(t, i, "", sparkSecret)); p.ID != "spark" {
		t.Fatalf("secret-only: principal %q", p.ID)
	}
}

func TestIssuedTokenExpires(t *testing.T) {
	t.Parallel() // waits out TTL + leeway (a few seconds)
	cfg := issuerConfig()
	cfg.TTL = duration.Duration(time.Second)
	i := newIssuer(t, cfg)
	tok := issueToken(t, i, "spark", sparkSecret)
	mustAccept(t, i.Authenticator(), tok)
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := i.Authenticator().Authenticate(bearerRequest(tok))
		if err != nil {
			if !strings.Contains(err.Error(), "expired") {
				t.Fatalf("error %v, want expired", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("token with 1s TTL still accepted")
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestIssuersSharingASecret(t *testing.T) {
	cfg := issuerConfig()
	cfg.SigningSecret = sharedSecret
	a, b := newIssuer(t, cfg), newIssuer(t, cfg)
	mustAccept(t, b.Authenticator(), issueToken(t, a, "spark", sparkSecret))
	mustAccept(t, a.Authenticator(), issueToken(t, b, "spark", sparkSecret))

	cfg.SigningSecret = "another-signing-secret-of-32-bytes-or-more"
	other := newIssuer(t, cfg)
	mustReject(t, a.Authenticator(), issueToken(t, other, "spark", sparkSecret), "bad signature")

	// Ephemeral keys are per process: replicas without a shared secret
	// cannot verify each other's tokens. Within one process a reload (a new
	// Issuer of the same iss and aud) keeps the key, so tokens issued
	// before it stay valid.
	e1 := newIssuer(t, issuerConfig())
	reloaded := newIssuer(t, issuerConfig())
	mustAccept(t, reloaded.Authenticator(), issueToken(t, e1, "spark", sparkSecret))
	identity.ForgetProcessKeys() // another process
	e2 := newIssuer(t, issuerConfig())
	mustReject(t, e2.Authenticator(), issueToken(t, e1, "spark", sparkSecret), "bad signature")
	// An HS256 token is refused by an ES256 issuer whatever its key.
	mustReject(t, e1.Authenticator(), issueToken(t, a, "spark", sparkSecret), `unsupported alg "HS256"`)

	// Different iss/aud, same secret: refused.
	cfg.SigningSecret = sharedSecret
	cfg.Audience = "another-gateway"
	mustReject(t, a.Authenticator(), issueToken(t, newIssuer(t, cfg), "spark", sparkSecret), "wrong audience")

	// Removing a client revokes its tokens.
	cfg = issuerConfig()
	cfg.SigningSecret = sharedSecret
	cfg.Clients = cfg.Clients[1:]
	mustReject(t, newIssuer(t, cfg).Authenticator(), issueToken(t, a, "spark", sparkSecret), "unknown client")
}

func TestIssuerTokensAndIdPTokensDoNotMix(t *testing.T) {
	cfg := issuerConfig()
	cfg.SigningSecret = sharedSecret
	i := newIssuer(t, cfg)
	// An IdP token is not an issuer token.
	idp := newECKey(t, "k")
	mustReject(t, i.Authenticator(), sign(t, idp, goodClaims(map[string]any{"iss": "lakegate", "aud": "lakegate", "sub": "spark"})), "unsupported alg")
	// And a forged HS256 token with a guessed secret fails the signature.
	forged := rawToken(t, map[string]any{"alg": "HS256", "typ": "JWT"},
		goodClaims(map[string]any{"iss": "lakegate", "aud": "lakegate", "sub": "spark"}), []byte("guessed-secret-guessed-secret-guessed"))
	mustReject(t, i.Authenticator(), forged, "bad signature")
	// Non-JWT bearers are left to the next authenticator.
	if _, err := i.Authenticator().Authenticate(bearerRequest("opaque")); !errors.Is(err, identity.ErrNoCredentials) {
		t.Fatalf("got %v, want ErrNoCredentials", err)
	}
}

func TestNewIssuerValidates(t *testing.T) {
	ok := issuerConfig()
	bad := map[string]func(*identity.IssuerConfig){
		"no clients":       func(c *identity.IssuerConfig) { c.Clients = nil },
		"short secret":     func(c *identity.IssuerConfig) { c.SigningSecret = "too-short" },
		"duplicate id":     func(c *identity.IssuerConfig) { c.Clients[1].ID = "spark" },
		"clear secret":     func(c *identity.IssuerConfig) { c.Clients[0].SecretBcrypt = sparkSecret },
		"clear sha256":     func(c *identity.IssuerConfig) { c.Clients[1].SecretSHA256 = sparkSecret },
		"no secret":        func(c *identity.IssuerConfig) { c.Clients[0].SecretBcrypt = "" },
		"both hashes":      func(c *identity.IssuerConfig) { c.Clients[0].SecretSHA256 = identity.HashSecret(sparkSecret) },
		"missing id":       func(c *identity.IssuerConfig) { c.Clients[0].ID = "" },
		"sub-second TTL":   func(c *identity.IssuerConfig) { c.TTL = duration.Duration(time.Millisecond) },
		"negative TTL":     func(c *identity.IssuerConfig) { c.TTL = duration.Duration(-time.Hour) },
		"empty secret sum": func(c *identity.IssuerConfig) { c.Clients[1].SecretSHA256 = identity.HashSecret("") },
		// secret_sha256 hashes are unsalted: a secret two clients share
		// is seen at load (bcrypt ones: TestBcryptSharedSecret).
		"shared sha256 secret": func(c *identity.IssuerConfig) {
			c.Clients[0].SecretBcrypt, c.Clients[0].SecretSHA256 = "", c.Clients[1].SecretSHA256
		},
	}
	for name, edit := range bad {
		cfg := issuerConfig()
		edit(&cfg)
		_, err := identity.NewIssuer(cfg)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), sparkSecret) || (cfg.SigningSecret != "" && strings.Contains(err.Error(), cfg.SigningSecret)) {
			t.Errorf("%s: error leaks a secret: %v", name, err)
		}
	}
	if _, err := identity.NewIssuer(ok); err != nil {
		t.Fatal(err)
	}
}

// Every token granted is counted (lakegate_tokens_issued_total); a refused
// request is not.
func TestIssuerCountsTokens(t *testing.T) {
	grant := map[string]string{"grant_type": "client_credentials"}
	before := telemetrytest.Sample(t, "lakegate_tokens_issued_total", grant)
	i := newIssuer(t, issuerConfig())
	if w := postToken(i, clientCredentials("spark", sparkSecret)); w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w := postToken(i, clientCredentials("spark", "wrong-secret")); w.Code == http.StatusOK {
		t.Fatal("a wrong secret got a token")
	}
	if got := telemetrytest.Sample(t, "lakegate_tokens_issued_total", grant); got != before+1 {
		t.Fatalf("tokens issued: %v, want %v", got, before+1)
	}
}

// The access log names the client a token request claimed, issued a token
// or refused one, and never its secret.
func TestTokenRequestsNameTheirClient(t *testing.T) {
	i := newIssuer(t, issuerConfig())
	for _, tc := range []struct {
		name, id, secret string
		basic            bool
		status           int
	}{
		{"issued", "spark", sparkSecret, false, http.StatusOK},
		{"wrong secret", "spark", "guess", false, http.StatusUnauthorized},
		{"unknown client", "mallory", "guess", false, http.StatusUnauthorized},
		{"basic", "trino", "trino-secret-abcdefghijklmnop", true, http.StatusOK},
		{"long id", strings.Repeat("x", 500), "guess", false, http.StatusUnauthorized},
	} {
		rec := &telemetry.Record{}
		form := clientCredentials(tc.id, tc.secret)
		if tc.basic {
			form = clientCredentials("", "")
		}
		w := postToken(i, form, func(r *http.Request) {
			*r = *r.WithContext(telemetry.WithRecord(r.Context(), rec))
			if tc.basic {
				r.SetBasicAuth(tc.id, tc.secret)
			}
		})
		assert.Equal(t, tc.status, w.Code, tc.name)
		want := tc.id
		if len(want) > 128 {
			want = want[:128]
		}
		assert.Equal(t, want, rec.Client, tc.name)
	}
}
