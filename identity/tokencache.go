package identity

import (
	"crypto/sha256"
	"time"
	"unsafe"

	"github.com/go-jose/go-jose/v4/jwt"
	lru "github.com/hashicorp/golang-lru/v2"
)

const (
	// verifiedTokenEntries bounds each verifier's cache of verified tokens.
	// An entry is a principal (its claims) and a few words: a few MB for
	// the usual tokens of a few hundred bytes.
	verifiedTokenEntries = 4096
	// maxCachedToken leaves larger tokens (an IdP's hundreds of groups) to
	// be verified on every request rather than pinning 64 KiB of claims
	// per entry.
	maxCachedToken = 8 << 10
)

// verifiedTokens remembers what a verifier has already checked: a token
// that passed every check names the same principal until its exp, so a
// client sending the same bearer on every request (a scan asking for a
// signature per file) pays one signature verification, not one per
// request. It lives and dies with its verifier, so a config reload (a new
// Issuer or JWT) starts with none: a client removed, an audience changed,
// take effect at once, as before.
//
// The key is the SHA-256 of the whole token, collision resistant: a token
// that differs in any byte (another principal's, a forged signature) is
// another key and is verified in full.
type verifiedTokens struct {
	lru *lru.Cache[[sha256.Size]byte, verifiedToken]
}

// verifiedToken is one cached verification.
type verifiedToken struct {
	p *Principal
	// from and until bound when the entry may answer: from the earliest
	// time the checks accepted the token (nbf and iat, less the leeway),
	// until its exp. Past exp (in the leeway) the token is verified again,
	// so the cache never widens what verification accepts.
	from, until int64 // Unix seconds, as the claims are
	// keys is the key set the signature was checked against (keySource's
	// epoch): when a JWKS refresh replaces it, the entry no longer answers,
	// so a key the IdP withdrew stops its tokens as it did without a cache.
	keys any
}

func newVerifiedTokens() *verifiedTokens {
	c, err := lru.New[[sha256.Size]byte, verifiedToken](verifiedTokenEntries)
	if err != nil { // only for a size below 1
		panic(err)
	}
	return &verifiedTokens{lru: c}
}

// tokenKey hashes tok without copying it ([]byte(tok) would allocate on
// every request); Sum256 only reads the bytes.
func tokenKey(tok string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(tok), len(tok)))
}

// get returns the principal cached for key when it may answer at now under
// the key set keys.
func (c *verifiedTokens) get(key [sha256.Size]byte, now time.Time, keys any) (*Principal, bool) {
	e, ok := c.lru.Get(key)
	if !ok {
		return nil, false
	}
	if s := now.Unix(); s < e.from || s >= e.until || e.keys != keys {
		c.lru.Remove(key)
		return nil, false
	}
	return e.p, true
}

// add remembers p for key, verified at now under keys with claims std.
func (c *verifiedTokens) add(key [sha256.Size]byte, p *Principal, std *jwt.Claims, leeway time.Duration, now time.Time, keys any) {
	if std.Expiry == nil { // checkClaims refuses these; never cache one
		return
	}
	e := verifiedToken{p: p, until: std.Expiry.Time().Unix(), keys: keys}
	if e.until <= now.Unix() {
		return // accepted in the leeway only: nothing to remember
	}
	for _, d := range []*jwt.NumericDate{std.NotBefore, std.IssuedAt} {
		if d == nil {
			continue
		}
		t := d.Time().Add(-leeway)
		from := t.Unix()
		if t.Nanosecond() != 0 { // rounded up: never earlier than the checks allow
			from++
		}
		e.from = max(e.from, from)
	}
	c.lru.Add(key, e)
}
