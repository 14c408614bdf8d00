package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// maxTokenBytes bounds the work an unauthenticated caller can make us do.
// Generous because some IdPs put hundreds of groups in their tokens.
const maxTokenBytes = 64 << 10

// Reasons a JWT is rejected. Messages name the check that failed and never
// include the token.
var (
	errTokenTooLarge   = errors.New("invalid token: too large")
	errMalformedToken  = errors.New("invalid token: malformed")
	errBadSignature    = errors.New("invalid token: bad signature")
	errUnknownKey      = errors.New("invalid token: unknown signing key")
	errMalformedClaims = errors.New("invalid token: malformed claims")
	errMissingExpiry   = errors.New("invalid token: missing exp")
	errExpired         = errors.New("invalid token: expired")
	errNotYetValid     = errors.New("invalid token: not valid yet (nbf)")
	errIssuedInFuture  = errors.New("invalid token: issued in the future (iat)")
	errWrongIssuer     = errors.New("invalid token: wrong issuer")
	errWrongAudience   = errors.New("invalid token: wrong audience")
	errMissingSubject  = errors.New("invalid token: missing subject")
	errUnknownSubject  = errors.New("invalid token: unknown client")
	errBadGroups       = errors.New("invalid token: groups claim is not a string or a list of strings")
)

// keySource yields verification keys. keys returns a read-only set that holds
// at least one key fitting (kid, alg), or an error.
type keySource interface {
	keys(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error)
	// epoch names the keys currently served, comparable with ==: it
	// changes when they may have (a JWKS fetched again), and is nil for a
	// set that never changes. Cached verifications hold to it.
	epoch() any
}

// verifier holds the checks shared by IdP tokens (JWT) and self-issued tokens
// (Issuer), so both get the same alg allow-list and claim validation.
type verifier struct {
	algs         []jose.SignatureAlgorithm // explicit allow-list: never "none", never HS* next to public keys
	source       keySource
	issuer       string
	audience     jwt.Audience // nil: not checked
	leeway       time.Duration
	subjectClaim string
	groupsClaim  string
	knownSubject func(string) bool // optional extra check on the subject
	// deferForeign makes JWTs whose (unverified) iss is not issuer
	// ErrNoCredentials instead of an error, so that a chain can hold this
	// verifier in front of another JWT authenticator. Routing on an
	// unverified claim is safe: it only picks which verifier runs all checks.
	deferForeign bool
	// verified caches the tokens that passed (see verifiedTokens); nil
	// verifies every request.
	verified *verifiedTokens
	// now is the clock the claims are checked against (tests move it).
	now func() time.Time
}

// Authenticate implements Authenticator.
func (v *verifier) Authenticate(r *http.Request) (*Principal, error) {
	tok, err := BearerToken(r)
	if err != nil {
		return nil, err
	}
	if !isJWTShaped(tok) {
		return nil, ErrNoCredentials // maybe a static token: let the chain go on
	}
	// A token verified before is looked up first, ahead of the foreign
	// check: only this verifier's own tokens are in its cache.
	cacheable := v.verified != nil && len(tok) <= maxCachedToken
	var key [sha256.Size]byte
	var keys any
	if cacheable {
		key, keys = tokenKey(tok), v.source.epoch()
		if p, ok := v.verified.get(key, v.now(), keys); ok {
			return p, nil
		}
	}
	if v.deferForeign && len(tok) <= maxTokenBytes {
		if iss, ok := unverifiedIssuer(tok); ok && iss != v.issuer {
			return nil, ErrNoCredentials
		}
	}
	p, std, err := v.verify(r.Context(), tok)
	if err == nil && cacheable {
		v.verified.add(key, p, &std, v.leeway, v.now(), keys)
	}
	return p, err
}

// unverifiedIssuer reads iss from a compact JWS payload without checking
// anything; ok is false when the payload cannot be read, which then fails
// verification as malformed rather than being passed on.
func unverifiedIssuer(tok string) (iss string, ok bool) {
	_, rest, _ := strings.Cut(tok, ".")
	payload, _, _ := strings.Cut(rest, ".")
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", false
	}
	var c struct {
		Iss *string `json:"iss"`
	}
	if json.Unmarshal(b, &c) != nil {
		return "", false
	}
	if c.Iss == nil {
		return "", true
	}
	return *c.Iss, true
}

