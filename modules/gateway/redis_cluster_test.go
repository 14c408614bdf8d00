package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream"
)

// Two gateway processes on a real three-master Redis Cluster share what
// they share on one Redis: Idempotency-Key records, the LoadTable cache's
// L2 and its invalidation bus.
func TestReplicasOnRedisCluster(t *testing.T) {
	replicasShareRedis(t, redistest.Cluster(t))
}

// The same behind a real Sentinel whose master and sentinel both require
// a password: the URL's password and its sentinel_password are
// placeholders, resolved at Provision.
func TestReplicasOnRedisSentinel(t *testing.T) {
	const pw = "sentinel-test-pw"
	url := redistest.Sentinel(t, pw)
	t.Setenv("LG_TEST_SENTINEL_PW", pw) // the replicas inherit it
	url = strings.ReplaceAll(url, pw, "{env.LG_TEST_SENTINEL_PW}")
	require.Contains(t, url, ":{env.LG_TEST_SENTINEL_PW}@")
	require.Contains(t, url, "sentinel_password={env.LG_TEST_SENTINEL_PW}")
	replicasShareRedis(t, url)
}

func replicasShareRedis(t *testing.T, redisURL string) {
	b := serveCounting(t, nil)
	var commits atomic.Int64
	backend := newLoopbackServer(t, countCommits(b, &commits))
	seedTables(t, b.prefixURL(), "ns", "t")
	name := uniqueName("lake")
	cat := cached(name, backend, map[string]any{"max_age": int64(time.Hour)}, nil)
	cat["idempotency"] = map[string]any{}
	app := map[string]any{"redis": redisURL, "catalogs": []any{cat}}
	a, bb := replica(t, app), replica(t, app)
	path := "/v1/" + name + "/namespaces/ns/tables/t"

	t.Run("L2 hit on the other replica", func(t *testing.T) {
		first := getTable(t, a+path)
		require.Equal(t, http.StatusOK, first.status, string(first.body))
		assert.Equal(t, "miss", first.how())
		other := getTable(t, bb+path)
		require.Equal(t, http.StatusOK, other.status)
		assert.Equal(t, "hit-l2", other.how(), "b's first load finds what a cached in Redis")
		assert.Equal(t, first.body, other.body)
		assert.Equal(t, int64(1), b.loads.Load(), "the L2 hit did not reach the backend")
	})

	t.Run("a write through one evicts the other", func(t *testing.T) {
		for i := range 6 {
			writer, reader := a, bb
			if i%2 == 1 {
				writer, reader = bb, a
			}
			require.Equal(t, "hit-l1", getTable(t, reader+path).how(), "round %d: cached before the write", i)
			setProperty(t, writer+path, "owner", fmt.Sprint("round ", i))
			got := getTable(t, reader+path)
			require.Equal(t, http.StatusOK, got.status)
			require.Equal(t, fmt.Sprint("round ", i), got.props["owner"],
				"round %d: stale read after a write through the other replica", i)
			// the writer sees it too, and caches it for the next round
			require.Equal(t, fmt.Sprint("round ", i), getTable(t, writer+path).props["owner"])
		}
	})

	t.Run("a keyed commit retried through the other replica applies once", func(t *testing.T) {
		before := commits.Load()
		key := uuid.Must(uuid.NewV7()).String()
		body := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"keyed":"once"}}]}`
		status, first, _ := post(t, a+path, key, body)
		require.Equal(t, http.StatusOK, status, first)
		status, again, h := post(t, bb+path, key, body)
		require.Equal(t, http.StatusOK, status, again)
		assert.Equal(t, "true", h.Get(upstream.ReplayedHeader))
		assert.Equal(t, first, again, "the retry is answered with the first outcome")
		assert.Equal(t, before+1, commits.Load(), "the commit reached the backend more than once")
	})

	t.Run("concurrent retries across both apply once", func(t *testing.T) {
		before := commits.Load()
		key := uuid.Must(uuid.NewV7()).String()
		body := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"keyed":"racing"}}]}`
		bodies := make([]string, 20)
		var wg sync.WaitGroup
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, got, _ := post(t, []string{a, bb}[i%2]+path, key, body)
				assert.Equal(t, http.StatusOK, status, got)
				bodies[i] = got
			}()
		}
		wg.Wait()
		assert.Equal(t, before+1, commits.Load(), "the commit reached the backend more than once")
		for i, got := range bodies {
			assert.Equal(t, bodies[0], got, "client %d got another outcome", i)
		}
	})
}
