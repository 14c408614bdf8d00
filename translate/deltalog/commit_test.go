package deltalog

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Commit reads one commit's own file actions (cdc too), with locations
// resolved as a snapshot resolves them.
func TestCommitFiles(t *testing.T) {
	root := copyLog(t, "basic")
	ctx := context.Background()
	c, err := open(root).Commit(ctx, 3)
	require.NoError(t, err)
	require.Len(t, c.Removes, 1)
	assert.Equal(t, root+"/p=a b/c:d/part-b.parquet", c.Removes[0].Location)
	require.Len(t, c.Adds, 2)
	assert.Nil(t, c.Adds[0].PartitionValues["p"])
	assert.Nil(t, c.Adds[1].PartitionValues["p"], "an empty partition value is null, as a snapshot reads it")
	require.Len(t, c.CDC, 1)
	assert.Equal(t, root+"/_change_data/cdc-1.parquet", c.CDC[0].Location)
	assert.Nil(t, c.Metadata)

	c, err = open(root).Commit(ctx, 2)
	require.NoError(t, err)
	require.NotNil(t, c.Metadata, "a metadata change is reported")
	assert.Equal(t, []string{"p"}, c.Metadata.PartitionColumns)

	for _, v := range []int64{-1, 6} {
		_, err = open(root).Commit(ctx, v)
		assert.True(t, errors.Is(err, ErrNotFound), "version %d: %v", v, err)
	}
}

// Commit refuses what a snapshot would refuse.
func TestCommitBadInput(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"escaping path", `{"add":{"path":"../x.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`, "climbs out"},
		{"bad cdc path", `{"cdc":{"path":"a?b","partitionValues":{},"size":1,"dataChange":false}}`, "query or fragment"},
		{"not JSON", `{"add":`, "not a Delta action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "00000000000000000000.json", tc.body+"\n")
			_, err := open(root).Commit(context.Background(), 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// History lists every version still readable with its commit time: the
// commit files' modification times (In-Commit Timestamps off).
func TestHistory(t *testing.T) {
	root := copyLog(t, "basic")
	snap, commits, err := open(root).History(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(5), snap.Version)
	require.Len(t, commits, 6)
	for i, c := range commits {
		assert.Equal(t, int64(i), c.Version)
		assert.Equal(t, modTime(int64(i)), c.Timestamp)
	}

	// Commits cleaned up after a checkpoint at 3 are no longer listed.
	writeClassic(t, root, at(t, root, 3))
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json")
	_, commits, err = open(root).History(context.Background())
	require.NoError(t, err)
	var versions []int64
	for _, c := range commits {
		versions = append(versions, c.Version)
	}
	assert.Equal(t, []int64{3, 4, 5}, versions)
}
