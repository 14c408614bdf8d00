package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// One kind of go-redis line is written at most once per sampledLogEvery,
// and the next one written says how many were left out.
func TestRedisLogSamples(t *testing.T) {
	l := newSampledLog("lakegate.redis")
	t0 := time.Unix(1_800_000_000, 0)
	dial, pool := "redis: dial %s: %v", "redis: pool: %v"
	for _, step := range []struct {
		format  string
		at      time.Duration
		ok      bool
		dropped int
	}{
		{dial, 0, true, 0},
		{dial, time.Second, false, 0},
		{pool, 2 * time.Second, true, 0}, // another kind of line has its own pace
		{dial, 3 * time.Second, false, 0},
		{dial, sampledLogEvery + time.Second, true, 2},
		{dial, sampledLogEvery + 2*time.Second, false, 0},
	} {
		dropped, ok := l.admit(step.format, t0.Add(step.at))
		assert.Equal(t, step.ok, ok, "%s at %s", step.format, step.at)
		assert.Equal(t, step.dropped, dropped, "%s at %s", step.format, step.at)
	}
}
