package identity_test

import (
	"testing"

	"github.com/lakegate/lakegate/identity"
)

// BenchmarkJWTAuthenticate measures the per-request cost of an ES256 IdP
// token with cached keys: parse, one signature check, claims, principal.
func BenchmarkJWTAuthenticate(b *testing.B) {
	key := newECKey(b, "bench")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(b, key), Issuer: testIssuer, Audience: testAudience}, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := bearerRequest(sign(b, key, goodClaims(nil)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}
