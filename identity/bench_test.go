package identity_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/lakegate/lakegate/identity"
)

// BenchmarkJWTAuthenticate measures the per-request cost of an ES256 IdP
// token with cached keys. "cached": the same token every request, answered
// from the verified-token cache; "uncached": a token not seen before every
// request (more tokens than the cache holds, in turn), so each one is
// parsed, its signature checked, its claims decoded and the principal built.
func BenchmarkJWTAuthenticate(b *testing.B) {
	key := newECKey(b, "bench")
	j, err := identity.NewJWT(identity.JWTConfig{StaticJWKS: jwksJSON(b, key), Issuer: testIssuer, Audience: testAudience}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		r := bearerRequest(sign(b, key, goodClaims(nil)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := j.Authenticate(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		reqs := make([]*http.Request, 5000) // > the cache's 4,096 entries
		for n := range reqs {
			reqs[n] = bearerRequest(sign(b, key, goodClaims(map[string]any{"jti": strconv.Itoa(n)})))
		}
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if _, err := j.Authenticate(reqs[n%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
	})
}
