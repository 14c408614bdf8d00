package gateway

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

func TestHashSecretCommand(t *testing.T) {
	var out, conf bytes.Buffer
	require.NoError(t, hashSecretCmd(strings.NewReader("s3cret-value\n"), &out, &conf, "spark"))
	h := strings.TrimSpace(out.String())
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(h), []byte("s3cret-value")), "the line ending is not part of the secret")
	cost, err := bcrypt.Cost([]byte(h))
	require.NoError(t, err)
	assert.Equal(t, bcrypt.DefaultCost, cost)
	assert.Equal(t, "client spark "+h+"\n", conf.String())

	for name, in := range map[string]string{"empty": "", "empty line": "\n", "longer than bcrypt reads": strings.Repeat("x", 73)} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := hashSecretCmd(strings.NewReader(in), &out, &out, "")
			require.Error(t, err)
			assert.Empty(t, out.String())
			assert.NotContains(t, err.Error(), "xxxx", "the error never holds the secret")
		})
	}
}
