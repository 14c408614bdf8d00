// Package redistest gives tests a Redis: the real server at
// LAKEGATE_TEST_REDIS (a redis:// URL; CI sets it), else an in-process
// miniredis. Cluster and Sentinel start real Redis Clusters and
// Sentinels for a test.
package redistest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/redisurl"
)

var seq atomic.Int64

// URL returns the Redis URL tests should use, starting a miniredis for
// this test when LAKEGATE_TEST_REDIS is unset.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("LAKEGATE_TEST_REDIS"); u != "" {
		return u
	}
	m := miniredis.RunT(t)
	// miniredis keeps its own clock: advance it with real time so TTLs
	// expire as they would on a real server.
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				m.FastForward(20 * time.Millisecond)
			}
		}
	}()
	return "redis://" + m.Addr()
}

// Client returns a client for URL(t), closed when the test ends. Each
// call without LAKEGATE_TEST_REDIS starts its own miniredis: a test that
// also hands a URL to a gateway uses ClientAt with that URL.
func Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	return ClientAt(t, URL(t))
}

// ClientAt returns a client for url (any form lakegate takes: standalone,
// redis+cluster://, redis+sentinel://), closed when the test ends.
func ClientAt(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	target, err := redisurl.Parse(url)
	require.NoError(t, err)
	c := target.NewClient()
	require.NoError(t, c.Ping(context.Background()).Err())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Prefix is a key prefix unique to this test run, so tests sharing one
// real Redis never see each other's keys.
func Prefix(t testing.TB) string {
	return fmt.Sprintf("lakegate-test:%d:%d:%s:", time.Now().UnixNano(), seq.Add(1), t.Name())
}
