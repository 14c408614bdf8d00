package embedded

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// AuthConfig optionally protects an embedded catalog, so it can stand in
// for a remote catalog that requires authentication. With neither tokens
// nor clients set, every request is allowed.
type AuthConfig struct {
	// Tokens are static bearer tokens that are always accepted.
	Tokens []string `json:"tokens,omitempty"`
	// Clients maps OAuth2 client ids to secrets for the client-credentials
	// grant at /v1/oauth/tokens.
	Clients map[string]string `json:"clients,omitempty"`
	// TokenTTL is the lifetime of issued tokens (default 1h).
	TokenTTL time.Duration `json:"token_ttl,omitempty"`
}

// tokenIssuer checks bearer tokens and issues short-lived opaque ones.
// Only hashes of tokens are kept.
type tokenIssuer struct {
	static  [][32]byte
	clients map[string][32]byte
	ttl     time.Duration

	mu     sync.Mutex
	issued map[[32]byte]time.Time // token hash → expiry
}

func newTokenIssuer(cfg AuthConfig) (*tokenIssuer, error) {
	t := &tokenIssuer{clients: map[string][32]byte{}, ttl: cfg.TokenTTL, issued: map[[32]byte]time.Time{}}
	if t.ttl <= 0 {
		t.ttl = time.Hour
	}
	for _, tok := range cfg.Tokens {
		t.static = append(t.static, sha256.Sum256([]byte(tok)))
	}
	for id, secret := range cfg.Clients {
		t.clients[id] = sha256.Sum256([]byte(secret))
	}
	return t, nil
}

func (t *tokenIssuer) enabled() bool { return len(t.static) > 0 || len(t.clients) > 0 }

// authenticate accepts the request when auth is off or it carries a valid
// bearer token.
func (t *tokenIssuer) authenticate(r *http.Request) *icerest.Error {
	if !t.enabled() {
		return nil
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "missing bearer token")
	}
	h := sha256.Sum256([]byte(tok))
	for _, s := range t.static {
		if subtle.ConstantTimeCompare(h[:], s[:]) == 1 {
			return nil
		}
	}
	t.mu.Lock()
	exp, found := t.issued[h]
	t.mu.Unlock()
	if found && time.Now().Before(exp) {
		return nil
	}
	return icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "invalid or expired bearer token")
}

// getToken implements the OAuth2 client-credentials grant as Iceberg
// clients send it (form-encoded). Errors use the spec's OAuthError shape.
func (c *Catalog) getToken(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	t := c.tokens
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return nil
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials")
		return nil
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if bid, bsecret, ok := r.BasicAuth(); ok {
		id, secret = bid, bsecret
	}
	want, known := t.clients[id]
	got := sha256.Sum256([]byte(secret))
	if !known || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret")
		return nil
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	tok := hex.EncodeToString(raw[:])
	t.mu.Lock()
	now := time.Now()
	for k, exp := range t.issued { // drop expired tokens as new ones are issued
		if now.After(exp) {
			delete(t.issued, k)
		}
	}
	t.issued[sha256.Sum256([]byte(tok))] = now.Add(t.ttl)
	t.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	icerest.WriteJSON(w, http.StatusOK, map[string]any{
		"access_token":      tok,
		"token_type":        "bearer",
		"expires_in":        int(t.ttl.Seconds()),
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
	})
	return nil
}

func writeOAuthError(w http.ResponseWriter, status int, code, desc string) {
	icerest.WriteJSON(w, status, map[string]string{"error": code, "error_description": desc})
}
