package commitlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
)

// Both stores keep a table's newest MaxPerTable entries, newest first,
// apart from every other table's.
func TestStoresAreBoundedPerTable(t *testing.T) {
	ctx := context.Background()
	for name, store := range map[string]Store{
		"memory": NewMemory(),
		"redis":  NewRedis(redistest.Client(t), redistest.Prefix(t)),
	} {
		t.Run(name, func(t *testing.T) {
			orders := Table{Catalog: "lake", Namespace: []string{"sales", "eu"}, Name: "orders"}
			other := Table{Catalog: "lake", Namespace: []string{"sales"}, Name: "eu\x00orders"}
			for i := range MaxPerTable + 7 {
				require.NoError(t, store.Add(ctx, orders, Entry{Principal: fmt.Sprintf("p%d", i), Operation: "updateTable",
					Kinds: []string{"append"}, SnapshotIDs: []int64{int64(i)}}))
			}
			require.NoError(t, store.Add(ctx, other, Entry{Principal: "someone else"}))
			got, err := store.List(ctx, orders)
			require.NoError(t, err)
			require.Len(t, got, MaxPerTable)
			assert.Equal(t, fmt.Sprintf("p%d", MaxPerTable+6), got[0].Principal, "newest first")
			assert.Equal(t, "p7", got[MaxPerTable-1].Principal, "the oldest are dropped")
			assert.Equal(t, []int64{MaxPerTable + 6}, got[0].SnapshotIDs)
			got, err = store.List(ctx, other)
			require.NoError(t, err)
			require.Len(t, got, 1, "names that join alike are different tables")
			got, err = store.List(ctx, Table{Catalog: "lake", Namespace: []string{"none"}, Name: "x"})
			require.NoError(t, err)
			assert.Empty(t, got)
		})
	}
}

// A Redis record expires TTL after its last commit.
func TestRedisRecordExpires(t *testing.T) {
	client := redistest.Client(t)
	prefix := redistest.Prefix(t)
	store := NewRedis(client, prefix)
	tbl := Table{Catalog: "lake", Namespace: []string{"ns"}, Name: "t"}
	require.NoError(t, store.Add(context.Background(), tbl, Entry{Principal: "w"}))
	ttl, err := client.TTL(context.Background(), prefix+key(tbl)).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, TTL-time.Minute)
	assert.LessOrEqual(t, ttl, TTL)
	assert.True(t, store.Shared())
}

// The memory store forgets a table TTL after its last commit, and keeps
// at most maxTables tables, dropping the least recently committed to.
func TestMemoryExpiresAndBoundsTables(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	tbl := func(i int) Table { return Table{Catalog: "c", Namespace: []string{"n"}, Name: fmt.Sprint(i)} }
	require.NoError(t, m.Add(ctx, tbl(0), Entry{Principal: "a"}))
	now = now.Add(TTL + time.Second)
	got, _ := m.List(ctx, tbl(0))
	assert.Empty(t, got, "expired")

	for i := range maxTables + 1 {
		require.NoError(t, m.Add(ctx, tbl(i), Entry{Principal: "a"}))
	}
	assert.Len(t, m.tables, maxTables)
	got, _ = m.List(ctx, tbl(0))
	assert.Empty(t, got, "the least recently committed to is dropped")
	got, _ = m.List(ctx, tbl(maxTables))
	assert.Len(t, got, 1)
	assert.False(t, m.Shared())
}

// The journal writes what it is given, in order, and Close writes what is
// still queued.
func TestJournalWritesOffThePath(t *testing.T) {
	m := NewMemory()
	j := NewJournal(m, nil)
	tbl := Table{Catalog: "c", Namespace: []string{"n"}, Name: "t"}
	for i := range 3 {
		j.Note(tbl, Entry{Principal: fmt.Sprint(i)})
	}
	require.NoError(t, j.Close())
	got, err := j.Store().List(context.Background(), tbl)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, "2", got[0].Principal)
	assert.Zero(t, j.Dropped.Load())
}
