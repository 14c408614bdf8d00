// Package gcfloor keeps the Go collector from running more often than a
// gateway needs while its heap is small.
//
// With the default GOGC=100 the collector starts a cycle each time the
// heap has grown by as much as was live after the last one. lakegate's
// live heap at rest is mostly its dependencies' package data (policy
// engine, SDKs: about 8 MB), so under load a cycle scans those 8 MB for
// every 8 MB a few thousand requests allocate: about 18 % of the CPU of
// an L1 cache hit (BENCHMARKS.md). A floor under the heap target spaces
// the cycles out while the heap is small, and has no effect once the live
// heap is large (many big answers in flight), where GOGC=100 already
// spaces them and memory matters more.
//
// The floor is applied by setting the GC percent after each cycle from
// the live heap that cycle found (the approach of a "GOGC tuner"); unlike
// a ballast allocation it adds nothing to the heap a cycle must consider
// once the live heap reaches the floor.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Percent is the GC percent that puts the heap target (live × (1 +
// percent/100)) at floor, never below base: base once the live heap is
// half the floor or more. A zero live heap (no cycle yet) gets base.
func Percent(live, floor uint64, base int) int {
	if live == 0 || floor <= live {
		return base
	}
	p := (floor - live) * 100 / live
	if p > maxPercent {
		p = maxPercent
	}
	if int(p) < base {
		return base
	}
	return int(p)
}

// maxPercent bounds the percent for a tiny live heap (a test binary): the
// floor still holds for any live heap above floor/maxPercent*100.
const maxPercent = 10_000

var (
	mu      sync.Mutex
	floor   uint64
	base    int
	started bool
	sample  = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
)

// Start keeps the heap target at or above bytes from the next cycle on,
// with GOGC's percent (base, 100 unless the caller read another) as the
// rule above it. Calling it again changes the floor; 0 turns it off and
// restores base.
func Start(bytes uint64, basePercent int) {
	mu.Lock()
	defer mu.Unlock()
	floor, base = bytes, basePercent
	if bytes == 0 {
		debug.SetGCPercent(base)
		return
	}
	tuneLocked()
	if !started {
		started = true
		arm()
	}
}

// arm registers a cleanup on a fresh object, which the runtime runs after
// the first cycle that finds it unreachable: once per cycle, each run
// arming the next.
func arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(struct{}) { afterCycle() }, struct{}{})
}

// sentinel holds a pointer so the runtime does not batch it into a tiny
// allocation block, whose cleanups may run late or never.
type sentinel struct{ _ *int }

func afterCycle() {
	mu.Lock()
	on := floor != 0
	if on {
		tuneLocked()
	} else {
		started = false
	}
	mu.Unlock()
	if on {
		arm()
	}
}

func tuneLocked() {
	metrics.Read(sample)
	var live uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		live = sample[0].Value.Uint64()
	}
	debug.SetGCPercent(Percent(live, floor, base))
}
