package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// HashSecret returns the hex SHA-256 of secret, the form in which static
// tokens (and the issuer's deprecated secret_sha256) appear in config files:
// a leaked config does not leak credentials. Use high-entropy tokens; a
// plain hash does not slow down guessing of weak ones (client secrets,
// often chosen by people, take HashSecretBcrypt).
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// parseSHA256Hex decodes a configured hex SHA-256. The error never contains
// the value: an operator may have pasted a secret instead of its hash.
func parseSHA256Hex(s string) ([sha256.Size]byte, error) {
	var out [sha256.Size]byte
	if len(s) != 2*sha256.Size {
		return out, fmt.Errorf("must be %d hex characters (SHA-256), got %d characters", 2*sha256.Size, len(s))
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, errors.New("not hex")
	}
	if out == sha256.Sum256(nil) { // would let an empty credential in
		return out, errors.New("is the hash of an empty secret")
	}
	return out, nil
}

// TokenOwners remembers whose token each configured hash is. A token
// configured for two owners would authenticate as only one of them (which
// one depending on lookup order), so every config that maps token hashes
// to principals claims them here and refuses the second owner.
type TokenOwners map[[sha256.Size]byte]string

// Claim records hash as owner's. A hash another owner claimed first is an
// error naming both owners; it never shows the hash, which stands for the
// token.
func (o TokenOwners) Claim(owner string, hash [sha256.Size]byte) error {
	if first, ok := o[hash]; ok {
		return fmt.Errorf("%s and %s are configured with the same token; give each its own", first, owner)
	}
	o[hash] = owner
	return nil
}
