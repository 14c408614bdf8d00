package identity

import (
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MinBcryptCost is the lowest cost a client's secret_bcrypt may have
// (bcrypt.DefaultCost): the hash is in the config, which the admin API's
// /config/ shows, and must stay slow to guess from.
const MinBcryptCost = bcrypt.DefaultCost

// maxBcryptSecret is the most bcrypt reads of a secret: a longer one would
// match every secret with the same first 72 bytes.
const maxBcryptSecret = 72

// bcryptForm is a whole bcrypt hash: version, two-digit cost, 22 characters
// of salt and 31 of hash in bcrypt's base64 alphabet. The bcrypt package
// alone accepts more (any "$1…" prefix, trailing bytes), which would only
// ever fail to match.
var bcryptForm = regexp.MustCompile(`^\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)

// HashSecretBcrypt returns the bcrypt hash (cost MinBcryptCost) of secret,
// the form in which issuer client secrets are configured (secret_bcrypt).
// Its errors never contain the secret.
func HashSecretBcrypt(secret string) (string, error) {
	switch {
	case secret == "":
		return "", errors.New("the secret is empty")
	case len(secret) > maxBcryptSecret:
		return "", fmt.Errorf("the secret is %d bytes; bcrypt uses at most %d", len(secret), maxBcryptSecret)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(secret), MinBcryptCost)
	if err != nil {
		return "", fmt.Errorf("bcrypt: %w", err)
	}
	return string(h), nil
}

// parseBcrypt checks a configured secret_bcrypt and returns its cost. The
// error never contains the value: an operator may have pasted a secret
// instead of its hash.
func parseBcrypt(s string) (int, error) {
	if !bcryptForm.MatchString(s) {
		return 0, fmt.Errorf("is not a bcrypt hash ($2a$, $2b$ or $2y$, cost, salt and hash: 60 characters, got %d)", len(s))
	}
	cost, err := bcrypt.Cost([]byte(s))
	if err != nil {
		return 0, fmt.Errorf("is not a usable bcrypt hash (cost must be %d to %d)", bcrypt.MinCost, bcrypt.MaxCost)
	}
	if cost < MinBcryptCost {
		return 0, fmt.Errorf("has cost %d, below the minimum %d: hash the secret again with cost %d or more", cost, MinBcryptCost, MinBcryptCost)
	}
	return cost, nil
}

// bcryptMatches reports whether secret is the one hash was made from. A
// secret longer than bcrypt reads is compared all the same, so that
// refusing it takes as long as refusing any other, and then refused.
func bcryptMatches(hash []byte, secret string) bool {
	err := bcrypt.CompareHashAndPassword(hash, []byte(secret))
	return err == nil && len(secret) <= maxBcryptSecret
}

// dummyHashes holds, per cost, a bcrypt hash of a random secret nobody
// knows. A request naming an unknown client id is compared against it, so
// it costs as much as one naming a known client and its answer does not
// come sooner. Kept for the life of the process: a config reload makes no
// new one.
var dummyHashes sync.Map // cost -> []byte

func dummyHash(cost int) ([]byte, error) {
	if v, ok := dummyHashes.Load(cost); ok {
		return v.([]byte), nil
	}
	h, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), cost)
	if err != nil {
		return nil, err
	}
	v, _ := dummyHashes.LoadOrStore(cost, h)
	return v.([]byte), nil
}
