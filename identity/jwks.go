package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	// minRefetchGap rate-limits JWKS fetches: tokens with made-up kids must not
	// turn the gateway into an amplifier against the IdP.
	minRefetchGap = 10 * time.Second
	// fetchTimeout bounds one discovery or JWKS fetch.
	fetchTimeout = 10 * time.Second
	// maxDocumentBytes bounds JWKS and discovery documents.
	maxDocumentBytes = 1 << 20
	// minRSABits refuses keys too weak to be trusted.
	minRSABits = 2048
)

var errKeysUnavailable = errors.New("invalid token: signing keys unavailable")

// parseJWKS keeps the usable public signing keys of a JWKS document. Keys it
// cannot use (encryption keys, unknown types, symmetric keys, weak RSA) are
// skipped rather than failing the whole set: IdPs publish all sorts of keys.
func parseJWKS(doc []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("JWKS is not valid JSON: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		if k, ok := usableKey(raw); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS has no usable public signing key (%d keys listed)", len(set.Keys))
	}
	return keys, nil
}

// usableKey reduces a JWK to its public part. Symmetric keys are dropped here
// so that no HMAC secret can ever come from a key set (algorithm confusion).
func usableKey(raw json.RawMessage) (jose.JSONWebKey, bool) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() || (k.Use != "" && k.Use != "sig") {
		return jose.JSONWebKey{}, false
	}
	pub := k.Public() // a private JWK published by mistake still only verifies
	if !pub.Valid() || !pub.IsPublic() {
		return jose.JSONWebKey{}, false
	}
	if r, ok := pub.Key.(*rsa.PublicKey); ok && r.N.BitLen() < minRSABits {
		return jose.JSONWebKey{}, false
	}
	return pub, true
}

// keyFits reports whether k may verify a token with this kid and alg. The key
// type must match the algorithm family (and curve), so a key can never be used
// under an algorithm it was not made for.
func keyFits(k *jose.JSONWebKey, kid, alg string) bool {
	if kid != "" && k.KeyID != kid {
		return false
	}
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return ecdsaAlg(key.Curve) == alg
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	case []byte: // only the Issuer's own HS256 secret; never from a JWKS
		return alg == string(jose.HS256)
	}
	return false
}

func ecdsaAlg(c elliptic.Curve) string {
	switch c {
	case elliptic.P256():
		return string(jose.ES256)
	case elliptic.P384():
		return string(jose.ES384)
	case elliptic.P521():
		return string(jose.ES512)
	}
	return ""
}

func hasKey(keys []jose.JSONWebKey, kid, alg string) bool {
	for i := range keys {
		if keyFits(&keys[i], kid, alg) {
			return true
		}
	}
	return false
}

// staticKeys is a fixed key set (static JWKS, or the Issuer's own key).
type staticKeys []jose.JSONWebKey

func (s staticKeys) keys(_ context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	if !hasKey(s, kid, alg) {
		return nil, unknownKeyError(kid)
	}
	return s, nil
}

func (staticKeys) epoch() any { return nil }

// keySources consults each source in order (static keys before the network).
type keySources []keySource

func (ss keySources) keys(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	var err error
	for _, s := range ss {
		var keys []jose.JSONWebKey
		if keys, err = s.keys(ctx, kid, alg); err == nil {
			return keys, nil
		}
	}
	return nil, err // the last source is the remote one: its error says the most
}

// epoch is the remote source's (there is at most one), else nil.
func (ss keySources) epoch() any {
	for _, s := range ss {
		if e := s.epoch(); e != nil {
			return e
		}
	}
	return nil
}

// keySet is an immutable snapshot of fetched keys.
type keySet struct {
	keys    []jose.JSONWebKey
	fetched time.Time
}

// remoteKeys is a JWKS fetched over HTTP, found directly or through OIDC
// discovery. Requests read the cached snapshot without locking; fetches are
// serialised and rate-limited.
type remoteKeys struct {
	client   *http.Client
	issuer   string // for discovery
	interval time.Duration
	minGap   time.Duration

	set        atomic.Pointer[keySet]
	refreshing atomic.Bool

	mu      sync.Mutex // serialises fetches; guards the fields below
	jwksURL string     // configured, or discovered on first successful fetch
	lastTry time.Time
}

