package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// HashSecret returns the hex SHA-256 of secret, the form in which static
// tokens and client secrets appear in config files: a leaked config does not
// leak credentials. Use high-entropy secrets; a plain hash does not slow down
// guessing of weak ones.
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
