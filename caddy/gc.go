package main

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
)

// defaultGCFloor is the heap target lakegate keeps while its live heap is
// small: BENCHMARKS.md ("The collector's floor") measured what it saves on
// an L1 hit and what it costs in memory.
const defaultGCFloor = 64 << 20

// gcFloor reads LAKEGATE_GC_FLOOR (a size such as 64MiB; 0 or off turns
// the floor off). An operator's GOGC is the operator's choice: with it
// set, lakegate sets no floor.
func gcFloor(getenv func(string) string) (uint64, error) {
	if getenv("GOGC") != "" {
		return 0, nil
	}
	v := strings.TrimSpace(getenv("LAKEGATE_GC_FLOOR"))
	switch v {
	case "":
		return defaultGCFloor, nil
	case "off", "0":
		return 0, nil
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("LAKEGATE_GC_FLOOR=%q: not a size (e.g. 64MiB) or off", v)
	}
	return n, nil
}
