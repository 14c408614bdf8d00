package deltalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sameState compares what a snapshot says about the table.
func sameState(t *testing.T, want, got *Snapshot) {
	t.Helper()
	assert.Equal(t, want.Version, got.Version)
	assert.Equal(t, want.Protocol, got.Protocol)
	assert.Equal(t, want.Metadata, got.Metadata)
	assert.Equal(t, want.Files, got.Files)
	assert.Equal(t, want.Tombstones, got.Tombstones)
	assert.Equal(t, want.Txns, got.Txns)
	assert.Equal(t, want.Domains, got.Domains)
	assert.Equal(t, want.Timestamp, got.Timestamp)
}

// A classic checkpoint then more commits: with the commits before the
// checkpoint cleaned up, only the checkpoint can give the state.
func TestClassicCheckpointThenCommits(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	writeClassic(t, root, at(t, root, 3))
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json")

	got := latest(t, root)
	sameState(t, want, got)
	require.NotNil(t, got.Checkpoint)
	assert.Equal(t, CheckpointRef{Version: 3, Kind: "classic", Files: []string{"_delta_log/00000000000000000003.checkpoint.parquet"}}, *got.Checkpoint)
	assert.Equal(t, []int64{4, 5}, versions(got.Commits))

	// At the checkpoint's version the timestamp comes from its commit file.
	s3 := at(t, root, 3)
	assert.Equal(t, modTime(3), s3.Timestamp)
	assert.Empty(t, s3.Commits)

	// Before the checkpoint, the log no longer reaches.
	_, err := open(root).At(context.Background(), 2)
	assert.ErrorIs(t, err, ErrNotFound)
}

func versions(cs []Commit) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.Version)
	}
	return out
}

// Deletion vectors and partition values survive a checkpoint round trip.
func TestCheckpointKeepsDeletionVectors(t *testing.T) {
	root := copyLog(t, "dv")
	want := latest(t, root)
	writeClassic(t, root, want)
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json")
	got := latest(t, root)
	sameState(t, want, got)
	assert.True(t, got.InCommitTimestamp, "the ICT of the checkpoint's version is read from its commit")
}

func TestMultiPartCheckpoint(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	writeMultiPart(t, root, at(t, root, 4), 3)
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json", "00000000000000000003.json")
	got := latest(t, root)
	sameState(t, want, got)
	assert.Equal(t, "multi-part", got.Checkpoint.Kind)
	assert.Len(t, got.Checkpoint.Files, 3)
}

// "readers must ignore multi-part checkpoints with missing parts": the
// newest complete checkpoint is used, else the commits.
func TestIncompleteMultiPartCheckpointFallsBack(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	writeMultiPart(t, root, at(t, root, 4), 3)
	rm(t, root, fmt.Sprintf("%s.checkpoint.%010d.%010d.parquet", pad20(4), 2, 3))

	got := latest(t, root)
	sameState(t, want, got)
	assert.Nil(t, got.Checkpoint, "no complete checkpoint: replayed from version 0")

	writeClassic(t, root, at(t, root, 2))
	got = latest(t, root)
	sameState(t, want, got)
	assert.EqualValues(t, 2, got.Checkpoint.Version)
}

// _last_checkpoint names which of two complete multi-part sets of one
// version to use; one naming a checkpoint that is gone is ignored.
func TestLastCheckpoint(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	s4 := at(t, root, 4)
	writeMultiPart(t, root, s4, 2)
	writeMultiPart(t, root, s4, 3)

	write(t, root, "_last_checkpoint", `{"version":4,"size":9,"parts":3}`)
	got := latest(t, root)
	sameState(t, want, got)
	assert.Len(t, got.Checkpoint.Files, 3)

	write(t, root, "_last_checkpoint", `{"version":4,"size":9,"parts":2}`)
	assert.Len(t, latest(t, root).Checkpoint.Files, 2)

	for _, stale := range []string{`{"version":9,"size":1}`, `{"version":`, `[]`, ``} {
		write(t, root, "_last_checkpoint", stale)
		got := latest(t, root)
		sameState(t, want, got)
		assert.EqualValues(t, 4, got.Checkpoint.Version, "_last_checkpoint %q", stale)
	}
}

// A newer checkpoint than _last_checkpoint names wins: the hint is
// rewritten after the checkpoint, so it may lag.
func TestNewestCheckpointBeatsStaleHint(t *testing.T) {
	root := copyLog(t, "basic")
	writeClassic(t, root, at(t, root, 2))
	writeClassic(t, root, at(t, root, 4))
	write(t, root, "_last_checkpoint", `{"version":2,"size":5}`)
	assert.EqualValues(t, 4, latest(t, root).Checkpoint.Version)
	// Time travel never uses a checkpoint newer than the version asked for.
	assert.EqualValues(t, 2, at(t, root, 3).Checkpoint.Version)
}

// A checkpoint listed but gone when read (cleanup racing the reader) is
// skipped for an older one.
func TestVanishedCheckpointFallsBack(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	writeClassic(t, root, at(t, root, 1))
	l := open(root)
	l.Lister = phantom{LocalLister{}, FileInfo{Name: pad20(4) + ".checkpoint.parquet"}}
	got, err := l.Latest(context.Background())
	require.NoError(t, err)
	sameState(t, want, got)
	assert.EqualValues(t, 1, got.Checkpoint.Version)
}

// phantom lists files that are not there.
type phantom struct {
	Lister
	extra FileInfo
}

func (p phantom) List(ctx context.Context, dir string) ([]FileInfo, error) {
	fs, err := p.Lister.List(ctx, dir)
	return append(fs, p.extra), err
}
