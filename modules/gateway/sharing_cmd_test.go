package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing"
)

func TestWriteProfile(t *testing.T) {
	var out, conf bytes.Buffer
	require.NoError(t, writeProfile(&out, &conf, "https://x/delta-sharing", "tok", "partner", "2027-01-01T00:00:00+01:00"))
	var p sharing.Profile
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	assert.Equal(t, sharing.Profile{ShareCredentialsVersion: 1, Endpoint: "https://x/delta-sharing",
		BearerToken: "tok", ExpirationTime: "2026-12-31T23:00:00Z"}, p)
	sum := sha256.Sum256([]byte("tok"))
	assert.Equal(t, "recipient partner sha256 "+hex.EncodeToString(sum[:])+" expires 2026-12-31T23:00:00Z\n", conf.String())

	out.Reset()
	conf.Reset()
	require.NoError(t, writeProfile(&out, &conf, "https://x", "", "r", ""))
	p = sharing.Profile{}
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	assert.Len(t, p.BearerToken, 43, "a fresh 32-byte token")
	assert.Empty(t, p.ExpirationTime)
	assert.NotContains(t, conf.String(), p.BearerToken, "the config line holds only the hash")
	assert.True(t, strings.HasPrefix(conf.String(), "recipient r sha256 "))

	for _, bad := range [][2]string{{"", ""}, {"https://x", "tomorrow"}} {
		assert.Error(t, writeProfile(&out, &conf, bad[0], "t", "r", bad[1]))
	}
}
