package upstream_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream"
)

// JSON config takes durations as Caddy's own config does: "5s", or
// nanoseconds as before.
func TestRemoteConfigDurationsInJSON(t *testing.T) {
	var cfg upstream.RemoteConfig
	require.NoError(t, json.Unmarshal([]byte(`{"url":"http://x","connect_timeout":"5s","read_timeout":3000000000,
		"breaker":{"timeout":"1m"}}`), &cfg))
	assert.Equal(t, 5*time.Second, cfg.ConnectTimeout.D())
	assert.Equal(t, 3*time.Second, cfg.ReadTimeout.D())
	assert.Equal(t, time.Minute, cfg.Breaker.Timeout.D())
	err := json.Unmarshal([]byte(`{"connect_timeout":"soon"}`), &cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid duration "soon"`)
}
