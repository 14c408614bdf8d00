package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// lakegateBinary builds the real lakegate binary once per test run:
// replicas are separate processes, as in production.
func lakegateBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lakegate-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "lakegate")
		cmd := exec.Command("go", "build", "-o", binPath, "./caddy")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// replica runs one lakegate process with the given lakegate app config
// and returns its base URL.
func replica(t *testing.T, app map[string]any) string {
	t.Helper()
	addr := freeAddr(t)
	return runReplica(t, addr, caddyJSON(t, addr, app))
}

// runReplica runs one lakegate process on cfg and returns its base URL
// once it listens on addr.
func runReplica(t *testing.T, addr string, cfg []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, cfg, 0o600))
	cmd := exec.Command(lakegateBinary(t), "run", "--config", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("replica %s stderr:\n%s", addr, stderr.String())
		}
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "replica did not start: %s", stderr.String())
	return "http://" + addr
}

// countCommits counts table commits (POST .../tables/{t}) that reach h.
func countCommits(h http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if r.Method == http.MethodPost && strings.Contains(p, "/tables/") && !strings.HasSuffix(p, "/metrics") {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

func post(t *testing.T, url, key, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

// Two gateway processes share one Redis: 50 identical commits with one
// Idempotency-Key, spread across both, reach the backend exactly once and
// every client gets the same status and body.
func TestReplayAcrossReplicas(t *testing.T) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	var commits atomic.Int64
	backend := newLoopbackServer(t, countCommits(cat, &commits))

	app := map[string]any{
		"redis":    redistest.URL(t),
		"catalogs": []any{map[string]any{"name": "lake", "remote": map[string]any{"url": backend}, "idempotency": map[string]any{}}},
	}
	replicas := []string{replica(t, app), replica(t, app)}

	status, body, _ := post(t, replicas[0]+"/v1/lake/namespaces", "", `{"namespace":["ns"]}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body, _ = post(t, replicas[0]+"/v1/lake/namespaces/ns/tables", "",
		`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`)
	require.Equal(t, http.StatusOK, status, body)

	resp, err := http.Get(replicas[1] + "/v1/config?warehouse=lake")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&cfg))
	resp.Body.Close()
	assert.Equal(t, "PT30M", cfg["idempotency-key-lifetime"])

	key := uuid.Must(uuid.NewV7()).String()
	commitBody := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"replay-test"}}]}`
	type result struct {
		status int
		body   string
	}
	results := make([]result, 50)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, b, _ := post(t, replicas[i%2]+"/v1/lake/namespaces/ns/tables/t", key, commitBody)
			results[i] = result{s, b}
		}()
	}
	wg.Wait()

	assert.Equal(t, int64(1), commits.Load(), "the commit reached the backend exactly once")
	for i, r := range results {
		assert.Equal(t, http.StatusOK, r.status, "client %d", i)
		assert.Equal(t, results[0].body, r.body, "client %d got a different body", i)
	}
	_, _, h := post(t, replicas[1]+"/v1/lake/namespaces/ns/tables/t", key, commitBody)
	assert.Equal(t, "true", h.Get(upstream.ReplayedHeader))
}

// newLoopbackServer serves h on a loopback port until the test ends.
func newLoopbackServer(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// After a Redis partition, a replica that committed while Redis was away
// delivers the invalidation when Redis returns, without waiting for its
// next request: the other replica stops serving the old table (it served
// it 16.8 s after Redis was back, issue 13).
func TestCacheConvergesWhenRedisReturns(t *testing.T) {
	rp := redistest.Start(t)
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	app := map[string]any{
		"redis":    rp.URL,
		"catalogs": []any{cached(name, b.url, map[string]any{"max_age": int64(time.Hour)}, nil)},
	}
	writer, reader := replica(t, app), replica(t, app)
	path := "/v1/" + name + "/namespaces/ns/tables/t"
	require.Equal(t, http.StatusOK, getTable(t, reader+path).status)
	require.Equal(t, "hit-l1", getTable(t, reader+path).how())

	require.NoError(t, rp.Cmd.Process.Signal(syscall.SIGSTOP))
	setProperty(t, writer+path, "owner", "during the partition")
	assert.NotContains(t, getTable(t, reader+path).props, "owner",
		"the reader cannot know yet: the writer could not reach Redis")
	require.NoError(t, rp.Cmd.Process.Signal(syscall.SIGCONT))

	// No request reaches the writer from here on.
	assert.Eventually(t, func() bool {
		return getTable(t, reader+path).props["owner"] == "during the partition"
	}, 15*time.Second, 100*time.Millisecond, "the reader still serves the table from before the commit")
}

// A keyed commit while Redis freezes (SIGSTOP) after the claim: the
// outcome cannot be stored at once. The commit reaches the backend once,
// whatever the retries: if Redis returns within the lease the retry is
// replayed; if not, retries get CommitStateUnknownException instead of a
// second apply (it was applied twice, issue 13).
func TestReplayOutcomeSurvivesRedisFreeze(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frozen time.Duration
		want   int
	}{
		{"redis back within the lease", time.Second, http.StatusOK},
		{"redis back after the lease", 5 * time.Second, http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := redistest.Start(t)
			cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = cat.Close() })
			var commits atomic.Int64
			var freeze atomic.Bool
			backend := newLoopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if freeze.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tables/t") {
					// The claim is taken and marked sent: Redis freezes now,
					// before the outcome can be stored.
					if err := rp.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
						t.Errorf("freezing redis: %v", err) // not require: this is the server's goroutine
					}
					time.AfterFunc(tc.frozen, func() { _ = rp.Cmd.Process.Signal(syscall.SIGCONT) })
				}
				countCommits(cat, &commits).ServeHTTP(w, r)
			}))
			app := map[string]any{
				"redis": rp.URL,
				"catalogs": []any{map[string]any{"name": "lake", "remote": map[string]any{"url": backend},
					"idempotency": map[string]any{"lease": int64(3 * time.Second), "wait": int64(30 * time.Second)}}},
			}
			gw := replica(t, app)
			status, body, _ := post(t, gw+"/v1/lake/namespaces", "", `{"namespace":["ns"]}`)
			require.Equal(t, http.StatusOK, status, body)
			status, body, _ = post(t, gw+"/v1/lake/namespaces/ns/tables", "",
				`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`)
			require.Equal(t, http.StatusOK, status, body)

			key := uuid.Must(uuid.NewV7()).String()
			commitBody := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"frozen"}}]}`
			freeze.Store(true)
			status, body, _ = post(t, gw+"/v1/lake/namespaces/ns/tables/t", key, commitBody)
			freeze.Store(false)
			require.Equal(t, http.StatusOK, status, "the client gets the backend's answer: %s", body)

			time.Sleep(tc.frozen + time.Second) // Redis is back
			for range 3 {
				status, body, h := post(t, gw+"/v1/lake/namespaces/ns/tables/t", key, commitBody)
				assert.Equal(t, tc.want, status, body)
				if tc.want == http.StatusOK {
					assert.Equal(t, "true", h.Get(upstream.ReplayedHeader))
				} else {
					assert.Equal(t, "CommitStateUnknownException", errorType([]byte(body)))
				}
			}
			assert.Equal(t, int64(1), commits.Load(), "the commit reached the backend more than once")
		})
	}
}

// A Redis at maxmemory under noeviction, as docs/configuration.md asks of the replay
// store: keyed writes get 503 before anything runs, loads keep being
// answered (the cache stops growing, not serving), a plain commit still
// invalidates the other replica, and once memory frees keyed writes run
// and replay again. Nothing is applied twice.
func TestRedisFullRefusesKeyedWritesSafely(t *testing.T) {
	rp := redistest.Start(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	b := serveCounting(t, nil)
	seedTables(t, b.prefixURL(), "ns", "t")
	var commits atomic.Int64
	backend := newLoopbackServer(t, countCommits(b, &commits))
	name := uniqueName("lake")
	cat := cached(name, backend, map[string]any{"max_age": int64(time.Hour)}, nil)
	cat["idempotency"] = map[string]any{}
	app := map[string]any{"redis": rp.URL, "catalogs": []any{cat}}
	writer, reader := replica(t, app), replica(t, app)
	path := "/v1/" + name + "/namespaces/ns/tables/t"
	require.Equal(t, http.StatusOK, getTable(t, reader+path).status)

	opts, err := redis.ParseURL(rp.URL)
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	// Fill it with large values, then with small ones: a large value
	// refused for OOM leaves its query buffer's memory free again, room
	// for a small claim, so only a small write refused means full.
	for _, size := range []int{64 << 10, 64} {
		junk := strings.Repeat("x", size)
		for i := 0; ; i++ {
			if err := rdb.Set(context.Background(), fmt.Sprintf("junk:%d:%d", size, i), junk, 0).Err(); err != nil {
				require.Contains(t, err.Error(), "OOM")
				break
			}
		}
	}

	commitBody := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"keyed"}}]}`
	key := uuid.Must(uuid.NewV7()).String()
	status, body, _ := post(t, writer+path, key, commitBody)
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, int64(0), commits.Load(), "a keyed write ran although its key could not be guarded")

	assert.Equal(t, http.StatusOK, getTable(t, writer+path).status, "loads are still answered")
	setProperty(t, writer+path, "owner", "plain")
	assert.Eventually(t, func() bool {
		return getTable(t, reader+path).props["owner"] == "plain"
	}, 5*time.Second, 50*time.Millisecond, "the invalidation did not reach the other replica")

	require.NoError(t, rdb.FlushDB(context.Background()).Err())
	status, body, _ = post(t, writer+path, key, commitBody)
	require.Equal(t, http.StatusOK, status, body)
	status, body, h := post(t, reader+path, key, commitBody)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "true", h.Get(upstream.ReplayedHeader))
	assert.Equal(t, int64(2), commits.Load(), "the plain commit and the keyed one, once each")
}
