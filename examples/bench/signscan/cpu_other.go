//go:build !unix

package main

// cpuSeconds is not measured here (no getrusage): 0.
func cpuSeconds() float64 { return 0 }
