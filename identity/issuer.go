package identity

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/lakegate/lakegate/duration"
)

// Client is an OAuth2 client allowed to use the client-credentials grant.
// Its secret is given as exactly one of SecretBcrypt and SecretSHA256.
type Client struct {
	// ID is the client_id, and the principal its tokens name (required).
	ID string `json:"id"`
	// SecretBcrypt is the bcrypt hash of the client secret ("$2a$", "$2b$"
	// or "$2y$", cost at least MinBcryptCost, 10), as Caddy's hash-password or
	// `htpasswd -nbBC 10` make it: salted and slow, so the config (which
	// the admin API shows) does not give the secret away.
	SecretBcrypt string `json:"secret_bcrypt,omitempty"`
	// SecretSHA256 is the hex SHA-256 of the client secret. Deprecated:
	// unsalted and fast, it lets a weak secret be guessed from the config;
	// use SecretBcrypt. Still accepted, with a warning at start (see
	// LegacyClients).
	SecretSHA256 string `json:"secret_sha256,omitempty"`
	// Groups are the groups its tokens carry, for the policy (default:
	// none).
	Groups []string `json:"groups,omitempty"`
}

// IssuerConfig configures the built-in token endpoint.
type IssuerConfig struct {
	// Issuer is the `iss` of issued tokens (default "lakegate").
	Issuer string `json:"issuer,omitempty"`
	// Audience is the `aud` of issued tokens (default "lakegate").
	Audience string `json:"audience,omitempty"`
	// TTL is how long an issued token is valid, at least 1s (default 1h).
	TTL duration.Duration `json:"ttl,omitempty"`
	// Clients are who may get tokens (required: at least one).
	Clients []Client `json:"clients,omitempty"`
	// SigningSecret (HS256, >= 32 bytes) lets every replica sign and verify the
	// same tokens; without it an ephemeral ES256 key is generated (one replica
	// only, and tokens die with the process). Default: that ephemeral key.
	SigningSecret string `json:"signing_secret,omitempty"`
}

