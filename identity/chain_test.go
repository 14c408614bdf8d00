package identity_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/lakegate/lakegate/identity"
)

// fixed is an Authenticator with a canned answer that records calls.
type fixed struct {
	p     *identity.Principal
	err   error
	calls *[]string
	name  string
}

func (f fixed) Authenticate(*http.Request) (*identity.Principal, error) {
	*f.calls = append(*f.calls, f.name)
	return f.p, f.err
}

func TestChain(t *testing.T) {
	var calls []string
	skip := func(name string) fixed { return fixed{err: identity.ErrNoCredentials, calls: &calls, name: name} }
	ok := func(name string) fixed { return fixed{p: &identity.Principal{ID: name}, calls: &calls, name: name} }
	bad := fixed{err: errors.New("invalid token: expired"), calls: &calls, name: "bad"}
	wrapped := fixed{err: errors.Join(identity.ErrNoCredentials), calls: &calls, name: "wrapped"}

	cases := []struct {
		name   string
		chain  identity.Chain
		wantID string
		want   error // nil, ErrNoCredentials, or the bad error
		calls  []string
	}{
		{"first applicable wins", identity.Chain{skip("a"), ok("b"), ok("c")}, "b", nil, []string{"a", "b"}},
		{"invalid stops the chain", identity.Chain{skip("a"), bad, ok("c")}, "", bad.err, []string{"a", "bad"}},
		{"order matters", identity.Chain{ok("c"), bad}, "c", nil, []string{"c"}},
		{"wrapped ErrNoCredentials skips", identity.Chain{wrapped, ok("b")}, "b", nil, []string{"wrapped", "b"}},
		{"nil entries skipped", identity.Chain{nil, ok("b")}, "b", nil, []string{"b"}},
		{"all skip", identity.Chain{skip("a"), skip("b")}, "", identity.ErrNoCredentials, []string{"a", "b"}},
		{"empty", identity.Chain{}, "", identity.ErrNoCredentials, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			p, err := tc.chain.Authenticate(bearerRequest("x"))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if (p == nil) != (tc.wantID == "") || (p != nil && p.ID != tc.wantID) {
				t.Fatalf("principal %+v, want %q", p, tc.wantID)
			}
			if len(calls) != len(tc.calls) {
				t.Fatalf("calls %v, want %v", calls, tc.calls)
			}
			for i := range calls {
				if calls[i] != tc.calls[i] {
					t.Fatalf("calls %v, want %v", calls, tc.calls)
				}
			}
		})
	}
	// A buggy authenticator answering (nil, nil) must not pass as success.
	if p, err := (identity.Chain{fixed{calls: &calls}}).Authenticate(bearerRequest("x")); err == nil || p != nil {
		t.Fatalf("(nil, nil) passed through: %v %v", p, err)
	}
}

// TestChainRealAuthenticators: a gateway-like chain routes each kind of
// bearer to the authenticator that owns it, in either order.
func TestChainRealAuthenticators(t *testing.T) {
	key := newECKey(t, "k")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(t, key), Issuer: testIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := identity.NewStaticTokens([]identity.StaticToken{{ID: "ci", SHA256: identity.HashSecret("static-token")}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := issuerConfig()
	cfg.SigningSecret = sharedSecret
	i := newIssuer(t, cfg)
	issued := issueToken(t, i, "spark", sparkSecret)
	for name, chain := range map[string]identity.Chain{
		"issuer, jwt, static": {i.Authenticator(), j, s},
		"static, issuer, jwt": {s, i.Authenticator(), j},
	} {
		t.Run(name, func(t *testing.T) {
			if p := mustAccept(t, chain, sign(t, key, goodClaims(nil))); p.ID != "alice" {
				t.Fatalf("IdP token: %q", p.ID)
			}
			if p := mustAccept(t, chain, issued); p.ID != "spark" {
				t.Fatalf("issued token: %q", p.ID)
			}
			if p := mustAccept(t, chain, "static-token"); p.ID != "ci" {
				t.Fatalf("static token: %q", p.ID)
			}
			mustReject(t, chain, "other-token", "unknown token")
			mustReject(t, chain, sign(t, key, goodClaims(map[string]any{"iss": "lakegate"})), `unsupported alg "ES256"`)
			mustReject(t, chain, "a.b.c", "malformed")
			if _, err := chain.Authenticate(bearerRequest("")); !errors.Is(err, identity.ErrNoCredentials) {
				t.Fatalf("no header: %v", err)
			}
		})
	}
	// The IdP authenticator refuses what it cannot verify rather than passing
	// it on, hence the issuer must come first.
	mustReject(t, identity.Chain{j, i.Authenticator()}, issued, `unsupported alg "HS256"`)
}
