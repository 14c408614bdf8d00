package identity

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// StaticToken is one long-lived bearer token, configured by its hash.
type StaticToken struct {
	// ID is the principal the token authenticates as (required).
	ID string `json:"id"`
	// Groups are the principal's groups, for the policy (default: none).
	Groups []string `json:"groups,omitempty"`
	// SHA256 is the hex SHA-256 of the token (required); tokens are never
	// stored in clear.
	SHA256 string `json:"sha256"`
}

// StaticTokens authenticates opaque bearer tokens against configured hashes.
type StaticTokens struct {
	entries []staticEntry
}

type staticEntry struct {
	id     string
	hash   [sha256.Size]byte
	groups []string
}

var errUnknownToken = errors.New("unknown token")

// NewStaticTokens validates the configured hashes. Several tokens may share an
// ID (rotation: old and new token valid at once), but not a hash, since the
// principal would then be ambiguous.
func NewStaticTokens(tokens []StaticToken) (*StaticTokens, error) {
	if len(tokens) == 0 {
		return nil, errors.New("static tokens: none configured")
	}
	s := &StaticTokens{entries: make([]staticEntry, 0, len(tokens))}
	owners := make(TokenOwners, len(tokens))
	for i, t := range tokens {
		if t.ID == "" {
			return nil, fmt.Errorf("static tokens: entry %d: missing id", i)
		}
		h, err := parseSHA256Hex(t.SHA256)
		if err != nil {
			return nil, fmt.Errorf("static tokens: %q: sha256 %w", t.ID, err)
		}
		if err := owners.Claim(fmt.Sprintf("%q", t.ID), h); err != nil {
			return nil, fmt.Errorf("static tokens: %w", err)
		}
		s.entries = append(s.entries, staticEntry{id: t.ID, hash: h, groups: slices.Clone(t.Groups)})
	}
	return s, nil
}

// Authenticate implements Authenticator. JWT-shaped bearers are left to the JWT
// authenticators (ErrNoCredentials) so the chain order does not matter.
func (s *StaticTokens) Authenticate(r *http.Request) (*Principal, error) {
	tok, err := BearerToken(r)
	if err != nil {
		return nil, err
	}
	if isJWTShaped(tok) {
		return nil, ErrNoCredentials
	}
	e := s.lookup(tok)
	if e == nil {
		return nil, errUnknownToken
	}
	return &Principal{ID: e.id, Groups: emptyIfNil(slices.Clone(e.groups)), Claims: map[string]any{}}, nil
}

// lookup compares against every entry without early exit, in constant time, so
// response timing reveals neither which entry matched nor how close a guess was.
func (s *StaticTokens) lookup(tok string) *staticEntry {
	sum := sha256.Sum256([]byte(tok))
	match := -1
	for i := range s.entries {
		eq := subtle.ConstantTimeCompare(sum[:], s.entries[i].hash[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return nil
	}
	return &s.entries[match]
}
