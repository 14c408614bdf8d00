package deltalog

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The same log on S3 (gofakes3 on loopback), through iceberg-go's s3 IO as
// lakegate opens table files (io.LoadFS with the table's properties):
// IOLister lists _delta_log with the blob IO's WalkDir, skipping
// _sidecars, and the snapshot equals the local one. Object times stand in
// for file times, so only the files and state are compared.
func TestS3(t *testing.T) {
	ctx := context.Background()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("lake"))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	fsys, err := iceio.LoadFS(ctx, map[string]string{
		"s3.endpoint": srv.URL, "s3.region": "eu-west-1", "s3.path-style-access": "true",
		"s3.access-key-id": "k", "s3.secret-access-key": "s",
	}, "s3://lake/t")
	require.NoError(t, err)
	_, listable := fsys.(iceio.ListableIO)
	require.True(t, listable, "iceberg-go's s3 IO lists")

	root := copyLog(t, "basic")
	writeClassic(t, root, at(t, root, 3))
	head, files := v2Parts(at(t, root, 4))
	writeParquet(t, root, "_sidecars/a.parquet", checkpointSchema(false), files)
	write(t, root, pad20(4)+".checkpoint."+cpUUID+".json", jsonLines(t, append(head, Action{Sidecar: &Sidecar{Path: "a.parquet"}})))
	want := latest(t, root)
	upload(t, fsys.(iceio.WriteFileIO), root, "s3://lake/t")

	got, err := New("s3://lake/t/", fsys).Latest(ctx)
	require.NoError(t, err)
	assert.Equal(t, want.Version, got.Version)
	assert.Equal(t, *want.Checkpoint, *got.Checkpoint)
	assert.Equal(t, paths(want), paths(got))
	assert.Equal(t, "s3://lake/t/p=y/part-c.parquet", got.Files[2].Location)
	assert.Equal(t, want.Metadata, got.Metadata)

	old, err := New("s3://lake/t", fsys).At(ctx, 3)
	require.NoError(t, err)
	assert.EqualValues(t, 3, old.Checkpoint.Version)

	_, err = New("s3://lake/none", fsys).Latest(ctx)
	assert.ErrorIs(t, err, ErrNotFound)
}

func upload(t *testing.T, fsys iceio.WriteFileIO, root, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return fsys.WriteFile(to+"/"+filepath.ToSlash(rel), raw)
	}))
}
