package embedded

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// AuthConfig optionally protects an embedded catalog, so it can stand in
// for a remote catalog that requires authentication. With neither tokens
// nor clients set, every request is allowed.
type AuthConfig struct {
	// Tokens are static bearer tokens that are always accepted (default:
	// none).
	Tokens []string `json:"tokens,omitempty"`
	// Clients maps OAuth2 client ids to secrets for the client-credentials
	// grant at /v1/oauth/tokens (default: none).
	Clients map[string]string `json:"clients,omitempty"`
	// TokenTTL is the lifetime of issued tokens (default 1h).
	TokenTTL duration.Duration `json:"token_ttl,omitempty"`
}

// tokenGuard checks bearer tokens with lakegate's identity package: the
// same token issuer and static tokens the gateway uses, so the embedded
// catalog keeps no token code of its own.
type tokenGuard struct {
	authn  identity.Chain // empty: auth off
	issuer *identity.Issuer
}

func newTokenGuard(cfg AuthConfig) (*tokenGuard, error) {
	g := &tokenGuard{}
	if len(cfg.Clients) > 0 {
		// These hashes are made here, from secrets the config itself holds
		// (placeholders resolved at load), and are shown nowhere: a slow
		// salted hash would protect nothing, so the quick SHA-256 stays.
		clients := make([]identity.Client, 0, len(cfg.Clients))
		for id, secret := range cfg.Clients {
			clients = append(clients, identity.Client{ID: id, SecretSHA256: identity.HashSecret(secret)})
		}
		iss, err := identity.NewIssuer(identity.IssuerConfig{
			Issuer: "lakegate-embedded", Audience: "lakegate-embedded", TTL: cfg.TokenTTL, Clients: clients})
		if err != nil {
			return nil, fmt.Errorf("embedded catalog auth: %w", err)
		}
		g.issuer = iss
		g.authn = append(g.authn, iss.Authenticator())
	}
	if len(cfg.Tokens) > 0 {
		static := make([]identity.StaticToken, len(cfg.Tokens))
		for i, tok := range cfg.Tokens {
			static[i] = identity.StaticToken{ID: fmt.Sprintf("token-%d", i), SHA256: identity.HashSecret(tok)}
		}
		st, err := identity.NewStaticTokens(static)
		if err != nil {
			return nil, fmt.Errorf("embedded catalog auth: %w", err)
		}
		g.authn = append(g.authn, st)
	}
	return g, nil
}

// authenticate accepts the request when auth is off or it carries a valid
// bearer token.
func (g *tokenGuard) authenticate(r *http.Request) error {
	if len(g.authn) == 0 {
		return nil
	}
	_, err := g.authn.Authenticate(r)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, identity.ErrNoCredentials) && r.Header.Get("Authorization") == "":
		return icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "missing bearer token")
	}
	return icerest.Errorf(http.StatusUnauthorized, icerest.NotAuthorized, "invalid or expired bearer token")
}

// getToken implements the OAuth2 client-credentials grant (the issuer's
// token endpoint); without clients configured every client is unknown.
func (c *Catalog) getToken(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	if c.tokens.issuer == nil {
		icerest.WriteJSON(w, http.StatusUnauthorized, map[string]string{
			"error": "invalid_client", "error_description": "this catalog has no OAuth2 clients"})
		return nil
	}
	c.tokens.issuer.ServeToken(w, r)
	return nil
}
