package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// RequireEnv, set to 1, makes Cluster and Sentinel fail rather than skip
// when redis-server or redis-cli is not installed.
const RequireEnv = "LAKEGATE_TEST_REDIS_CLUSTER"

// The ports are fixed (other test suites on this machine keep off them);
// a lock file keeps two test processes (go test runs packages in
// parallel) from starting servers on them at once.
var (
	clusterPorts = []int{7101, 7102, 7103}
	sentinelPort = 7104
	masterPort   = 7105
)

// Cluster starts a Redis Cluster of three masters (no replicas) on
// 127.0.0.1:7101-7103, empty, for this test, and returns its
// redis+cluster:// URL. The servers are killed when the test ends. It
// waits while another test (of any package) holds the ports.
func Cluster(t testing.TB) string {
	t.Helper()
	bins := need(t, "redis-server", "redis-cli")
	lock(t, "cluster-7101-7103")
	dir := t.TempDir()
	addrs := make([]string, len(clusterPorts))
	for i, port := range clusterPorts {
		addrs[i] = serve(t, bins[0], dir, port, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput()
	require.NoError(t, err, "redis-cli --cluster create:\n%s", out)
	waitClusterOK(t, addrs)
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// waitClusterOK waits until every node says the cluster is ok and knows
// all of its nodes: go-redis reads the slot map from any of them.
func waitClusterOK(t testing.TB, addrs []string) {
	t.Helper()
	for _, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		require.Eventually(t, func() bool {
			info, err := c.ClusterInfo(context.Background()).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_slots_ok:16384") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(addrs)))
		}, 30*time.Second, 50*time.Millisecond, "cluster node %s never said cluster_state:ok", addr)
		_ = c.Close()
	}
}

// SentinelMaster is the master name Sentinel's sentinel monitors.
const SentinelMaster = "lakegate-test"

// Sentinel starts a Redis master on 127.0.0.1:7105, a replica of it on
// a free port, and a Sentinel on 127.0.0.1:7104 monitoring them as
// SentinelMaster, for this test, and returns the redis+sentinel:// URL.
// With a password, the servers and the sentinel require it, and the URL
// carries it (as the userinfo and as sentinel_password). The servers are
// killed when the test ends; Failover swaps master and replica.
func Sentinel(t testing.TB, password string) string {
	t.Helper()
	bins := need(t, "redis-server")
	lock(t, "sentinel-7104-7105")
	dir := t.TempDir()
	var auth []string
	if password != "" {
		auth = []string{"--requirepass", password, "--masterauth", password}
	}
	master := serve(t, bins[0], dir, masterPort, auth...)
	replica := serve(t, bins[0], dir, freePort(t), append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(masterPort)}, auth...)...)
	waitReplicating(t, replica, password)
	conf := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1\n", SentinelMaster, masterPort) +
		fmt.Sprintf("sentinel down-after-milliseconds %s 1000\n", SentinelMaster)
	if password != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\nrequirepass %s\n", SentinelMaster, password, password)
	}
	confPath := filepath.Join(dir, "sentinel.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600)) // sentinel rewrites it: its own file
	sentinel := serve(t, bins[0], dir, sentinelPort, confPath, "--sentinel")
	waitSentinel(t, sentinel, password, master, true)
	u := "redis+sentinel://" + sentinel + "/" + SentinelMaster + "/0"
	if password != "" {
		u = "redis+sentinel://" + url.UserPassword("", password).String() + "@" + sentinel + "/" + SentinelMaster +
			"/0?sentinel_password=" + url.QueryEscape(password)
	}
	return u
}

// waitSentinel waits until the sentinel names master as the master and,
// with replica, knows a replica it could promote.
func waitSentinel(t testing.TB, sentinel, password, master string, replica bool) {
	t.Helper()
	s := redis.NewSentinelClient(&redis.Options{Addr: sentinel, Password: password})
	defer s.Close()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		addr, err := s.GetMasterAddrByName(ctx, SentinelMaster).Result()
		if err != nil || len(addr) != 2 || net.JoinHostPort(addr[0], addr[1]) != master {
			return false
		}
		if !replica {
			return true
		}
		replicas, err := s.Replicas(ctx, SentinelMaster).Result()
		return err == nil && len(replicas) == 1 && replicas[0]["flags"] == "slave"
	}, 20*time.Second, 50*time.Millisecond, "sentinel %s never named master %s (with a replica: %v)", sentinel, master, replica)
}

// waitReplicating waits until the replica at addr is in sync with its
// master.
func waitReplicating(t testing.TB, addr, password string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: password})
	defer c.Close()
	require.Eventually(t, func() bool {
		info, err := c.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 20*time.Second, 50*time.Millisecond, "replica %s never synced", addr)
}

