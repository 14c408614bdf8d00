package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/identity"
)

// testClock is a clock the test moves.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

// A token verified once answers from the cache only inside the window its
// checks accepted: a cached token past exp (and its leeway) is refused as
// expired, and one before nbf (a clock set back) as not valid yet, exactly
// as without the cache.
func TestCachedTokenKeepsItsValidity(t *testing.T) {
	key := newECKey(t, "k")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(t, key), Issuer: testIssuer,
		Leeway: duration.Duration(10 * time.Second)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Truncate(time.Second)
	clock := &testClock{t: start}
	identity.SetClock(j, clock.now)
	tok := sign(t, key, goodClaims(map[string]any{
		"iat": start.Unix(), "nbf": start.Unix(), "exp": start.Add(time.Minute).Unix()}))

	mustAccept(t, j, tok) // verified and cached
	clock.t = start.Add(30 * time.Second)
	mustAccept(t, j, tok)
	clock.t = start.Add(time.Minute + 5*time.Second) // past exp, inside the leeway: as without a cache
	mustAccept(t, j, tok)
	clock.t = start.Add(time.Minute + 11*time.Second)
	mustReject(t, j, tok, "expired")
	clock.t = start.Add(30 * time.Second)
	mustAccept(t, j, tok) // cached again
	clock.t = start.Add(-11 * time.Second)
	mustReject(t, j, tok, "not valid yet")
}

// The cache is keyed by the whole token: another principal's token, or
// this one with a byte of its signature changed, never gets the cached
// principal.
func TestCachedTokenIsOnlyItsOwn(t *testing.T) {
	key, other := newECKey(t, "k"), newECKey(t, "k")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(t, key), Issuer: testIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := sign(t, key, goodClaims(map[string]any{"sub": "alice", "groups": []string{"analysts"}}))
	bob := sign(t, key, goodClaims(map[string]any{"sub": "bob", "groups": []string{"admins"}}))
	for range 3 { // the first round verifies, the others answer from the cache
		if p := mustAccept(t, j, alice); p.ID != "alice" || strings.Join(p.Groups, ",") != "analysts" {
			t.Fatalf("alice's token: %+v", p)
		}
		if p := mustAccept(t, j, bob); p.ID != "bob" || strings.Join(p.Groups, ",") != "admins" {
			t.Fatalf("bob's token: %+v", p)
		}
	}
	// alice's header and claims with another key's signature (same kid).
	forged := sign(t, other, goodClaims(map[string]any{"sub": "alice", "groups": []string{"analysts"}}))
	mustReject(t, j, forged, "bad signature")
	// alice's token with a character of its signature changed (not the
	// last: its low bits are base64 padding, which decoding ignores).
	n := len(alice) - 10
	swapped := byte('A')
	if alice[n] == 'A' {
		swapped = 'B'
	}
	mustReject(t, j, alice[:n]+string(swapped)+alice[n+1:], "bad signature")
	mustAccept(t, j, alice)
}

// A config reload builds a new Issuer (the same process key): its cache
// starts empty, so a client the new config drops is refused at once
// although the old Issuer had its token cached.
func TestReloadDropsCachedTokens(t *testing.T) {
	before := newIssuer(t, issuerConfig())
	tok := issueToken(t, before, "spark", sparkSecret)
	mustAccept(t, before.Authenticator(), tok)
	mustAccept(t, before.Authenticator(), tok) // from the cache

	cfg := issuerConfig()
	cfg.Clients = cfg.Clients[1:] // spark removed
	after := newIssuer(t, cfg)
	mustReject(t, after.Authenticator(), tok, "unknown client")
	// The same config again accepts it: the key survived, only the cache
	// and the client list are new.
	mustAccept(t, newIssuer(t, issuerConfig()).Authenticator(), tok)
}

// A token answered from the cache costs no allocation: the bearer is
// read, hashed and looked up in place.
func TestCachedVerifyAllocations(t *testing.T) {
	key := newECKey(t, "k")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(t, key), Issuer: testIssuer, Audience: testAudience}, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := newIssuer(t, issuerConfig())
	for name, c := range map[string]struct {
		a   identity.Authenticator
		tok string
	}{
		"idp token":    {j, sign(t, key, goodClaims(nil))},
		"issued token": {i.Authenticator(), issueToken(t, i, "spark", sparkSecret)},
	} {
		r := bearerRequest(c.tok)
		mustAccept(t, c.a, c.tok)
		var authErr error
		allocs := testing.AllocsPerRun(100, func() { _, authErr = c.a.Authenticate(r) })
		if authErr != nil {
			t.Fatalf("%s: %v", name, authErr)
		}
		if allocs > 0 {
			t.Errorf("%s: a cached verify allocates %.0f objects, budget 0", name, allocs)
		}
	}
}