// keys serves from the cache. A stale cache is refreshed in the background so
// no request waits for it; an unknown kid (the IdP may have rotated) or an empty
// cache (IdP down at start) triggers a synchronous, rate-limited refetch.
func (k *remoteKeys) keys(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, error) {
	set := k.set.Load()
	if set != nil && hasKey(set.keys, kid, alg) {
		if time.Since(set.fetched) >= k.interval {
			k.refreshInBackground()
		}
		return set.keys, nil
	}
	// A client hanging up must not abort a fetch that used up the rate limit.
	ctx = context.WithoutCancel(ctx)
	fresh, err := k.refetch(ctx, set)
	if fresh == nil {
		return nil, fmt.Errorf("%w: %v", errKeysUnavailable, err)
	}
	if !hasKey(fresh.keys, kid, alg) {
		return nil, unknownKeyError(kid)
	}
	return fresh.keys, nil
}

// epoch is the snapshot served: every fetch stores a new one. A stale one
// is refreshed in the background, as keys does: requests answered from the
// verified-token cache never call keys, and without this a key the IdP
// withdrew would be trusted until its tokens expire.
func (k *remoteKeys) epoch() any {
	set := k.set.Load()
	if set == nil {
		return nil
	}
	if time.Since(set.fetched) >= k.interval {
		k.refreshInBackground()
	}
	return set
}

// refetch fetches unless another caller already replaced the snapshot seen
// (then that result is used) or the last attempt is too recent. It returns
// the newest snapshot, possibly the old one alongside a fetch error.
func (k *remoteKeys) refetch(ctx context.Context, seen *keySet) (*keySet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cur := k.set.Load(); cur != seen {
		return cur, nil
	}
	if !k.lastTry.IsZero() && time.Since(k.lastTry) < k.minGap {
		return seen, errors.New("refetch rate-limited after a recent attempt")
	}
	k.lastTry = time.Now()
	fresh, err := k.fetch(ctx)
	if err != nil {
		return seen, err // keep serving the last good keys while the IdP is down
	}
	k.set.Store(fresh)
	return fresh, nil
}

func (k *remoteKeys) refreshInBackground() {
	if !k.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer k.refreshing.Store(false)
		_, _ = k.refetch(context.Background(), k.set.Load())
	}()
}

// fetch runs with k.mu held.
func (k *remoteKeys) fetch(ctx context.Context) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if k.jwksURL == "" {
		u, err := discoverJWKSURL(ctx, k.client, k.issuer)
		if err != nil {
			return nil, err
		}
		k.jwksURL = u
	}
	doc, err := getDocument(ctx, k.client, k.jwksURL)
	if err != nil {
		return nil, err
	}
	keys, err := parseJWKS(doc)
	if err != nil {
		return nil, err
	}
	return &keySet{keys: keys, fetched: time.Now()}, nil
}

// discoverJWKSURL reads the OIDC discovery document. Its issuer must equal the
// configured one (OIDC Discovery 1.0 §4.3), or a document could send us to
// somebody else's keys.
func discoverJWKSURL(ctx context.Context, client *http.Client, issuer string) (string, error) {
	doc, err := getDocument(ctx, client, strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return "", err
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(doc, &meta); err != nil {
		return "", fmt.Errorf("discovery document is not valid JSON: %w", err)
	}
	if meta.Issuer != issuer {
		return "", fmt.Errorf("discovery document issuer %q does not match configured issuer %q", meta.Issuer, issuer)
	}
	if err := checkHTTPURL(meta.JWKSURI); err != nil {
		return "", fmt.Errorf("discovery document jwks_uri: %w", err)
	}
	return meta.JWKSURI, nil
}

func getDocument(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("GET %s: document larger than %d bytes", u, maxDocumentBytes)
	}
	return body, nil
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return nil
}
