package upstream_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// countingBackend answers commits with a status it is told, counting
// every request that reaches it.
type countingBackend struct {
	hits   atomic.Int64
	status atomic.Int64
	delay  time.Duration
}

func (b *countingBackend) serve(w http.ResponseWriter, r *http.Request, _ icerest.Request) {
	n := b.hits.Add(1)
	time.Sleep(b.delay)
	body, _ := io.ReadAll(r.Body)
	status := int(b.status.Load())
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"applied":` + strconv.FormatInt(n, 10) + `,"echo":` + string(body) + `}`))
}

// replayServer is a tiny front door: route parsing, a fixed principal
// from the X-Principal header, and the Replayer in front of backend.
func replayServer(t *testing.T, store replay.Store, cfg upstream.ReplayConfig, backend *countingBackend) (*httptest.Server, *upstream.Replayer) {
	g := upstream.NewReplayer("lake", store, cfg, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, err := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), icerest.UnitSeparator)
		require.Nil(t, err)
		g.Serve(w, r, unvetted(r, rt), r.Header.Get("X-Principal"), backend.serve)
	}))
	t.Cleanup(srv.Close)
	return srv, g
}

type replayAnswer struct {
	status   int
	body     string
	replayed bool
	errType  string
}

func commit(t *testing.T, ctx context.Context, url, key, principal, body string) (replayAnswer, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/lake/namespaces/ns/tables/t", strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	req.Header.Set("X-Principal", principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return replayAnswer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := replayAnswer{status: resp.StatusCode, body: string(b), replayed: resp.Header.Get(upstream.ReplayedHeader) == "true"}
	if i := strings.Index(a.body, `"type":"`); i >= 0 {
		a.errType = strings.SplitN(a.body[i+8:], `"`, 2)[0]
	}
	return a, nil
}

func stores(t *testing.T) map[string]func() replay.Store {
	return map[string]func() replay.Store{
		"memory": func() replay.Store { s := replay.NewMemory(); t.Cleanup(func() { _ = s.Close() }); return s },
		"redis":  func() replay.Store { return replay.NewRedis(redistest.Client(t), redistest.Prefix(t)) },
	}
}