// LegacyClients names the clients whose secret is given as the deprecated
// secret_sha256, for the caller to warn about.
func (cfg IssuerConfig) LegacyClients() []string {
	var ids []string
	for _, c := range cfg.Clients {
		if c.SecretSHA256 != "" {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

const (
	defaultIssuerName = "lakegate"
	defaultTTL        = time.Hour
	minSigningSecret  = 32
	// issuedLeeway is small: our own replicas' clocks are close, unlike an
	// arbitrary IdP's, and a short TTL should mean what it says.
	issuedLeeway = 5 * time.Second
	groupsClaim  = "groups"
)

// Issuer mints access tokens for configured clients (client-credentials
// grant) and validates them.
type Issuer struct {
	issuer   string
	audience string
	ttl      time.Duration
	clients  []client
	byID     map[string]int
	dummy    []byte // bcrypt hash for unknown ids; nil without bcrypt clients
	signer   jose.Signer
	verifier *verifier
}

type client struct {
	id     string
	bcrypt []byte            // secret_bcrypt; nil for a secret_sha256 client
	sha256 [sha256.Size]byte // secret_sha256, when bcrypt is nil
	groups []string
}

// verify reports whether secret is c's. Either comparison takes as long
// whatever the secret.
func (c *client) verify(secret string) bool {
	if c.bcrypt != nil {
		return bcryptMatches(c.bcrypt, secret)
	}
	sum := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(sum[:], c.sha256[:]) == 1
}

// NewIssuer validates cfg and sets up the signing key.
func NewIssuer(cfg IssuerConfig) (*Issuer, error) {
	if ttl := cfg.TTL.D(); ttl < 0 || (ttl > 0 && ttl < time.Second) {
		return nil, errors.New("issuer: ttl must be at least 1s")
	}
	i := &Issuer{
		issuer:   cmp.Or(cfg.Issuer, defaultIssuerName),
		audience: cmp.Or(cfg.Audience, defaultIssuerName),
		ttl:      cmp.Or(cfg.TTL.D(), defaultTTL),
	}
	if err := i.loadClients(cfg.Clients); err != nil {
		return nil, err
	}
	alg, signKey, verifyKey, err := signingKeys(cfg.SigningSecret, i.issuer, i.audience)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if i.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: signKey}, opts); err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	i.verifier = &verifier{
		algs:         []jose.SignatureAlgorithm{alg}, // exactly the one we sign with
		source:       staticKeys{{Key: verifyKey, Algorithm: string(alg)}},
		issuer:       i.issuer,
		audience:     jwt.Audience{i.audience},
		leeway:       issuedLeeway,
		subjectClaim: "sub",
		groupsClaim:  groupsClaim,
		knownSubject: i.knownClient,
		deferForeign: true,
		verified:     newVerifiedTokens(),
		now:          time.Now,
	}
	return i, nil
}

// signingKeys picks HS256 with the shared secret (any replica verifies any
// replica's tokens) or the ES256 key private to this process.
func signingKeys(secret, issuer, audience string) (jose.SignatureAlgorithm, any, any, error) {
	if secret != "" {
		if len(secret) < minSigningSecret {
			return "", nil, nil, fmt.Errorf("issuer: signing_secret must be at least %d bytes", minSigningSecret)
		}
		key := []byte(secret)
		return jose.HS256, key, key, nil
	}
	priv, err := processKey(issuer, audience)
	if err != nil {
		return "", nil, nil, fmt.Errorf("issuer: generating ES256 key: %w", err)
	}
	return jose.ES256, priv, &priv.PublicKey, nil
}

// processKeys holds each issuer's ephemeral ES256 key (by iss and aud) for
// the life of the process. A config reload builds a new Issuer; with a new
// key every reload logged everyone out ("bad signature" for every token
// issued before it). Tokens of clients the new config drops are still
// refused (knownClient).
var processKeys sync.Map // iss "\x00" aud -> *ecdsa.PrivateKey

func processKey(issuer, audience string) (*ecdsa.PrivateKey, error) {
	k := issuer + "\x00" + audience
	if v, ok := processKeys.Load(k); ok {
		return v.(*ecdsa.PrivateKey), nil
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	v, _ := processKeys.LoadOrStore(k, priv)
	return v.(*ecdsa.PrivateKey), nil
}

// loadClients checks each client's hash. A client may authenticate with its
// secret alone (Iceberg's `credential` without "id:"), which must name
// exactly one client: two secret_sha256 clients with the same hash are
// refused here. Salted bcrypt hashes of one secret differ, so a secret
// shared by bcrypt clients cannot be seen here; clientBySecret refuses it
// when it comes alone, and with a client_id it names one client anyway.
func (i *Issuer) loadClients(cfg []Client) error {
	if len(cfg) == 0 {
		return errors.New("issuer: no clients configured")
	}
	i.byID = make(map[string]int, len(cfg))
	seen := make(map[[sha256.Size]byte]bool, len(cfg))
	maxCost := 0
	for n, c := range cfg {
		if c.ID == "" {
			return fmt.Errorf("issuer: client %d: missing id", n)
		}
		if _, dup := i.byID[c.ID]; dup {
			return fmt.Errorf("issuer: client %q configured twice", c.ID)
		}
		cl := client{id: c.ID, groups: emptyIfNil(slices.Clone(c.Groups))}
		switch {
		case c.SecretBcrypt != "" && c.SecretSHA256 != "":
			return fmt.Errorf("issuer: client %q: set secret_bcrypt or secret_sha256, not both", c.ID)
		case c.SecretBcrypt != "":
			cost, err := parseBcrypt(c.SecretBcrypt)
			if err != nil {
				return fmt.Errorf("issuer: client %q: secret_bcrypt %w", c.ID, err)
			}
			cl.bcrypt, maxCost = []byte(c.SecretBcrypt), max(maxCost, cost)
		case c.SecretSHA256 != "":
			h, err := parseSHA256Hex(c.SecretSHA256)
			if err != nil {
				return fmt.Errorf("issuer: client %q: secret_sha256 %w", c.ID, err)
			}
			if seen[h] {
				return fmt.Errorf("issuer: client %q: secret shared with another client", c.ID)
			}
			seen[h], cl.sha256 = true, h
		default:
			return fmt.Errorf("issuer: client %q: missing secret_bcrypt", c.ID)
		}
		i.byID[c.ID] = len(i.clients)
		i.clients = append(i.clients, cl)
	}
	if maxCost > 0 {
		// As costly as the costliest client, so an unknown id is never
		// the quicker answer.
		d, err := dummyHash(maxCost)
		if err != nil {
			return fmt.Errorf("issuer: %w", err)
		}
		i.dummy = d
	}
	return nil
}

// Authenticator validates tokens this issuer (or a replica sharing its
// SigningSecret) signed. Tokens of clients no longer configured are refused,
// so removing a client revokes its tokens without waiting for their expiry.
//
// JWTs whose iss is not this issuer's get ErrNoCredentials, so in a Chain put
// it before the IdP's JWT authenticator: IdP tokens pass through to it, while
// the JWT authenticator would refuse (not pass on) tokens it cannot verify.
func (i *Issuer) Authenticator() Authenticator {
	return i.verifier
}

func (i *Issuer) knownClient(id string) bool {
	_, ok := i.byID[id]
	return ok
}

// clientBySecret finds the client whose secret is one of candidates (Basic
// may give the secret two ways). With an id only that client is compared;
// an unknown id is compared against the dummy hash, which costs as much as
// a bcrypt client's, so neither the time nor the answer tells which ids
// exist. Without an id every client is compared, and ambiguous reports a
// secret that more than one client has (only bcrypt clients can share
// one: see loadClients).
func (i *Issuer) clientBySecret(id string, candidates ...string) (c *client, ambiguous bool) {
	var secrets []string
	for _, s := range candidates {
		if s != "" && !slices.Contains(secrets, s) { // an empty secret is never one
			secrets = append(secrets, s)
		}
	}
	if id != "" {
		n, ok := i.byID[id]
		for _, s := range secrets {
			switch {
			case ok && i.clients[n].verify(s):
				return &i.clients[n], false
			case !ok && i.dummy != nil:
				bcryptMatches(i.dummy, s) // only to take the time
			}
		}
		return nil, false
	}
	match := -1
	for n := range i.clients {
		for _, s := range secrets {
			if i.clients[n].verify(s) {
				if match >= 0 {
					return nil, true
				}
				match = n
				break
			}
		}
	}
	if match < 0 {
		return nil, false
	}
	return &i.clients[match], false
}

// issue signs a token for c.
func (i *Issuer) issue(c *client) (string, error) {
	now := time.Now()
	std := jwt.Claims{
		Issuer:    i.issuer,
		Subject:   c.id,
		Audience:  jwt.Audience{i.audience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(i.ttl)),
		ID:        rand.Text(),
	}
	return jwt.Signed(i.signer).Claims(std).Claims(map[string]any{groupsClaim: c.groups}).Serialize()
}
