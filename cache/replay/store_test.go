package replay_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/cache/replay"
)

// Every Store implementation honours the same contract.
func TestStores(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) replay.Store{
		"memory": func(t *testing.T) replay.Store {
			s := replay.NewMemory()
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
		"redis": func(t *testing.T) replay.Store {
			return replay.NewRedis(redistest.Client(t), redistest.Prefix(t))
		},
	} {
		t.Run(name, func(t *testing.T) { storeContract(t, open) })
	}
}

func storeContract(t *testing.T, open func(t *testing.T) replay.Store) {
	ctx := context.Background()
	t.Run("one claim wins", func(t *testing.T) {
		s := open(t)
		a := replay.Record{Fingerprint: "fp", Owner: "a"}
		got, ok, err := s.Claim(ctx, "k", a, time.Minute)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, "a", got.Owner)
		got, ok, err = s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "b"}, time.Minute)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, "a", got.Owner, "the second claimant sees the first claim")
	})
	t.Run("a sent claim outlives its lease; extending moves only its lease", func(t *testing.T) {
		s := open(t)
		_, _, err := s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "a"}, 200*time.Millisecond)
		require.NoError(t, err)
		require.ErrorIs(t, s.MarkSent(ctx, "k", "intruder", time.Second, time.Minute), replay.ErrClaimLost)
		require.NoError(t, s.MarkSent(ctx, "k", "a", 100*time.Millisecond, time.Minute))
		time.Sleep(300 * time.Millisecond) // past the claim's lease and the sent lease
		rec, ok, err := s.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok, "a sent claim must not expire with its lease")
		assert.True(t, rec.Sent)
		assert.Less(t, rec.LeaseUntil, time.Now().UnixMilli())
		require.NoError(t, s.Extend(ctx, "k", "a", time.Minute))
		rec, ok, err = s.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Greater(t, rec.LeaseUntil, time.Now().UnixMilli())
		_, claimed, err := s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "b"}, time.Minute)
		require.NoError(t, err)
		assert.False(t, claimed, "a sent key is never claimed again")
		require.ErrorIs(t, s.MarkSent(ctx, "gone", "a", time.Second, time.Minute), replay.ErrClaimLost)
	})
	t.Run("only a lapsed sent claim is taken over, by one caller", func(t *testing.T) {
		s := open(t)
		_, ok, err := s.TakeOver(ctx, "none", "x", time.Minute)
		require.NoError(t, err)
		assert.False(t, ok, "nothing to take over")
		_, _, err = s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "a"}, time.Minute)
		require.NoError(t, err)
		_, ok, err = s.TakeOver(ctx, "k", "x", time.Minute)
		require.NoError(t, err)
		assert.False(t, ok, "an unsent claim is not taken over")
		require.NoError(t, s.MarkSent(ctx, "k", "a", time.Minute, time.Minute))
		_, ok, err = s.TakeOver(ctx, "k", "x", time.Minute)
		require.NoError(t, err)
		assert.False(t, ok, "a live holder keeps its claim")
		require.NoError(t, s.Extend(ctx, "k", "a", 0)) // the holder gives up
		time.Sleep(5 * time.Millisecond)
		won := 0
		for _, owner := range []string{"b", "c"} {
			rec, ok, err := s.TakeOver(ctx, "k", owner, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, "fp", rec.Fingerprint)
			if ok {
				won++
				assert.Equal(t, owner, rec.Owner)
				assert.True(t, rec.Sent)
			}
		}
		assert.Equal(t, 1, won)
		rec, ok, err := s.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, "b", rec.Owner)
		assert.False(t, rec.Lapsed(time.Now()))
	})
	t.Run("finalize by owner only, then replayable", func(t *testing.T) {
		s := open(t)
		_, _, err := s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "a"}, time.Minute)
		require.NoError(t, err)
		final := replay.Record{Fingerprint: "fp", Final: true, Status: 200,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"x":1}`)}
		require.NoError(t, s.Finalize(ctx, "k", "intruder", final, time.Minute))
		rec, _, err := s.Get(ctx, "k")
		require.NoError(t, err)
		assert.False(t, rec.Final, "a non-owner cannot finalize")
		require.NoError(t, s.Finalize(ctx, "k", "a", final, time.Minute))
		rec, ok, err := s.Get(ctx, "k")
		require.NoError(t, err)
		require.True(t, ok)
		assert.True(t, rec.Final)
		assert.Equal(t, 200, rec.Status)
		assert.Equal(t, `{"x":1}`, string(rec.Body))
		assert.Equal(t, "application/json", rec.Header.Get("Content-Type"))
	})
	t.Run("release frees the key for a retry", func(t *testing.T) {
		s := open(t)
		_, _, err := s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "a"}, time.Minute)
		require.NoError(t, err)
		require.NoError(t, s.Release(ctx, "k", "other"))
		_, ok, _ := s.Get(ctx, "k")
		assert.True(t, ok, "only the owner releases")
		require.NoError(t, s.Release(ctx, "k", "a"))
		_, ok, err = s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "b"}, time.Minute)
		require.NoError(t, err)
		assert.True(t, ok)
	})
	t.Run("a lease expires, and can be extended", func(t *testing.T) {
		s := open(t)
		_, _, err := s.Claim(ctx, "k", replay.Record{Fingerprint: "fp", Owner: "a"}, 300*time.Millisecond)
		require.NoError(t, err)
		require.NoError(t, s.Extend(ctx, "k", "a", 2*time.Second))
		time.Sleep(500 * time.Millisecond)
		_, ok, _ := s.Get(ctx, "k")
		assert.True(t, ok, "extended past the first lease")
		_, _, err = s.Claim(ctx, "k2", replay.Record{Fingerprint: "fp", Owner: "a"}, 200*time.Millisecond)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, ok, err := s.Claim(ctx, "k2", replay.Record{Fingerprint: "fp", Owner: "b"}, time.Minute)
			return err == nil && ok
		}, 5*time.Second, 50*time.Millisecond, "a crashed owner's claim expires")
	})
}

// TestMemoryBounded: a full in-memory store refuses new claims (the
// request is not run) and never drops a kept record to make room.
func TestMemoryBounded(t *testing.T) {
	ctx := context.Background()
	m := replay.NewBoundedMemory(2, 100)
	t.Cleanup(func() { _ = m.Close() })
	claim := func(key string) error {
		_, _, err := m.Claim(ctx, key, replay.Record{Fingerprint: "f", Owner: key}, time.Minute)
		return err
	}
	require.NoError(t, claim("a"))
	require.NoError(t, claim("b"))
	err := claim("c")
	require.ErrorIs(t, err, replay.ErrFull)
	require.ErrorIs(t, err, replay.ErrUnavailable)
	require.NoError(t, m.Release(ctx, "b", "b"))
	require.NoError(t, claim("c"), "a released claim makes room")

	// bytes: a kept 100-byte body fills it; the record stays.
	require.NoError(t, m.Finalize(ctx, "a", "a", replay.Record{Fingerprint: "f", Final: true, Status: 200,
		Body: make([]byte, 100)}, time.Minute))
	require.NoError(t, m.Release(ctx, "c", "c"))
	require.ErrorIs(t, claim("d"), replay.ErrFull)
	rec, ok, err := m.Get(ctx, "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Len(t, rec.Body, 100)
}
