package fileurl

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// MinKeyLen is the shortest HMAC key NewSealer accepts: 32 bytes matches the
// SHA-256 output size, below which the key, not the hash, bounds security.
const MinKeyLen = 32

// Sentinel errors returned by Sealer.Open; compare with errors.Is.
var (
	// ErrMalformed: the token is not something Seal could have produced
	// (bad base64, wrong length, unknown version).
	ErrMalformed = errors.New("fileurl: malformed token")
	// ErrTampered: well-formed, but the MAC does not verify under any key
	// for this purpose.
	ErrTampered = errors.New("fileurl: token signature mismatch")
	// ErrExpired: authentic but past its expiry.
	ErrExpired = errors.New("fileurl: token expired")
)

const (
	tokenVersion = 1
	headerLen    = 1 + 8 // version byte + big-endian unix expiry seconds
	macLen       = sha256.Size
	// maxTokenLen caps the work Open does on hostile input; sealed payloads
	// are meant to be a couple of paths, far below this.
	maxTokenLen = 8 << 10
)

// macDomain separates these MACs from any other use of the same key.
const macDomain = "lakegate/fileurl/sealer/v1\x00"

// tokenEncoding is strict so every byte string has exactly one accepted
// token spelling; otherwise trailing-bit variants of a sealed token would
// also open.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Sealer authenticates small payloads with HMAC-SHA256 and an expiry. Tokens
// are signed, not encrypted: whoever holds one can decode its payload.
// A Sealer is safe for concurrent use.
type Sealer struct {
	keys [][]byte // keys[0] seals; all keys verify (rotation)
}

// NewSealer returns a Sealer that seals with key and opens tokens made with
// key or any of oldKeys, so keys can be rotated without invalidating URLs
// already handed out. Every key must be at least MinKeyLen bytes.
func NewSealer(key []byte, oldKeys ...[]byte) (*Sealer, error) {
	all := append([][]byte{key}, oldKeys...)
	s := &Sealer{keys: make([][]byte, 0, len(all))}
	for i, k := range all {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("fileurl: sealer key %d is %d bytes, need at least %d", i, len(k), MinKeyLen)
		}
		// Copy so later mutation of the caller's slice can't change our key.
		s.keys = append(s.keys, append([]byte(nil), k...))
	}
	return s, nil
}

// RandomKey returns a fresh 32-byte key from crypto/rand, for deployments
// that don't configure one (tokens then die with the process).
func RandomKey() []byte {
	k := make([]byte, MinKeyLen)
	// crypto/rand.Read never returns an error; it aborts the program if the
	// OS entropy source fails.
	_, _ = rand.Read(k)
	return k
}

// Seal returns a URL-safe token carrying payload until expires (truncated to
// whole seconds). The purpose is bound into the MAC but not stored, so a
// token only opens under the same purpose.
func (s *Sealer) Seal(purpose string, payload []byte, expires time.Time) string {
	body := make([]byte, headerLen, headerLen+len(payload)+macLen)
	body[0] = tokenVersion
	binary.BigEndian.PutUint64(body[1:headerLen], uint64(expires.Unix()))
	body = append(body, payload...)
	body = append(body, computeMAC(s.keys[0], purpose, body)...)
	return tokenEncoding.EncodeToString(body)
}

// Open verifies token for purpose and returns its payload. Authenticity is
// checked before expiry so an attacker learns nothing from the error about
// tokens they forged.
func (s *Sealer) Open(purpose, token string, now time.Time) ([]byte, error) {
	if len(token) > maxTokenLen {
		return nil, ErrMalformed
	}
	raw, err := tokenEncoding.DecodeString(token)
	if err != nil || len(raw) < headerLen+macLen || raw[0] != tokenVersion {
		return nil, ErrMalformed
	}
	body, mac := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !s.verify(purpose, body, mac) {
		return nil, ErrTampered
	}
	expires := int64(binary.BigEndian.Uint64(body[1:headerLen]))
	if now.Unix() >= expires {
		return nil, ErrExpired
	}
	return body[headerLen:], nil
}

// verify tries every key; hmac.Equal keeps each comparison constant-time.
func (s *Sealer) verify(purpose string, body, mac []byte) bool {
	ok := false
	for _, k := range s.keys {
		// No early exit: the time taken doesn't reveal which key matched.
		if hmac.Equal(computeMAC(k, purpose, body), mac) {
			ok = true
		}
	}
	return ok
}

// computeMAC length-prefixes the purpose so purpose and body bytes can never
// be shifted across their boundary to forge a different (purpose, body).
func computeMAC(key []byte, purpose string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macDomain))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(purpose)))
	h.Write(n[:])
	h.Write([]byte(purpose))
	h.Write(body)
	return h.Sum(nil)
}