// Failover has Sentinel's sentinel promote the replica (SENTINEL
// FAILOVER), waits until the new master takes writes and the old one
// replicates it, and returns the new master's address. Clients learn of
// it from the sentinel.
func Failover(t testing.TB, password string) string {
	t.Helper()
	ctx := context.Background()
	sentinel := net.JoinHostPort("127.0.0.1", strconv.Itoa(sentinelPort))
	s := redis.NewSentinelClient(&redis.Options{Addr: sentinel, Password: password})
	defer s.Close()
	old, err := s.GetMasterAddrByName(ctx, SentinelMaster).Result()
	require.NoError(t, err)
	require.NoError(t, s.Failover(ctx, SentinelMaster).Err())
	var master string
	require.Eventually(t, func() bool {
		addr, err := s.GetMasterAddrByName(ctx, SentinelMaster).Result()
		if err != nil || len(addr) != 2 || addr[1] == old[1] {
			return false
		}
		master = net.JoinHostPort(addr[0], addr[1])
		c := redis.NewClient(&redis.Options{Addr: master, Password: password})
		defer c.Close()
		info, err := c.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "role:master")
	}, 30*time.Second, 50*time.Millisecond, "sentinel did not fail over")
	// Until the sentinel turns the old master into a replica (about 10 s
	// on, killing its clients' connections, which then ask the sentinel
	// anew), both take writes, and go-redis keeps pub/sub connections on
	// the old one (it moves only its command connections at
	// +switch-master): a test would see that split brain, not the
	// failover.
	waitReplicating(t, net.JoinHostPort(old[0], old[1]), password)
	return master
}

// freePort is a port the kernel has free now (for a server no other
// suite needs to find at a fixed port).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// need finds the programs, skipping the test when one is missing unless
// RequireEnv says this run must have them.
func need(t testing.TB, names ...string) []string {
	t.Helper()
	paths := make([]string, len(names))
	for i, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv(RequireEnv) == "1" {
				t.Fatalf("%s is not installed, but %s=1 says this run has it", name, RequireEnv)
			}
			t.Skipf("%s is not installed (set %s=1 to make that a failure)", name, RequireEnv)
		}
		paths[i] = p
	}
	return paths
}

// lock holds an exclusive lock on a file named for the ports until the
// test ends (its cleanup runs after the servers' cleanups, which were
// registered later).
func lock(t testing.TB, name string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "lakegate-redistest-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	})
}

// serve runs redis-server on 127.0.0.1:port with no persistence until
// the test ends, and returns its address once it accepts connections.
// args come first, so a config file may be among them.
func serve(t testing.TB, bin, dir string, port int, args ...string) string {
	t.Helper()
	addr, _ := start(t, bin, dir, port, args...)
	return addr
}

// Process is a redis-server a test started, for tests that freeze it
// (SIGSTOP) and thaw it.
type Process struct {
	URL string
	Cmd *exec.Cmd
}

// Start runs a redis-server of the test's own on a free loopback port,
// with args added to its command line (say --maxmemory), until the test
// ends. Without redis-server the test is skipped, unless
// LAKEGATE_TEST_REDIS says this run has Redis: then it fails.
func Start(t testing.TB, args ...string) *Process {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("LAKEGATE_TEST_REDIS") != "" {
			t.Fatal("redis-server is not installed, but LAKEGATE_TEST_REDIS says this run has Redis")
		}
		t.Skip("redis-server is not installed (.ci/run installs it)")
	}
	addr, cmd := start(t, bin, t.TempDir(), freePort(t), args...)
	return &Process{URL: "redis://" + addr, Cmd: cmd}
}

// start is serve, also returning the process.
func start(t testing.TB, bin, dir string, port int, args ...string) (string, *exec.Cmd) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Fatalf("port %d is taken (a redis-server left by an earlier run?): %v", port, err)
	} else {
		_ = l.Close()
	}
	// Each server in a directory of its own: a replica writes the RDB file
	// of its first sync there.
	dir = filepath.Join(dir, strconv.Itoa(port))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	logPath := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin, append(args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir, "--logfile", logPath)...)
	// A test binary killed mid-run takes its servers along: they would
	// hold the fixed ports against the next run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			if log, err := os.ReadFile(logPath); err == nil {
				t.Logf("redis-server :%d log:\n%s", port, lastLines(log, 30))
			}
		}
	})
	require.Eventually(t, func() bool {
		select {
		case <-exited:
			return true // reported below
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "redis-server on port %d did not start", port)
	select {
	case <-exited:
		log, _ := os.ReadFile(logPath)
		t.Fatalf("redis-server on port %d exited:\n%s", port, lastLines(log, 30))
	default:
	}
	return addr, cmd
}

func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return bytes.Join(lines[max(0, len(lines)-n):], []byte("\n"))
}