func TestReplaySemantics(t *testing.T) {
	ctx := context.Background()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("a retry after completion is replayed", func(t *testing.T) {
				b := &countingBackend{}
				srv, g := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				first, err := commit(t, ctx, srv.URL, key, "alice", `{"updates":[]}`)
				require.NoError(t, err)
				second, err := commit(t, ctx, srv.URL, key, "alice", `{"updates":[]}`)
				require.NoError(t, err)
				assert.Equal(t, int64(1), b.hits.Load())
				assert.Equal(t, first.status, second.status)
				assert.Equal(t, first.body, second.body)
				assert.False(t, first.replayed)
				assert.True(t, second.replayed)
				assert.Equal(t, int64(1), g.Replays.Load())
			})
			t.Run("same key, different body: 422", func(t *testing.T) {
				b := &countingBackend{}
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				_, err := commit(t, ctx, srv.URL, key, "alice", `{"updates":[]}`)
				require.NoError(t, err)
				a, err := commit(t, ctx, srv.URL, key, "alice", `{"updates":[{"action":"x"}]}`)
				require.NoError(t, err)
				assert.Equal(t, http.StatusUnprocessableEntity, a.status)
				assert.Equal(t, icerest.UnprocessableEntity, a.errType)
				assert.Equal(t, int64(1), b.hits.Load())
			})
			t.Run("malformed keys: 400, backend untouched", func(t *testing.T) {
				b := &countingBackend{}
				srv, g := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				for _, key := range []string{"nope", "017F22E2-79B0-7CC3-98C4-DC0C0C07398", "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
					"017f22e279b07cc398c4dc0c0c07398f", "zz7f22e2-79b0-7cc3-98c4-dc0c0c07398f"} {
					a, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
					require.NoError(t, err)
					assert.Equal(t, http.StatusBadRequest, a.status, key)
					assert.Equal(t, icerest.BadRequest, a.errType, key)
				}
				assert.Zero(t, b.hits.Load())
				_, err := commit(t, ctx, srv.URL, uuid.NewString(), "alice", `{}`) // v4: accepted, counted
				require.NoError(t, err)
				assert.Equal(t, int64(1), g.NonV7.Load())
			})
			t.Run("a 409 is final and replayed", func(t *testing.T) {
				b := &countingBackend{}
				b.status.Store(http.StatusConflict)
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				first, _ := commit(t, ctx, srv.URL, key, "alice", `{}`)
				b.status.Store(http.StatusOK)
				second, _ := commit(t, ctx, srv.URL, key, "alice", `{}`)
				assert.Equal(t, http.StatusConflict, first.status)
				assert.Equal(t, http.StatusConflict, second.status)
				assert.True(t, second.replayed)
				assert.Equal(t, int64(1), b.hits.Load())
			})
			t.Run("a 5xx that may have been applied is never run again", func(t *testing.T) {
				// A handler that says nothing of delivery is taken to have
				// received the request: its 5xx leaves the outcome unknown.
				b := &countingBackend{}
				b.status.Store(http.StatusServiceUnavailable)
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				first, _ := commit(t, ctx, srv.URL, key, "alice", `{}`)
				b.status.Store(http.StatusOK)
				second, _ := commit(t, ctx, srv.URL, key, "alice", `{}`)
				assert.Equal(t, http.StatusServiceUnavailable, first.status)
				assert.Equal(t, http.StatusInternalServerError, second.status, second.body)
				assert.Equal(t, icerest.CommitStateUnknown, second.errType)
				assert.Equal(t, int64(1), b.hits.Load(), "the retry ran the commit again")
			})
			t.Run("a refusal that applied nothing is released: the retry runs", func(t *testing.T) {
				for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusNotImplemented} {
					b := &countingBackend{}
					b.status.Store(int64(status))
					srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
					key := uuid.Must(uuid.NewV7()).String()
					_, _ = commit(t, ctx, srv.URL, key, "alice", `{}`)
					b.status.Store(http.StatusOK)
					second, _ := commit(t, ctx, srv.URL, key, "alice", `{}`)
					assert.Equal(t, http.StatusOK, second.status, "%d: %s", status, second.body)
					assert.Equal(t, int64(2), b.hits.Load(), "%d", status)
				}
			})
			t.Run("another principal's key is not replayable", func(t *testing.T) {
				b := &countingBackend{}
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				_, _ = commit(t, ctx, srv.URL, key, "alice", `{}`)
				mallory, _ := commit(t, ctx, srv.URL, key, "mallory", `{}`)
				assert.False(t, mallory.replayed)
				assert.Equal(t, int64(2), b.hits.Load(), "mallory's request ran on its own")
			})
			t.Run("a request killed after reaching the backend is never run again", func(t *testing.T) {
				b := &countingBackend{}
				store := newStore()
				srv, _ := replayServer(t, store, upstream.ReplayConfig{Lease: duration.Duration(300 * time.Millisecond), Wait: duration.Duration(5 * time.Second)}, b)
				key := uuid.Must(uuid.NewV7()).String()
				// a replica that died mid-request: its claim, never finalized
				killed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					g := upstream.NewReplayer("lake", store, upstream.ReplayConfig{Lease: duration.Duration(300 * time.Millisecond)}, nil)
					rt, _ := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), icerest.UnitSeparator)
					g.Serve(w, r, unvetted(r, rt), r.Header.Get("X-Principal"), func(http.ResponseWriter, *http.Request, icerest.Request) {
						panic(http.ErrAbortHandler) // dies before answering, no finalize, no release
					})
				}))
				defer killed.Close()
				_, err := commit(t, ctx, killed.URL, key, "alice", `{}`)
				require.Error(t, err)
				// Its outcome is unknown: once its lease lapses, retries are
				// told so (they wait while it might still be renewed).
				a, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
				require.NoError(t, err)
				assert.Equal(t, http.StatusInternalServerError, a.status, a.body)
				assert.Equal(t, icerest.CommitStateUnknown, a.errType)
				assert.Zero(t, b.hits.Load(), "the retry ran the request again")
			})
			t.Run("an outcome the store could not take at once is stored later", func(t *testing.T) {
				b := &countingBackend{}
				flaky := &flakyStore{Store: newStore()}
				flaky.failFinalize.Store(3)
				srv, _ := replayServer(t, flaky, upstream.ReplayConfig{Lease: duration.Duration(2 * time.Second)}, b)
				key := uuid.Must(uuid.NewV7()).String()
				first, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, first.status)
				again, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, again.status, again.body)
				assert.True(t, again.replayed)
				assert.Equal(t, int64(1), b.hits.Load())
			})
			t.Run("an outcome the store never takes: retries get CommitStateUnknown", func(t *testing.T) {
				b := &countingBackend{}
				flaky := &flakyStore{Store: newStore()}
				flaky.failFinalize.Store(1 << 30)
				srv, _ := replayServer(t, flaky, upstream.ReplayConfig{Lease: duration.Duration(300 * time.Millisecond), Wait: duration.Duration(5 * time.Second)}, b)
				key := uuid.Must(uuid.NewV7()).String()
				first, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, first.status, "the client gets the backend's answer")
				for range 2 {
					a, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
					require.NoError(t, err)
					assert.Equal(t, http.StatusInternalServerError, a.status, a.body)
					assert.Equal(t, icerest.CommitStateUnknown, a.errType)
				}
				assert.Equal(t, int64(1), b.hits.Load(), "a retry ran the commit a second time")
			})
			t.Run("the client gives up; the retry gets the committed result", func(t *testing.T) {
				b := &countingBackend{delay: 400 * time.Millisecond}
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				key := uuid.Must(uuid.NewV7()).String()
				short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				_, err := commit(t, short, srv.URL, key, "alice", `{"n":1}`)
				cancel()
				require.True(t, errors.Is(err, context.DeadlineExceeded), "the first client timed out: %v", err)
				a, err := commit(t, ctx, srv.URL, key, "alice", `{"n":1}`)
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, a.status)
				assert.True(t, a.replayed, "the retry waited for the first request and replayed it")
				assert.Contains(t, a.body, `"applied":1`)
				assert.Equal(t, int64(1), b.hits.Load(), "the commit ran once")
			})
			t.Run("requests without a key and reads are not guarded", func(t *testing.T) {
				b := &countingBackend{}
				srv, _ := replayServer(t, newStore(), upstream.ReplayConfig{}, b)
				_, _ = commit(t, ctx, srv.URL, "", "alice", `{}`)
				_, _ = commit(t, ctx, srv.URL, "", "alice", `{}`)
				assert.Equal(t, int64(2), b.hits.Load())
			})
		})
	}
}

