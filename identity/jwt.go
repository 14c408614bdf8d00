package identity

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lakegate/lakegate/duration"
)

// JWTConfig configures validation of bearer JWTs issued by an external IdP.
// One of JWKSURL, Discover and StaticJWKS is required.
type JWTConfig struct {
	// JWKSURL is the IdP's JWKS: fetched on first use, cached, refreshed
	// every RefreshInterval and on an unknown kid (at most once per 10s)
	// (default: none).
	JWKSURL string `json:"jwks_url,omitempty"`
	// Issuer, when set, must be the token's `iss` (default: any issuer;
	// required with Discover).
	Issuer string `json:"issuer,omitempty"`
	// Discover finds the JWKS by OIDC discovery: GET
	// {Issuer}/.well-known/openid-configuration -> jwks_uri (default
	// false; not with JWKSURL).
	Discover bool `json:"discover,omitempty"`
	// StaticJWKS is a JWKS JSON document with the public keys, for an IdP
	// that is not fetched (default: none).
	StaticJWKS string `json:"static_jwks,omitempty"`
	// Audience, when set, must be in the token's `aud` (default: any
	// audience).
	Audience string `json:"audience,omitempty"`
	// Leeway is the clock skew allowed on exp, nbf and iat (default 60s).
	Leeway duration.Duration `json:"leeway,omitempty"`
	// SubjectClaim is the claim that names the principal (default "sub").
	SubjectClaim string `json:"subject_claim,omitempty"`
	// GroupsClaim is the claim with the principal's groups, a string or a
	// list of strings; dotted paths ("realm_access.roles") reach nested
	// claims (default "groups").
	GroupsClaim string `json:"groups_claim,omitempty"`
	// RefreshInterval is how often the JWKS is fetched again (default
	// 10m).
	RefreshInterval duration.Duration `json:"refresh_interval,omitempty"`
}

const (
	defaultLeeway          = 60 * time.Second
	defaultRefreshInterval = 10 * time.Minute
	defaultHTTPTimeout     = 10 * time.Second
)

// idpAlgs is the allow-list for IdP tokens: asymmetric algorithms only. With
// no HS* here, a token "signed" with a public key as HMAC secret is refused
// before any key is looked at, and "none" is never accepted.
var idpAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// JWT authenticates bearer JWTs signed by an external IdP.
type JWT struct {
	v      *verifier
	remote *remoteKeys // nil without JWKSURL/Discover
}

// NewJWT validates cfg. It does not contact the IdP: keys are fetched on first
// use, so the gateway starts while the IdP is down (and answers 401 until the
// keys can be fetched). A nil client gets one with a 10s timeout.
func NewJWT(cfg JWTConfig, client *http.Client) (*JWT, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.applyDefaults()
	if client == nil {
		client = &http.Client{Timeout: defaultHTTPTimeout}
	}
	j := &JWT{}
	var sources keySources
	if cfg.StaticJWKS != "" {
		keys, err := parseJWKS([]byte(cfg.StaticJWKS))
		if err != nil {
			return nil, fmt.Errorf("jwt: static_jwks: %w", err)
		}
		sources = append(sources, staticKeys(keys))
	}
	if cfg.JWKSURL != "" || cfg.Discover {
		j.remote = &remoteKeys{
			client: client, issuer: cfg.Issuer, jwksURL: cfg.JWKSURL,
			interval: cfg.RefreshInterval.D(), minGap: minRefetchGap,
		}
		sources = append(sources, j.remote)
	}
	j.v = &verifier{
		algs:         idpAlgs,
		source:       sources,
		issuer:       cfg.Issuer,
		leeway:       cfg.Leeway.D(),
		subjectClaim: cfg.SubjectClaim,
		groupsClaim:  cfg.GroupsClaim,
		verified:     newVerifiedTokens(),
		now:          time.Now,
	}
	if cfg.Audience != "" {
		j.v.audience = jwt.Audience{cfg.Audience}
	}
	return j, nil
}

func (cfg *JWTConfig) check() error {
	switch {
	case cfg.JWKSURL == "" && !cfg.Discover && cfg.StaticJWKS == "":
		return errors.New("jwt: no key source: set jwks_url, discover or static_jwks")
	case cfg.JWKSURL != "" && cfg.Discover:
		return errors.New("jwt: jwks_url and discover are mutually exclusive")
	case cfg.Discover && cfg.Issuer == "":
		return errors.New("jwt: discover requires issuer")
	case cfg.Leeway < 0 || cfg.RefreshInterval < 0:
		return errors.New("jwt: leeway and refresh_interval must not be negative")
	}
	if cfg.JWKSURL != "" {
		if err := checkHTTPURL(cfg.JWKSURL); err != nil {
			return fmt.Errorf("jwt: jwks_url: %w", err)
		}
	}
	if cfg.Discover {
		if err := checkHTTPURL(cfg.Issuer); err != nil {
			return fmt.Errorf("jwt: issuer (for discovery): %w", err)
		}
	}
	return nil
}

func (cfg *JWTConfig) applyDefaults() {
	if cfg.Leeway == 0 {
		cfg.Leeway = duration.Duration(defaultLeeway)
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = duration.Duration(defaultRefreshInterval)
	}
	if cfg.SubjectClaim == "" {
		cfg.SubjectClaim = "sub"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
}

// Authenticate implements Authenticator. No bearer, or a bearer that is not
// JWT-shaped, is ErrNoCredentials so static tokens can be tried next.
func (j *JWT) Authenticate(r *http.Request) (*Principal, error) {
	return j.v.Authenticate(r)
}
