package delta_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/translate/delta"
)

// Both stores keep the same contract: staging tables by id and by
// location until their time is up or they are deleted, and one holder of
// a table's update lock at a time.
func TestStores(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) delta.Store{
		"memory": func(*testing.T) delta.Store { return delta.NewMemoryStore() },
		"redis": func(t *testing.T) delta.Store {
			return delta.NewRedisStore(redistest.Client(t), redistest.Prefix(t))
		},
	} {
		t.Run(name+"/staged", func(t *testing.T) { testStaged(t, open(t)) })
		t.Run(name+"/expiry", func(t *testing.T) { testStagedExpiry(t, open(t)) })
		t.Run(name+"/lock", func(t *testing.T) { testLock(t, open(t)) })
	}
}

func testStaged(t *testing.T, s delta.Store) {
	ctx := context.Background()
	st := delta.Staged{TableID: "0b9f6a3e-5c1d-4f0e-9a55-3c1f0f6b2d10", Catalog: "lake",
		Namespace: []string{"a", "b"}, Name: "t", Location: "file:///w/a/b/t", Principal: "alice"}
	require.NoError(t, s.PutStaged(ctx, st, time.Minute))

	got, err := s.StagedByID(ctx, st.TableID)
	require.NoError(t, err)
	assert.Equal(t, &st, got)
	got, err = s.StagedByLocation(ctx, st.Location)
	require.NoError(t, err)
	assert.Equal(t, &st, got)

	none, err := s.StagedByID(ctx, "no-such-id")
	assert.NoError(t, err)
	assert.Nil(t, none)
	none, err = s.StagedByLocation(ctx, "file:///w/elsewhere")
	assert.NoError(t, err)
	assert.Nil(t, none)

	require.NoError(t, s.DeleteStaged(ctx, st))
	none, err = s.StagedByID(ctx, st.TableID)
	assert.NoError(t, err)
	assert.Nil(t, none)
	none, err = s.StagedByLocation(ctx, st.Location)
	assert.NoError(t, err)
	assert.Nil(t, none)
}

func testStagedExpiry(t *testing.T, s delta.Store) {
	ctx := context.Background()
	st := delta.Staged{TableID: "id-1", Location: "file:///w/t"}
	require.NoError(t, s.PutStaged(ctx, st, 200*time.Millisecond))
	assert.Eventually(t, func() bool {
		got, err := s.StagedByID(ctx, st.TableID)
		return err == nil && got == nil
	}, 5*time.Second, 50*time.Millisecond, "a staging table outlived its time")
	got, err := s.StagedByLocation(ctx, st.Location)
	assert.NoError(t, err)
	assert.Nil(t, got)
}

func testLock(t *testing.T, s delta.Store) {
	ctx := context.Background()
	unlock, err := s.Lock(ctx, "lake/a/t")
	require.NoError(t, err)

	// A second holder waits: with a short deadline it gives up.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = s.Lock(short, "lake/a/t")
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Another table's lock is independent.
	other, err := s.Lock(ctx, "lake/a/u")
	require.NoError(t, err)
	other()

	// Once released, the waiter gets it.
	var got atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		if u, err := s.Lock(ctx, "lake/a/t"); err == nil {
			got.Store(true)
			u()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	assert.False(t, got.Load(), "two holders of one lock")
	unlock()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter never got the released lock")
	}
	assert.True(t, got.Load())
}
