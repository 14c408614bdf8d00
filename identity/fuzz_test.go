package identity_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lakegate/lakegate/identity"
)

// FuzzJWTAuthenticate feeds arbitrary bytes as the bearer value. Whatever
// they are, authenticators must not panic and must not accept them: the
// verification keys' private halves are unknown to the fuzzer (the ES256 key
// is discarded, the HS256 secret is never used to sign a seed).
func FuzzJWTAuthenticate(f *testing.F) {
	published := newECKey(f, "fuzz")
	j, err := identity.NewJWT(identity.JWTConfig{
		StaticJWKS: jwksJSON(f, published), Issuer: testIssuer, Audience: testAudience,
		GroupsClaim: "realm_access.roles",
	}, nil)
	if err != nil {
		f.Fatal(err)
	}
	cfg := issuerConfig()
	cfg.SigningSecret = sharedSecret
	issuer := newIssuer(f, cfg)
	static, err := identity.NewStaticTokens([]identity.StaticToken{{ID: "s", SHA256: identity.HashSecret("unguessable-static-token-value")}})
	if err != nil {
		f.Fatal(err)
	}
	chain := identity.Chain{issuer.Authenticator(), j, static}

	// Well-formed tokens the authenticators cannot accept: right kid and
	// claims, signed by a look-alike key or with a guessed HMAC secret.
	forger := newECKey(f, "fuzz")
	f.Add([]byte(sign(f, forger, goodClaims(nil))))
	f.Add([]byte(sign(f, forger, goodClaims(map[string]any{"realm_access": map[string]any{"roles": []any{"a", 1}}}))))
	f.Add([]byte(rawToken(f, map[string]any{"alg": "HS256", "typ": "JWT"},
		goodClaims(map[string]any{"iss": "lakegate", "aud": "lakegate", "sub": "spark"}), []byte("guess"))))
	f.Add([]byte(rawToken(f, map[string]any{"alg": "none"}, goodClaims(nil), nil)))
	f.Add([]byte("a.b.c"))
	f.Add([]byte(""))

	f.Fuzz(func(t *testing.T, bearer []byte) {
		for name, a := range map[string]identity.Authenticator{"jwt": j, "issuer": issuer.Authenticator(), "chain": chain} {
			r := httptest.NewRequest(http.MethodGet, "/v1/config", nil)
			r.Header["Authorization"] = []string{"Bearer " + string(bearer)}
			p, err := a.Authenticate(r)
			if err == nil || p != nil {
				t.Fatalf("%s accepted %q: %+v", name, bearer, p)
			}
		}
	})
}
