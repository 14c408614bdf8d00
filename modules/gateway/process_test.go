package gateway_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backendProcess is a backend catalog in a process of its own: the
// lakegate binary serving one embedded catalog "lake" on a fixed address
// and data directory, so the test can freeze it (SIGSTOP), kill it
// (SIGKILL) and start it again over the same data.
type backendProcess struct {
	t      *testing.T
	addr   string
	config string
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

func startBackendProcess(t *testing.T) *backendProcess {
	t.Helper()
	dir := t.TempDir()
	b := &backendProcess{t: t, addr: freeAddr(t), config: filepath.Join(dir, "backend.json")}
	cfg := caddyJSON(t, b.addr, map[string]any{"default_catalog": "lake", "catalogs": []any{map[string]any{"name": "lake",
		"embedded": map[string]any{"dsn": filepath.Join(dir, "catalog.db"), "warehouse": filepath.Join(dir, "warehouse")}}}})
	require.NoError(t, os.WriteFile(b.config, cfg, 0o600))
	b.start()
	t.Cleanup(b.kill)
	return b
}

func (b *backendProcess) url() string { return "http://" + b.addr }

func (b *backendProcess) start() {
	b.t.Helper()
	b.stderr.Reset()
	b.cmd = exec.Command(lakegateBinary(b.t), "run", "--config", b.config)
	b.cmd.Stderr = &b.stderr
	require.NoError(b.t, b.cmd.Start())
	require.Eventually(b.t, func() bool {
		c, err := net.Dial("tcp", b.addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "backend did not start: %s", b.stderr.String())
}

func (b *backendProcess) signal(s syscall.Signal) { require.NoError(b.t, b.cmd.Process.Signal(s)) }

func (b *backendProcess) kill() {
	if b.cmd == nil || b.cmd.ProcessState != nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGCONT)
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
}

// TestBackendProcessHangsAndDies: a backend process frozen with SIGSTOP
// and then killed with SIGKILL, behind the gateway. Frozen, a cached table
// is answered from its stale copy once read_timeout passes, an uncached one
// fails with 504, and consecutive timeouts open the breaker (503 with
// Retry-After, the backend not asked); thawed, the gateway recovers after
// the breaker's timeout. Killed, reads get 503 and a keyed commit is
// refused unrun; restarted over the same data, nothing committed is lost
// and the refused commit was never applied.
func TestBackendProcessHangsAndDies(t *testing.T) {
	be := startBackendProcess(t)
	name := uniqueName("lake")
	cat := cached(name, be.url(),
		map[string]any{"max_age": int64(100 * time.Millisecond), "stale_if_error": int64(time.Minute)},
		map[string]any{"read_timeout": int64(time.Second), "write_timeout": int64(5 * time.Second),
			"breaker": map[string]any{"failures": 3, "timeout": int64(2 * time.Second)}})
	cat["idempotency"] = map[string]any{}
	base := gateway(t, map[string]any{"catalogs": []any{cat}})
	prefix := base + "/v1/" + name
	seedTables(t, prefix, "ns", "cached", "other", "unread")
	setProperty(t, prefix+"/namespaces/ns/tables/cached", "before", "the faults")
	first := getTable(t, prefix+"/namespaces/ns/tables/cached")
	require.Equal(t, http.StatusOK, first.status, string(first.body))

	be.signal(syscall.SIGSTOP)
	time.Sleep(150 * time.Millisecond) // past max_age: the next load asks the backend
	began := time.Now()
	stale := getTable(t, prefix+"/namespaces/ns/tables/cached")
	t.Logf("frozen backend: stale copy answered after %v (read_timeout 1s)", time.Since(began).Round(time.Millisecond))
	require.Equal(t, http.StatusOK, stale.status, string(stale.body))
	assert.Equal(t, "stale", stale.how())
	assert.Equal(t, first.body, stale.body)

	var open loaded
	for i := 0; i < 4; i++ {
		open = getTable(t, prefix+"/namespaces/ns/tables/other")
		if open.status == http.StatusServiceUnavailable {
			break
		}
		assert.Equal(t, http.StatusGatewayTimeout, open.status, string(open.body))
	}
	require.Equal(t, http.StatusServiceUnavailable, open.status, string(open.body))
	assert.Contains(t, string(open.body), "circuit breaker open")
	assert.NotEmpty(t, open.header.Get("Retry-After"))

	be.signal(syscall.SIGCONT)
	assert.Eventually(t, func() bool {
		return getTable(t, prefix+"/namespaces/ns/tables/other").status == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "the gateway did not recover after the backend thawed")

	be.kill()
	dead := getTable(t, prefix+"/namespaces/ns/tables/unread") // never cached, so no stale copy
	assert.Equal(t, http.StatusServiceUnavailable, dead.status, string(dead.body))
	key := uuid.Must(uuid.NewV7()).String()
	status, body, _ := post(t, prefix+"/namespaces/ns/tables/cached", key,
		`{"requirements":[],"updates":[{"action":"set-properties","updates":{"during":"death"}}]}`)
	assert.Equal(t, http.StatusServiceUnavailable, status, body)

	be.start()
	var back loaded
	assert.Eventually(t, func() bool {
		back = getTable(t, prefix+"/namespaces/ns/tables/cached", "If-None-Match", "")
		return back.status == http.StatusOK && back.how() != "stale"
	}, 10*time.Second, 100*time.Millisecond, "the gateway did not recover after the backend restarted")
	assert.Equal(t, "the faults", back.props["before"], "a committed property was lost")
	assert.NotContains(t, back.props, "during", "a refused commit was applied")
}

// `lakegate version` names lakegate's version and the Caddy under it.
func TestVersionCommand(t *testing.T) {
	out, err := exec.Command(lakegateBinary(t), "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	line := strings.TrimSpace(string(out))
	assert.Regexp(t, `^lakegate \S+ \(Caddy v2\.11\.9 `, line)
}
