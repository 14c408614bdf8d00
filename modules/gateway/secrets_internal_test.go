package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsPlaceholder(t *testing.T) {
	for s, want := range map[string]bool{
		"{env.X}": true, "{file./run/secrets/token}": true,
		"": false, "literal": false, "{env.}": false, "{file.}": false, "{env.X}{env.Y}": false,
		"pre{env.X}": false, "{env.X}post": false, "{$X}": false, "{system.hostname}": false,
		"{http.request.header.Authorization}": false, "{env.X": false, "env.X}": false,
	} {
		assert.Equal(t, want, isPlaceholder(s), "%q", s)
	}
}

func TestResolveURL(t *testing.T) {
	t.Setenv("LG_TEST_PW", "p@ss:w/rd")
	s := newSecrets()
	for raw, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                    "redis://127.0.0.1:6379/0",
		"redis://user@127.0.0.1:6379/0":               "redis://user@127.0.0.1:6379/0",
		"redis://:{env.LG_TEST_PW}@127.0.0.1:6379/0":  "redis://:p%40ss%3Aw%2Frd@127.0.0.1:6379/0",
		"rediss://me:{env.LG_TEST_PW}@redis.internal": "rediss://me:p%40ss%3Aw%2Frd@redis.internal",
		"": "",
	} {
		got, err := s.resolveURL("redis", raw)
		require.NoError(t, err, raw)
		assert.Equal(t, want, got, raw)
	}
	for _, raw := range []string{
		"redis://:literal@127.0.0.1:6379/0",
		"redis://u:pre{env.LG_TEST_PW}@h/0",
		"redis://:{env.LG_TEST_UNSET_PW}@h/0",
		"{env.LG_TEST_UNSET_URL}",
	} {
		_, err := s.resolveURL("redis", raw)
		assert.Error(t, err, raw)
	}
}
