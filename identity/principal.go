// Package identity authenticates callers of the gateway: bearer JWTs issued by
// an external IdP (JWKS or OIDC discovery), static bearer tokens, and tokens
// minted by the built-in OAuth2 client-credentials endpoint.
//
// It has no Caddy dependency: it takes plain config structs so it can be unit
// tested and fuzzed on its own.
package identity

import (
	"errors"
	"net/http"
	"strings"
)

// Principal is an authenticated caller. One Principal may be handed to
// many requests at once (a verified token's is cached): read it, never
// change it or its Groups and Claims.
type Principal struct {
	ID     string         `json:"id"`
	Groups []string       `json:"groups"`
	Claims map[string]any `json:"claims"`
}

// ErrNoCredentials means the authenticator does not apply to the request
// (no credentials of its kind): the caller should try the next one.
// Any other error from Authenticate means the credentials are invalid.
var ErrNoCredentials = errors.New("no credentials")

// Authenticator turns a request into a Principal.
type Authenticator interface {
	Authenticate(r *http.Request) (*Principal, error)
}

// Chain tries each authenticator in order: the first result that is not
// ErrNoCredentials wins; when all of them return ErrNoCredentials so does the
// chain.
type Chain []Authenticator

// errNoPrincipal guards the gateway against a buggy authenticator returning
// (nil, nil), which would otherwise look like success with no identity.
var errNoPrincipal = errors.New("authenticator returned no principal")

// Authenticate implements Authenticator.
func (c Chain) Authenticate(r *http.Request) (*Principal, error) {
	for _, a := range c {
		if a == nil {
			continue
		}
		p, err := a.Authenticate(r)
		if errors.Is(err, ErrNoCredentials) {
			continue
		}
		if err == nil && p == nil {
			return nil, errNoPrincipal
		}
		return p, err
	}
	return nil, ErrNoCredentials
}

// errMultipleAuthorization rejects requests carrying several Authorization
// headers: different hops could pick different ones, so none is trusted.
var errMultipleAuthorization = errors.New("multiple Authorization headers")

// BearerToken returns the bearer credential of r, the one parser every
// front door uses: the scheme matches case-insensitively, and several
// Authorization headers are an error. A missing header or another scheme
// (Basic, ...) is ErrNoCredentials: some other authenticator may apply.
func BearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return "", ErrNoCredentials
	case 1:
	default:
		return "", errMultipleAuthorization
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") { // auth schemes are case-insensitive (RFC 7235)
		return "", ErrNoCredentials
	}
	return strings.TrimSpace(rest), nil
}

// isJWTShaped reports whether tok looks like a compact JWS (exactly two dots).
// It is how JWT and static-token authenticators split bearer values between
// them without either having to know the other's secrets.
func isJWTShaped(tok string) bool {
	return strings.Count(tok, ".") == 2
}

// emptyIfNil keeps Principal JSON stable ("groups": [] rather than null).
func emptyIfNil(groups []string) []string {
	if groups == nil {
		return []string{}
	}
	return groups
}
