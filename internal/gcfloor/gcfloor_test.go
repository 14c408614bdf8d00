package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		live, floor uint64
		base, want  int
	}{
		{"no cycle yet", 0, 64 * mib, 100, 100},
		{"small heap: target at the floor", 8 * mib, 64 * mib, 100, 700},
		{"half the floor: GOGC's own target reaches it", 32 * mib, 64 * mib, 100, 100},
		{"above half: base", 40 * mib, 64 * mib, 100, 100},
		{"above the floor: base", 300 * mib, 64 * mib, 100, 100},
		{"tiny heap: bounded", 1024, 64 * mib, 100, maxPercent},
		{"a larger base wins", 8 * mib, 64 * mib, 800, 800},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Percent(c.live, c.floor, c.base))
		})
	}
}

// TestStartFollowsTheLiveHeap: after a cycle the percent is the one that
// puts the target at the floor; turned off, GOGC's percent is back.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { Start(0, 100); debug.SetGCPercent(old) })

	const floor = 1 << 30 // far above a test binary's live heap
	Start(floor, 100)
	runtime.GC()
	// Cleanups run on the runtime's own goroutine after the cycle.
	var got int
	require.Eventually(t, func() bool {
		got = debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
		return got > 100
	}, 10*time.Second, 5*time.Millisecond, "the percent never rose above 100")
	assert.LessOrEqual(t, got, maxPercent)

	Start(0, 100)
	assert.Equal(t, 100, debug.SetGCPercent(100))
}
