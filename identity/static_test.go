package identity_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lakegate/lakegate/identity"
)

func TestStaticTokens(t *testing.T) {
	s, err := identity.NewStaticTokens([]identity.StaticToken{
		{ID: "ci", Groups: []string{"writers"}, SHA256: identity.HashSecret("tok-ci-current")},
		{ID: "ci", Groups: []string{"writers"}, SHA256: strings.ToUpper(identity.HashSecret("tok-ci-previous"))},
		{ID: "dashboard", SHA256: identity.HashSecret("tok-dash")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"tok-ci-current": "ci", "tok-ci-previous": "ci", "tok-dash": "dashboard"} {
		p, err := s.Authenticate(bearerRequest(tok))
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		if p.ID != want || p.Groups == nil || p.Claims == nil {
			t.Fatalf("principal %+v, want %s", p, want)
		}
	}
	p, _ := s.Authenticate(bearerRequest("tok-ci-current"))
	if !slices.Equal(p.Groups, []string{"writers"}) {
		t.Fatalf("groups %q", p.Groups)
	}
	p.Groups[0] = "admins" // callers mutating a principal must not change the config
	if p, _ := s.Authenticate(bearerRequest("tok-ci-current")); p.Groups[0] != "writers" {
		t.Fatal("principal shares the configured groups slice")
	}

	for _, tok := range []string{"tok-ci", "tok-ci-current2", "TOK-DASH", "", identity.HashSecret("tok-dash")} {
		p, err := s.Authenticate(bearerRequest(tok))
		if tok == "" {
			// "Authorization" absent
			if !errors.Is(err, identity.ErrNoCredentials) {
				t.Fatalf("missing header: got %v, want ErrNoCredentials", err)
			}
			continue
		}
		if err == nil || p != nil || errors.Is(err, identity.ErrNoCredentials) || err.Error() != "unknown token" {
			t.Fatalf("%q: got (%v, %v), want unknown token", tok, p, err)
		}
	}

	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer   ")
	if _, err := s.Authenticate(r); err == nil || errors.Is(err, identity.ErrNoCredentials) {
		t.Fatalf("empty bearer: got %v", err)
	}

	// JWT-shaped bearers belong to the JWT authenticators.
	if _, err := s.Authenticate(bearerRequest("eyJhbGciOiJub25lIn0.e30.")); !errors.Is(err, identity.ErrNoCredentials) {
		t.Fatalf("JWT-shaped: got %v, want ErrNoCredentials", err)
	}
	r.Header.Set("Authorization", "Basic dTpw")
	if _, err := s.Authenticate(r); !errors.Is(err, identity.ErrNoCredentials) {
		t.Fatalf("Basic: got %v, want ErrNoCredentials", err)
	}
	r.Header.Set("Authorization", "bearer tok-dash") // scheme is case-insensitive
	if _, err := s.Authenticate(r); err != nil {
		t.Fatalf("lower-case scheme: %v", err)
	}
	r.Header.Add("Authorization", "Bearer tok-ci-current")
	if _, err := s.Authenticate(r); err == nil || errors.Is(err, identity.ErrNoCredentials) {
		t.Fatalf("two Authorization headers: got %v", err)
	}
}

func TestNewStaticTokensValidates(t *testing.T) {
	h := identity.HashSecret("x")
	bad := map[string][]identity.StaticToken{
		"none":           nil,
		"no id":          {{SHA256: h}},
		"not hex":        {{ID: "a", SHA256: strings.Repeat("z", 64)}},
		"short":          {{ID: "a", SHA256: h[:62]}},
		"clear token":    {{ID: "a", SHA256: "my-secret-token"}},
		"duplicate hash": {{ID: "a", SHA256: h}, {ID: "b", SHA256: h}},
		"empty secret":   {{ID: "a", SHA256: identity.HashSecret("")}},
	}
	for name, cfg := range bad {
		_, err := identity.NewStaticTokens(cfg)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "my-secret-token") {
			t.Errorf("%s: error echoes the configured value: %v", name, err)
		}
	}
}

func TestHashSecret(t *testing.T) {
	// echo -n abc | sha256sum
	if got := identity.HashSecret("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatal(got)
	}
}

// A hash configured for two ids names both in the refusal (the shared
// check recipients of Delta Sharing shares use too), never the hash.
func TestNewStaticTokensNamesBothOwners(t *testing.T) {
	h := identity.HashSecret("x")
	_, err := identity.NewStaticTokens([]identity.StaticToken{{ID: "a", SHA256: h}, {ID: "b", SHA256: h}})
	if err == nil || err.Error() != `static tokens: "a" and "b" are configured with the same token; give each its own` {
		t.Fatalf("got %v", err)
	}
}
