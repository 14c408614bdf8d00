package fileurl

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
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
	// ErrTampered: well-formed, but it does not authenticate under any key
	// for this purpose.
	ErrTampered = errors.New("fileurl: token signature mismatch")
	// ErrExpired: authentic but past its expiry.
	ErrExpired = errors.New("fileurl: token expired")
)

const (
	tokenVersion = 2
	headerLen    = 1 + 8 // version byte + big-endian unix expiry seconds
	nonceLen     = 12
	tagLen       = 16
	// maxTokenLen caps the work Open does on hostile input; sealed payloads
	// are meant to be a couple of paths, far below this.
	maxTokenLen = 8 << 10
)

// Key derivation labels: one key encrypts, another makes nonces, so these
// uses of the configured key never mix with each other or anything else.
const (
	encLabel   = "lakegate/fileurl/sealer/v2/encrypt"
	nonceLabel = "lakegate/fileurl/sealer/v2/nonce"
)

// tokenEncoding is strict so every byte string has exactly one accepted
// token spelling; otherwise trailing-bit variants of a sealed token would
// also open.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Sealer seals small payloads with AES-256-GCM and an expiry: tokens are
// opaque (a recipient learns nothing of the server paths inside) and
// authenticated. The nonce is derived from the sealed content (an SIV-like
// construction), so sealing is deterministic: the same payload, purpose and
// expiry give the same token, and a nonce never repeats for different
// content. A Sealer is safe for concurrent use.
type Sealer struct {
	keys []sealerKey // keys[0] seals; all keys open (rotation)
}

type sealerKey struct {
	aead  cipher.AEAD
	nonce []byte // HMAC key for nonces
}

func deriveKey(key []byte) (sealerKey, error) {
	block, err := aes.NewCipher(hmacSum(key, []byte(encLabel)))
	if err != nil {
		return sealerKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealerKey{}, err
	}
	return sealerKey{aead: aead, nonce: hmacSum(key, []byte(nonceLabel))}, nil
}

func hmacSum(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// NewSealer returns a Sealer that seals with key and opens tokens made with
// key or any of oldKeys, so keys can be rotated without invalidating URLs
// already handed out. Every key must be at least MinKeyLen bytes.
func NewSealer(key []byte, oldKeys ...[]byte) (*Sealer, error) {
	all := append([][]byte{key}, oldKeys...)
	s := &Sealer{keys: make([]sealerKey, 0, len(all))}
	for i, k := range all {
		if len(k) < MinKeyLen {
			return nil, fmt.Errorf("fileurl: sealer key %d is %d bytes, need at least %d", i, len(k), MinKeyLen)
		}
		// Derived keys: later mutation of the caller's slice changes nothing.
		dk, err := deriveKey(k)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, dk)
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
// whole seconds). The purpose is bound into the authentication but not
// stored, so a token only opens under the same purpose.
func (s *Sealer) Seal(purpose string, payload []byte, expires time.Time) string {
	return string(s.sealing(purpose, expires).appendToken(nil, payload))
}

// sealing seals many payloads for one purpose and expiry, as Seal does,
// reusing what they share: the associated data, the nonce MAC (reset
// between tokens rather than rebuilt) and scratch space. It is not safe
// for concurrent use; a Sealer hands out one per batch.
type sealing struct {
	k      sealerKey
	header [headerLen]byte
	ad     []byte
	mac    hash.Hash
	sum    []byte
	raw    []byte
}

func (s *Sealer) sealing(purpose string, expires time.Time) *sealing {
	k := s.keys[0]
	b := &sealing{k: k, mac: hmac.New(sha256.New, k.nonce)}
	b.header[0] = tokenVersion
	binary.BigEndian.PutUint64(b.header[1:], uint64(expires.Unix()))
	b.ad = associatedData(purpose, b.header[:])
	return b
}

// appendToken appends the token Seal(purpose, payload, expires) returns.
func (b *sealing) appendToken(dst, payload []byte) []byte {
	b.mac.Reset()
	b.mac.Write(b.ad)
	b.mac.Write(payload)
	b.sum = b.mac.Sum(b.sum[:0])
	nonce := b.sum[:nonceLen]
	b.raw = append(append(b.raw[:0], b.header[:]...), nonce...)
	b.raw = b.k.aead.Seal(b.raw, nonce, payload, b.ad)
	return tokenEncoding.AppendEncode(dst, b.raw)
}

// Open checks token for purpose and returns its payload. Authenticity is
// checked before expiry so an attacker learns nothing from the error about
// tokens they forged.
func (s *Sealer) Open(purpose, token string, now time.Time) ([]byte, error) {
	if len(token) > maxTokenLen {
		return nil, ErrMalformed
	}
	raw, err := tokenEncoding.DecodeString(token)
	if err != nil || len(raw) < headerLen+nonceLen+tagLen || raw[0] != tokenVersion {
		return nil, ErrMalformed
	}
	header, nonce, sealed := raw[:headerLen], raw[headerLen:headerLen+nonceLen], raw[headerLen+nonceLen:]
	ad := associatedData(purpose, header)
	var payload []byte
	opened := false
	for _, k := range s.keys {
		// No early exit: the time taken doesn't reveal which key matched.
		if p, err := k.aead.Open(nil, nonce, sealed, ad); err == nil && !opened {
			payload, opened = p, true
		}
	}
	if !opened {
		return nil, ErrTampered
	}
	if now.Unix() >= int64(binary.BigEndian.Uint64(header[1:])) {
		return nil, ErrExpired
	}
	if payload == nil {
		payload = []byte{}
	}
	return payload, nil
}

// associatedData length-prefixes the purpose so purpose and header bytes
// can never be shifted across their boundary to forge another pair.
func associatedData(purpose string, header []byte) []byte {
	ad := binary.BigEndian.AppendUint64(nil, uint64(len(purpose)))
	ad = append(ad, purpose...)
	return append(ad, header...)
}
