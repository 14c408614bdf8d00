package gateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/lakegate/lakegate/identity"
)

// Issuer clients with the deprecated secret_sha256 still load, with one
// warning naming them (never their hashes) and saying what to use.
func TestLegacyClientSecretsWarn(t *testing.T) {
	bc, err := identity.HashSecretBcrypt("new-client-secret")
	require.NoError(t, err)
	legacy := identity.HashSecret("old-client-secret")
	for name, tc := range map[string]struct {
		clients []identity.Client
		warned  []any
	}{
		"mixed": {[]identity.Client{
			{ID: "old", SecretSHA256: legacy},
			{ID: "new", SecretBcrypt: bc},
			{ID: "older", SecretSHA256: identity.HashSecret("older-client-secret")},
		}, []any{"old", "older"}},
		"bcrypt only": {[]identity.Client{{ID: "new", SecretBcrypt: bc}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			core, all := observer.New(zap.WarnLevel)
			g, err := newGuard(context.Background(), &IdentityConfig{Issuer: &identity.IssuerConfig{Clients: tc.clients,
				SigningSecret: "0123456789abcdef0123456789abcdef"}}, nil, nil, zap.New(core))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.close() })
			logs := all.FilterMessageSnippet("secret_sha256")
			if tc.warned == nil {
				assert.Zero(t, logs.Len())
				return
			}
			require.Equal(t, 1, logs.Len())
			e := logs.All()[0]
			assert.Contains(t, e.Message, "secret_sha256, deprecated")
			assert.Contains(t, e.Message, "secret_bcrypt")
			assert.Equal(t, tc.warned, e.ContextMap()["clients"])
			assert.NotContains(t, e.Message, legacy)
		})
	}
}

// An issuer without a shared signing secret is warned about at start:
// its tokens die with the process and another replica refuses them.
func TestIssuerWithoutSigningSecretWarns(t *testing.T) {
	bc, err := identity.HashSecretBcrypt("a-client-secret")
	require.NoError(t, err)
	clients := []identity.Client{{ID: "spark", SecretBcrypt: bc}}
	for secret, warned := range map[string]bool{"": true, "0123456789abcdef0123456789abcdef": false} {
		core, logs := observer.New(zap.WarnLevel)
		g, err := newGuard(context.Background(), &IdentityConfig{Issuer: &identity.IssuerConfig{Clients: clients, SigningSecret: secret}}, nil, nil, zap.New(core))
		require.NoError(t, err)
		n := logs.FilterMessageSnippet("without signing_secret").Len()
		if warned {
			assert.Equal(t, 1, n, "no secret: one warning")
		} else {
			assert.Zero(t, n, "a shared secret: no warning")
		}
		if secret != "" {
			assert.NotContains(t, fmt.Sprint(logs.All()), secret, "the secret is never logged")
		}
		_ = g.close()
	}
}