// verify checks the signature first, so claims of unsigned data are never
// interpreted, then the registered claims, then builds the principal. The
// registered claims come back for the cache (the token's exp and nbf).
func (v *verifier) verify(ctx context.Context, raw string) (*Principal, jwt.Claims, error) {
	var std jwt.Claims
	if len(raw) > maxTokenBytes {
		return nil, std, errTokenTooLarge
	}
	tok, err := jwt.ParseSigned(raw, v.algs)
	if err != nil {
		return nil, std, parseError(err)
	}
	if len(tok.Headers) != 1 {
		return nil, std, errMalformedToken
	}
	if err := v.checkSignature(ctx, tok); err != nil {
		return nil, std, err
	}
	var all map[string]any
	// The signature was verified above; this only decodes the same payload.
	if err := tok.UnsafeClaimsWithoutVerification(&std, &all); err != nil || all == nil {
		return nil, std, errMalformedClaims
	}
	if err := v.checkClaims(std); err != nil {
		return nil, std, err
	}
	p, err := v.principal(all)
	return p, std, err
}

// checkSignature tries every key fitting the header's kid and alg; tokens
// without kid are tried against all fitting keys of the set.
func (v *verifier) checkSignature(ctx context.Context, tok *jwt.JSONWebToken) error {
	h := tok.Headers[0]
	keys, err := v.source.keys(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return err
	}
	for i := range keys {
		if !keyFits(&keys[i], h.KeyID, h.Algorithm) {
			continue
		}
		if tok.Claims(keys[i].Key) == nil { // no destination: verifies only
			return nil
		}
	}
	return errBadSignature
}

func (v *verifier) checkClaims(c jwt.Claims) error {
	if c.Expiry == nil {
		return errMissingExpiry // a token without exp would be valid forever
	}
	want := jwt.Expected{Issuer: v.issuer, AnyAudience: v.audience, Time: v.now()}
	switch err := c.ValidateWithLeeway(want, v.leeway); {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrExpired):
		return errExpired
	case errors.Is(err, jwt.ErrNotValidYet):
		return errNotYetValid
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return errIssuedInFuture
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return errWrongIssuer
	case errors.Is(err, jwt.ErrInvalidAudience):
		return errWrongAudience
	default:
		return errMalformedClaims
	}
}

func (v *verifier) principal(all map[string]any) (*Principal, error) {
	sub, _ := lookupClaim(all, v.subjectClaim).(string)
	if sub == "" {
		return nil, errMissingSubject
	}
	if v.knownSubject != nil && !v.knownSubject(sub) {
		return nil, errUnknownSubject
	}
	groups, err := groupList(lookupClaim(all, v.groupsClaim))
	if err != nil {
		return nil, err
	}
	return &Principal{ID: sub, Groups: groups, Claims: all}, nil
}

// lookupClaim resolves name as a top-level claim first, because namespaced
// claims ("https://example.com/groups") contain dots themselves, then as a
// dotted path into nested objects ("realm_access.roles").
func lookupClaim(claims map[string]any, name string) any {
	if v, ok := claims[name]; ok {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// groupList accepts a single string or a list of strings. Any other shape is
// an error rather than silently dropped: a misconfigured groups claim should
// be loud, not an empty authorization context.
func groupList(v any) ([]string, error) {
	switch g := v.(type) {
	case nil:
		return []string{}, nil
	case string:
		if g == "" {
			return []string{}, nil
		}
		return []string{g}, nil
	case []any:
		out := make([]string, 0, len(g))
		for _, e := range g {
			s, ok := e.(string)
			if !ok {
				return nil, errBadGroups
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	default:
		return nil, errBadGroups
	}
}

// knownAlgs are names safe to repeat in errors: a header alg outside this set
// is attacker-chosen text and is not echoed.
var knownAlgs = map[string]bool{
	"none": true, "HS256": true, "HS384": true, "HS512": true,
	"RS256": true, "RS384": true, "RS512": true, "PS256": true, "PS384": true, "PS512": true,
	"ES256": true, "ES384": true, "ES512": true, "EdDSA": true,
}

func parseError(err error) error {
	var alg *jose.ErrUnexpectedSignatureAlgorithm
	if errors.As(err, &alg) && alg.Got != "" {
		if knownAlgs[string(alg.Got)] {
			return fmt.Errorf("invalid token: unsupported alg %q", alg.Got)
		}
		return errors.New("invalid token: unsupported alg")
	}
	return errMalformedToken
}

// unknownKeyError names the kid (a key identifier, not a secret) to help
// operators debug rotations; it is quoted and truncated as it is caller input.
func unknownKeyError(kid string) error {
	if kid == "" {
		return fmt.Errorf("%w (token has no kid)", errUnknownKey)
	}
	if len(kid) > 64 {
		kid = kid[:64] + "..."
	}
	return fmt.Errorf("%w (kid %q)", errUnknownKey, kid)
}
