package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// processConfig is the Caddy JSON of a lakegate process serving one
// embedded catalog on addr, with its admin endpoint on admin, its data
// in a directory of its own.
func processConfig(t *testing.T, addr, admin string) []byte {
	t.Helper()
	dir := t.TempDir()
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(caddyJSON(t, addr, map[string]any{"default_catalog": "lake",
		"catalogs": []any{map[string]any{"name": "lake", "embedded": map[string]any{
			"dsn": filepath.Join(dir, "catalog.db"), "warehouse": filepath.Join(dir, "warehouse")}}}}), &cfg))
	cfg["admin"] = map[string]any{"listen": admin, "config": map[string]any{"persist": false}}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	return raw
}

// startProcess runs the lakegate binary on cfg; it is killed when the
// test ends.
func startProcess(t *testing.T, cfg []byte) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, cfg, 0o600))
	cmd := exec.Command(lakegateBinary(t), "run", "--config", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out
}

func waitListening(t *testing.T, out *bytes.Buffer, addrs ...string) {
	t.Helper()
	for _, addr := range addrs {
		require.Eventually(t, func() bool {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err == nil
		}, 20*time.Second, 20*time.Millisecond, "%s did not listen: %s", addr, out)
	}
}

// exitOf waits for a process that should exit by itself (it is killed,
// and the test fails, if it still runs after 30 s).
func exitOf(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		require.FailNow(t, "the second process kept running on the first one's addresses", "%s", out)
		return nil
	}
}

// servesAll sends n requests, each on a connection of its own (a new
// connection is where the kernel picks among the sockets on a port), and
// requires every one answered 200.
func servesAll(t *testing.T, base string, n int) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < n; i++ {
		resp, err := client.Get(base + "/v1/config?warehouse=lake")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
	}
}

// TestSecondProcessRefusesServedAddresses: issue 39, item 1. A second
// lakegate on a running one's listen and admin addresses exits non-zero
// naming the address and the process serving it (without the check, both
// bind through SO_REUSEPORT and split the connections); so does one that
// shares only the admin address. The first serves every request, and its
// own reloads, which re-bind the same addresses in the same process, go on
// working.
func TestSecondProcessRefusesServedAddresses(t *testing.T) {
	addr, admin := freeAddr(t), freeAddr(t)
	cfg := processConfig(t, addr, admin)
	first, firstOut := startProcess(t, cfg)
	waitListening(t, firstOut, addr, admin)
	served := fmt.Sprintf("another process (pid %d) already listens on ", first.Process.Pid)

	second, out := startProcess(t, processConfig(t, addr, admin))
	err := exitOf(t, second, out)
	require.Error(t, err, "the second process exited 0: %s", out)
	assert.Contains(t, out.String(), served+addr)

	adminOnly, out := startProcess(t, processConfig(t, freeAddr(t), admin))
	require.Error(t, exitOf(t, adminOnly, out), "%s", out)
	assert.Contains(t, out.String(), served+admin)

	servesAll(t, "http://"+addr, 20)
	for i := 0; i < 3; i++ {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+admin+"/load", bytes.NewReader(cfg))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cache-Control", "must-revalidate") // reload an unchanged config too
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "reload %d refused: %s", i, firstOut)
		// A fresh connection the kernel queued on the old config's socket
		// as it closed may be reset (docs/operating.md, "Reloads"): the
		// reloaded process is asked until it answers.
		assert.Eventually(t, func() bool {
			resp, err := http.Get("http://" + addr + "/v1/config?warehouse=lake")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 10*time.Second, 20*time.Millisecond, "the reloaded process does not serve")
	}
	assert.Nil(t, first.ProcessState, "the first process exited: %s", firstOut)
}
