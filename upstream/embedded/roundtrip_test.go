package embedded_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Data written through the REST client in several snapshots reads back
// row for row.
func TestDataRoundTrip(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"rt"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"rt", "events"}, eventSchema)
	require.NoError(t, err)

	var want []row
	for snap := int64(0); snap < 3; snap++ {
		data, rows := batch(t, tbl, snap*100, snap*100+100)
		tbl, err = tbl.AppendTable(ctx, data, 64, nil)
		data.Release()
		require.NoError(t, err)
		want = append(want, rows...)
	}

	loaded, err := cat.LoadTable(ctx, table.Identifier{"rt", "events"})
	require.NoError(t, err)
	assert.Len(t, loaded.Metadata().Snapshots(), 3)
	assert.Equal(t, want, scanAll(t, loaded))

	// time travel to the first snapshot sees only its rows
	first := loaded.Metadata().Snapshots()[0].SnapshotID
	at, err := loaded.Scan(table.WithSnapshotID(first)).ToArrowTable(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 100, at.NumRows())
	at.Release()
}

// Two writers append from the same base: exactly one wins, the stale one
// gets 409 CommitFailedException, and no snapshot is lost.
func TestConcurrentCommitRace(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	id := table.Identifier{"race", "events"}
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"race"}, nil))
	base, err := cat.CreateTable(ctx, id, eventSchema)
	require.NoError(t, err)
	seed, seedRows := batch(t, base, 0, 10)
	base, err = base.AppendTable(ctx, seed, 64, nil)
	require.NoError(t, err)

	writers := [2]*table.Table{}
	for i := range writers {
		writers[i], err = cat.LoadTable(ctx, id)
		require.NoError(t, err)
	}
	var (
		wg      sync.WaitGroup
		results [2]*table.Table
		errs    [2]error
		rows    [2][]row
	)
	for i := range writers {
		data, r := batch(t, writers[i], int64(100*(i+1)), int64(100*(i+1)+10))
		rows[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = writers[i].AppendTable(ctx, data, 64, nil)
		}()
	}
	wg.Wait()

	var winner, loser int
	switch {
	case errs[0] == nil && errs[1] != nil:
		winner, loser = 0, 1
	case errs[1] == nil && errs[0] != nil:
		winner, loser = 1, 0
	default:
		t.Fatalf("want exactly one commit to fail, got %v and %v", errs[0], errs[1])
	}
	assert.True(t, errors.Is(errs[loser], rest.ErrCommitFailed), "the stale writer gets 409: %v", errs[loser])

	final, err := cat.LoadTable(ctx, id)
	require.NoError(t, err)
	assert.Len(t, final.Metadata().Snapshots(), 2, "the seed snapshot and the winner's")
	assert.Equal(t, results[winner].CurrentSnapshot().SnapshotID, final.CurrentSnapshot().SnapshotID)
	assert.Equal(t, sortedRows(seedRows, rows[winner]), scanAll(t, final))

	// the loser refreshes and retries: nothing it wrote was lost either
	require.NoError(t, writers[loser].Refresh(ctx))
	data, _ := batch(t, writers[loser], int64(100*(loser+1)), int64(100*(loser+1)+10))
	_, err = writers[loser].AppendTable(ctx, data, 64, nil)
	require.NoError(t, err)
	final, err = cat.LoadTable(ctx, id)
	require.NoError(t, err)
	assert.Len(t, final.Metadata().Snapshots(), 3)
	assert.Equal(t, sortedRows(seedRows, rows[0], rows[1]), scanAll(t, final))
}
