package deltalog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

// Several commits with removes, re-adds, null partition values, unknown
// actions and fields, txn and domain metadata, read from JSON commits only.
func TestCommitsOnly(t *testing.T) {
	root := copyLog(t, "basic")
	s := latest(t, root)

	assert.EqualValues(t, 5, s.Version)
	assert.Nil(t, s.Checkpoint)
	assert.Equal(t, Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, s.Protocol)
	assert.Equal(t, "true", s.Metadata.Configuration["delta.enableChangeDataFeed"])
	assert.Equal(t, []string{"p"}, s.Metadata.PartitionColumns)
	cols, err := s.Metadata.Columns()
	require.NoError(t, err)
	assert.Len(t, cols.Fields, 2)

	assert.Equal(t, []string{
		"p=__HIVE_DEFAULT_PARTITION__/part-d.parquet",
		"p=__HIVE_DEFAULT_PARTITION__/part-e.parquet",
		"p=y/part-c.parquet",
		"p=y/part-f.parquet",
	}, paths(s))
	// Re-added with dataChange=false: the newest add's stats win.
	c := s.Files[2]
	assert.Equal(t, filepath.Join(root, "p=y/part-c.parquet"), c.Location)
	assert.Contains(t, c.Stats, "minValues")
	assert.False(t, c.DataChange)
	// null and "" are both a null partition value.
	assert.Nil(t, s.Files[0].PartitionValues["p"])
	assert.Contains(t, s.Files[1].PartitionValues, "p")
	assert.Nil(t, s.Files[1].PartitionValues["p"])

	assert.Equal(t, map[string]Txn{"stream-1": {AppID: "stream-1", Version: 8}}, s.Txns)
	assert.Equal(t, []string{"com.example.a"}, keys(s.Domains))
	assert.Len(t, s.Tombstones, 2)

	// Timestamps: no In-Commit Timestamps, so the files' modification times.
	assert.Equal(t, modTime(5), s.Timestamp)
	assert.False(t, s.InCommitTimestamp)
	require.Len(t, s.Commits, 6)
	for v, c := range s.Commits {
		assert.EqualValues(t, v, c.Version)
		assert.Equal(t, modTime(int64(v)), c.Timestamp)
	}
	assert.Equal(t, "DELETE", s.Commits[3].Operation)
	assert.Equal(t, "WRITE", s.Commits[1].Operation, "an odd commitInfo.timestamp does not stop the read")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// add.path is a URI: escaped characters are decoded into the location,
// while Path keeps the log's spelling ("Add File and Remove File").
// LatestVersion answers from the listing alone: the newest version, and
// not-found for a location without a log.
func TestLatestVersion(t *testing.T) {
	v, err := open(copyLog(t, "basic")).LatestVersion(context.Background())
	require.NoError(t, err)
	assert.EqualValues(t, 5, v)

	_, err = open(t.TempDir()).LatestVersion(context.Background())
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestEscapedPathsAndPartitionValues(t *testing.T) {
	root := copyLog(t, "basic")
	s := at(t, root, 0)
	require.Equal(t, []string{"p=a%20b%2Fc%3Ad/part-b.parquet", "p=x/part-a.parquet"}, paths(s))
	b := s.Files[0]
	assert.Equal(t, root+"/p=a b/c:d/part-b.parquet", b.Location)
	assert.Equal(t, map[string]*string{"p": strp("a b/c:d")}, b.PartitionValues)
	// The remove at version 3 spells the path the same way and removes it.
	assert.NotContains(t, paths(at(t, root, 3)), "p=a%20b%2Fc%3Ad/part-b.parquet")
}

// Time travel sees the protocol, metadata and files of each version.
func TestTimeTravel(t *testing.T) {
	root := copyLog(t, "basic")
	want := []struct {
		files  []string
		writer int32
		cdf    bool
	}{
		{[]string{"p=a%20b%2Fc%3Ad/part-b.parquet", "p=x/part-a.parquet"}, 2, false},
		{[]string{"p=a%20b%2Fc%3Ad/part-b.parquet", "p=y/part-c.parquet"}, 2, false},
		{[]string{"p=a%20b%2Fc%3Ad/part-b.parquet", "p=y/part-c.parquet"}, 4, true},
	}
	for v, w := range want {
		s := at(t, root, int64(v))
		assert.EqualValues(t, v, s.Version)
		assert.Equal(t, w.files, paths(s), "version %d", v)
		assert.Equal(t, w.writer, s.Protocol.MinWriterVersion, "version %d", v)
		assert.Equal(t, w.cdf, s.Metadata.Configuration["delta.enableChangeDataFeed"] == "true", "version %d", v)
		assert.Equal(t, modTime(int64(v)), s.Timestamp)
	}
	_, err := open(root).At(context.Background(), 6)
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = open(root).At(context.Background(), -1)
	assert.ErrorIs(t, err, ErrNotFound)
}

// Deletion vectors are reported, and a file's (path, DV) key decides what
// a remove removes ("Action Reconciliation"); In-Commit Timestamps give
// the commit times.
func TestDeletionVectorsAndInCommitTimestamps(t *testing.T) {
	root := copyLog(t, "dv")
	s := latest(t, root)
	require.Equal(t, []string{"f1.parquet", "f2.parquet"}, paths(s))
	dv := s.Files[0].DeletionVector
	require.NotNil(t, dv)
	assert.Equal(t, "i", dv.StorageType)
	assert.EqualValues(t, 7, dv.Cardinality)
	assert.Nil(t, s.Files[1].DeletionVector, "a remove of (f2, another DV) leaves (f2, no DV)")
	assert.True(t, s.Protocol.HasReaderFeature("deletionVectors"))

	var tomb []string
	for _, r := range s.Tombstones {
		tomb = append(tomb, r.Path+"|"+r.DeletionVector.UniqueID())
	}
	assert.Equal(t, []string{"f1.parquet|", "f1.parquet|uab^-aqEH.-t@S}K{vb[*k^@4", "f2.parquet|ps3://elsewhere/dv.bin"}, tomb)

	assert.Equal(t, int64(1710000002000), s.Timestamp)
	assert.True(t, s.InCommitTimestamp)
	assert.Equal(t, int64(1710000001000), s.Commits[1].Timestamp)

	s1 := at(t, root, 1)
	require.NotNil(t, s1.Files[0].DeletionVector)
	assert.Equal(t, "uab^-aqEH.-t@S}K{vb[*k^@4", s1.Files[0].DeletionVector.UniqueID())
}

// In-Commit Timestamps count from their enablement version on; earlier
// commits keep their modification times.
func TestInCommitTimestampEnablementVersion(t *testing.T) {
	root := copyLog(t, "basic")
	write(t, root, "00000000000000000006.json", `{"commitInfo":{"inCommitTimestamp":1900000000000}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp","appendOnly","invariants"]}}
{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"6","delta.inCommitTimestampEnablementTimestamp":"1900000000000"}}}
`)
	s := latest(t, root)
	assert.Equal(t, int64(1900000000000), s.Timestamp)
	assert.True(t, s.InCommitTimestamp)
	assert.False(t, s.Commits[5].InCommitTimestamp)
}
