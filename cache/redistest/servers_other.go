//go:build !linux

package redistest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv, set to 1, makes Cluster and Sentinel fail rather than skip
// where they cannot run.
const RequireEnv = "LAKEGATE_TEST_REDIS_CLUSTER"

// SentinelMaster is the master name Sentinel's sentinel monitors.
const SentinelMaster = "lakegate-test"

// Cluster starts Redis servers on Linux only (it locks their ports with
// flock and ties them to the test process with Pdeathsig).
func Cluster(t testing.TB) string {
	unsupported(t)
	return ""
}

// Sentinel, like Cluster, runs on Linux only.
func Sentinel(t testing.TB, password string) string {
	unsupported(t)
	return ""
}

// Failover, like Sentinel, runs on Linux only.
func Failover(t testing.TB, password string) string {
	unsupported(t)
	return ""
}

// Process is a redis-server a test started (Linux only).
type Process struct {
	URL string
	Cmd *exec.Cmd
}

// Start, like Cluster, runs on Linux only.
func Start(t testing.TB, args ...string) *Process {
	unsupported(t)
	return nil
}

func unsupported(t testing.TB) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s=1, but redistest starts Redis servers on Linux only", RequireEnv)
	}
	t.Skip("redistest starts Redis servers on Linux only")
}
