package sharing

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Profile is a recipient's profile file: where the sharing server is and
// the bearer token to use.
type Profile struct {
	ShareCredentialsVersion int    `json:"shareCredentialsVersion"`
	Endpoint                string `json:"endpoint"`
	BearerToken             string `json:"bearerToken"`
	ExpirationTime          string `json:"expirationTime,omitempty"`
}

// NewProfile is the profile for token at endpoint; a zero expires means
// the token does not expire.
func NewProfile(endpoint, token string, expires time.Time) Profile {
	p := Profile{ShareCredentialsVersion: 1, Endpoint: endpoint, BearerToken: token}
	if !expires.IsZero() {
		p.ExpirationTime = expires.UTC().Format(time.RFC3339)
	}
	return p
}

// JSON is the profile file's content.
func (p Profile) JSON() []byte {
	b, _ := json.MarshalIndent(p, "", "  ")
	return append(b, '\n')
}

// NewToken makes a recipient token: 32 random bytes, URL-safe.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
