package identity_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/lakegate/lakegate/identity"
)

func TestHashSecretBcrypt(t *testing.T) {
	h, err := identity.HashSecretBcrypt(sparkSecret)
	require.NoError(t, err)
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(h), []byte(sparkSecret)))
	cost, err := bcrypt.Cost([]byte(h))
	require.NoError(t, err)
	assert.Equal(t, identity.MinBcryptCost, cost)
	h2, err := identity.HashSecretBcrypt(sparkSecret)
	require.NoError(t, err)
	assert.NotEqual(t, h, h2, "salted: one secret, two hashes")

	long := strings.Repeat("s", 73)
	for _, secret := range []string{"", long} {
		_, err := identity.HashSecretBcrypt(secret)
		if assert.Error(t, err, "%d bytes", len(secret)) && secret != "" {
			assert.NotContains(t, err.Error(), secret)
		}
	}
}

// A secret_bcrypt that is not a bcrypt hash of cost >= 10 stops the load,
// with an error naming the client and the field, never the value.
func TestSecretBcryptValidated(t *testing.T) {
	low, err := bcrypt.GenerateFromPassword([]byte(sparkSecret), bcrypt.MinCost)
	require.NoError(t, err)
	nine, err := bcrypt.GenerateFromPassword([]byte(sparkSecret), identity.MinBcryptCost-1)
	require.NoError(t, err)
	good := bcryptOf(sparkSecret)
	for _, tc := range []struct{ name, hash, want string }{
		{"empty", "", "missing secret_bcrypt"},
		{"clear secret", sparkSecret, "not a bcrypt hash"},
		{"sha256 hex", identity.HashSecret(sparkSecret), "not a bcrypt hash"},
		{"md5-crypt", "$1$" + good[3:], "not a bcrypt hash"},
		{"truncated", good[:59], "not a bcrypt hash"},
		{"trailing newline", good + "\n", "not a bcrypt hash"},
		{"unknown minor version", "$2c$" + good[4:], "not a bcrypt hash"},
		{"not base64", good[:len(good)-1] + "!", "not a bcrypt hash"},
		{"cost out of range", good[:4] + "32" + good[6:], "not a usable bcrypt hash"},
		{"cost 4", string(low), "has cost 4, below the minimum 10"},
		{"cost 9", string(nine), "has cost 9, below the minimum 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := issuerConfig()
			cfg.Clients[0].SecretBcrypt = tc.hash
			_, err := identity.NewIssuer(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `client "spark": `)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), sparkSecret)
			if tc.hash != "" {
				assert.NotContains(t, err.Error(), strings.TrimSpace(tc.hash))
			}
		})
	}
	// $2a$ (Caddy's hash-password), $2b$ and $2y$ (htpasswd -B) all load,
	// at any cost from 10.
	c11, err := bcrypt.GenerateFromPassword([]byte(sparkSecret), identity.MinBcryptCost+1)
	require.NoError(t, err)
	for _, h := range []string{good, "$2b$" + good[4:], "$2y$" + good[4:], string(c11)} {
		cfg := issuerConfig()
		cfg.Clients[0].SecretBcrypt = h
		i := newIssuer(t, cfg)
		assert.Equal(t, http.StatusOK, postToken(i, clientCredentials("spark", sparkSecret)).Code, h[:7])
	}
}

// A bcrypt client gets a token with its secret; a wrong secret and an
// unknown client get the same 401 invalid_client.
func TestBcryptClientToken(t *testing.T) {
	i := newIssuer(t, issuerConfig())
	p := mustAccept(t, i.Authenticator(), issueToken(t, i, "spark", sparkSecret))
	assert.Equal(t, "spark", p.ID)
	assert.Equal(t, []string{"analysts", "etl"}, p.Groups)

	var bodies []string
	for name, req := range map[string][2]string{
		"wrong secret":     {"spark", "wrong-secret"},
		"another's secret": {"spark", "trino-secret-abcdefghijklmnop"},
		"unknown client":   {"mallory", sparkSecret},
		"unknown, a guess": {"mallory", "guess"},
	} {
		w := postToken(i, clientCredentials(req[0], req[1]))
		assert.Equal(t, http.StatusUnauthorized, w.Code, name)
		var e map[string]string
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), name)
		assert.Equal(t, "invalid_client", e["error"], name)
		assert.NotContains(t, w.Body.String(), req[1], name)
		bodies = append(bodies, w.Body.String())
	}
	for _, b := range bodies[1:] {
		assert.Equal(t, bodies[0], b, "every refusal reads the same")
	}

	// bcrypt reads 72 bytes: a longer secret sharing them is refused.
	secret72 := strings.Repeat("k", 72)
	cfg := issuerConfig()
	cfg.Clients[0].SecretBcrypt = bcryptOf(secret72)
	long := newIssuer(t, cfg)
	assert.Equal(t, http.StatusOK, postToken(long, clientCredentials("spark", secret72)).Code)
	assert.Equal(t, http.StatusUnauthorized, postToken(long, clientCredentials("spark", secret72+"x")).Code)
	assert.Equal(t, http.StatusUnauthorized, postToken(long, clientCredentials("", secret72+"x")).Code)
}

// An unknown client id is compared against a dummy hash at the highest
// cost any client has, so it costs what a known id costs and the answer's
// timing does not tell which ids exist. (Checked by the cost, not a
// clock: a timing assertion would be flaky.)
func TestUnknownClientComparedAtTheHighestCost(t *testing.T) {
	cfg := issuerConfig()
	h12, err := bcrypt.GenerateFromPassword([]byte("another-secret"), 12)
	require.NoError(t, err)
	cfg.Clients = append(cfg.Clients, identity.Client{ID: "slow", SecretBcrypt: string(h12)})
	i := newIssuer(t, cfg)
	assert.Equal(t, 12, identity.DummyCost(i))
	w := postToken(i, clientCredentials("mallory", "wrong-secret"))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
}

// Salted hashes of one secret differ, so bcrypt clients sharing a secret
// load; with its id each gets its own token, and the secret alone (which
// would have to pick one) is refused.
func TestBcryptSharedSecret(t *testing.T) {
	cfg := issuerConfig()
	other, err := identity.HashSecretBcrypt(sparkSecret)
	require.NoError(t, err)
	cfg.Clients = append(cfg.Clients, identity.Client{ID: "flink", SecretBcrypt: other})
	i := newIssuer(t, cfg)
	assert.Equal(t, "spark", mustAccept(t, i.Authenticator(), issueToken(t, i, "spark", sparkSecret)).ID)
	assert.Equal(t, "flink", mustAccept(t, i.Authenticator(), issueToken(t, i, "flink", sparkSecret)).ID)
	w := postToken(i, clientCredentials("", sparkSecret))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Body.String(), "invalid_client")
	assert.Contains(t, w.Body.String(), "send client_id")
	// A secret alone that only one client has still names it.
	assert.Equal(t, "trino", mustAccept(t, i.Authenticator(), issueToken(t, i, "", "trino-secret-abcdefghijklmnop")).ID)
}

func TestLegacyClients(t *testing.T) {
	assert.Equal(t, []string{"trino"}, issuerConfig().LegacyClients())
	assert.Empty(t, identity.IssuerConfig{Clients: []identity.Client{{ID: "a", SecretBcrypt: bcryptOf("x")}}}.LegacyClients())
}