// failingStore is a replay store whose backing service is down.
type failingStore struct{ replay.Store }

func (failingStore) Claim(context.Context, string, replay.Record, time.Duration) (replay.Record, bool, error) {
	return replay.Record{}, false, replay.ErrUnavailable
}

func TestReplayStoreDownRefusesKeyedWrites(t *testing.T) {
	b := &countingBackend{}
	srv, _ := replayServer(t, failingStore{}, upstream.ReplayConfig{}, b)
	a, err := commit(t, context.Background(), srv.URL, uuid.Must(uuid.NewV7()).String(), "alice", `{}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, a.status)
	assert.Equal(t, icerest.ServiceUnavailable, a.errType)
	assert.Zero(t, b.hits.Load(), "no risk of a double apply")
	a, err = commit(t, context.Background(), srv.URL, "", "alice", `{}`)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, a.status, "requests without a key are unaffected")
}

// flakyStore fails Finalize while failFinalize is positive, as a frozen or
// partitioned Redis does.
type flakyStore struct {
	replay.Store
	failFinalize atomic.Int64
}

func (f *flakyStore) Finalize(ctx context.Context, key, owner string, rec replay.Record, ttl time.Duration) error {
	if f.failFinalize.Add(-1) >= 0 {
		return fmt.Errorf("%w: frozen", replay.ErrUnavailable)
	}
	return f.Store.Finalize(ctx, key, owner, rec, ttl)
}

// bigBackend answers with a body of n bytes: compressible JSON (like
// table metadata), or random bytes.
func bigBackend(n int, random bool, hits *atomic.Int64) upstream.Handler {
	body := []byte(`{"metadata":"` + strings.Repeat("snapshot-", n/9) + `"}`)
	if random {
		body = make([]byte, n)
		_, _ = rand.Read(body)
	}
	return func(w http.ResponseWriter, r *http.Request, _ icerest.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// TestReplayRecordsBounded: large responses are kept compressed and
// replayed byte for byte; a response still larger than max_record_bytes
// is not kept, and a retry of its key is told the request was applied
// rather than run again.
func TestReplayRecordsBounded(t *testing.T) {
	ctx := context.Background()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			store := &finalizeSpy{Store: newStore()}
			var hits atomic.Int64
			serve := func(cfg upstream.ReplayConfig, h upstream.Handler) *httptest.Server {
				g := upstream.NewReplayer("lake", store, cfg, nil)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					rt, err := icerest.ParseRoute(r.Method, r.URL.EscapedPath(), icerest.UnitSeparator)
					require.Nil(t, err)
					g.Serve(w, r, unvetted(r, rt), "p", h)
				}))
				t.Cleanup(srv.Close)
				return srv
			}

			srv := serve(upstream.ReplayConfig{}, bigBackend(200_000, false, &hits))
			key := uuid.Must(uuid.NewV7()).String()
			first, err := commit(t, ctx, srv.URL, key, "p", `{}`)
			require.NoError(t, err)
			again, err := commit(t, ctx, srv.URL, key, "p", `{}`)
			require.NoError(t, err)
			assert.True(t, again.replayed)
			assert.Equal(t, first.body, again.body, "replayed byte for byte")
			assert.Equal(t, int64(1), hits.Load())
			assert.Equal(t, "gzip", store.last.Encoding)
			assert.Less(t, len(store.last.Body), len(first.body)/20, "kept compressed")

			hits.Store(0)
			srv = serve(upstream.ReplayConfig{MaxRecordBytes: 64 << 10}, bigBackend(100_000, true, &hits))
			key = uuid.Must(uuid.NewV7()).String()
			first, err = commit(t, ctx, srv.URL, key, "p", `{}`)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, first.status)
			again, err = commit(t, ctx, srv.URL, key, "p", `{}`)
			require.NoError(t, err)
			assert.Equal(t, http.StatusInternalServerError, again.status, again.body)
			assert.Equal(t, "CommitStateUnknownException", again.errType)
			assert.Contains(t, again.body, "was applied (status 200)")
			assert.Contains(t, again.body, "larger than the replay store keeps")
			assert.Positive(t, store.last.Unkept, "the record says how large the unkept response was")
			assert.Nil(t, store.last.Body, "and holds no body")
			assert.Equal(t, int64(1), hits.Load(), "never run twice")
		})
	}
}

// finalizeSpy remembers the last record finalized.
type finalizeSpy struct {
	replay.Store
	last replay.Record
}

func (s *finalizeSpy) Finalize(ctx context.Context, key, owner string, rec replay.Record, ttl time.Duration) error {
	s.last = rec
	return s.Store.Finalize(ctx, key, owner, rec, ttl)
}

// Refusals (4xx) kept per replica are bounded in count and size: past the
// bound the claim is released, and a retry of the refused (so unapplied)
// request runs again instead of being replayed.
func TestReplayErrorRecordsBounded(t *testing.T) {
	ctx := context.Background()
	b := &countingBackend{}
	b.status.Store(http.StatusConflict)
	srv, _ := replayServer(t, replay.NewMemory(), upstream.ReplayConfig{MaxErrorRecords: 2}, b)
	keys := []string{uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()}
	for _, key := range keys {
		a, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
		require.NoError(t, err)
		require.Equal(t, http.StatusConflict, a.status)
	}
	for i, key := range keys {
		a, err := commit(t, ctx, srv.URL, key, "alice", `{}`)
		require.NoError(t, err)
		assert.Equal(t, i < 2, a.replayed, "key %d", i)
	}
	assert.Equal(t, int64(4), b.hits.Load(), "the third refusal was kept beyond the bound")

	big := &countingBackend{}
	big.status.Store(http.StatusBadRequest)
	srv, _ = replayServer(t, replay.NewMemory(), upstream.ReplayConfig{}, big)
	key := uuid.Must(uuid.NewV7()).String()
	body := `{"pad":"` + strings.Repeat("x", 5<<10) + `"}` // echoed: a refusal over 4 KiB
	_, _ = commit(t, ctx, srv.URL, key, "alice", body)
	a, err := commit(t, ctx, srv.URL, key, "alice", body)
	require.NoError(t, err)
	assert.False(t, a.replayed)
	assert.Equal(t, int64(2), big.hits.Load())
}
