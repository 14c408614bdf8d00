package deltalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cpUUID = "80a083e8-7026-4e79-81be-64bd76c43a11"

// v2Parts splits a state into a V2 checkpoint's non-file actions (headed
// by checkpointMetadata) and its file actions.
func v2Parts(s *Snapshot) (head, files []Action) {
	head = []Action{{CheckpointMetadata: &CheckpointMetadata{Version: s.Version, Tags: map[string]string{}}}}
	for _, a := range stateActions(s) {
		if a.Add != nil || a.Remove != nil {
			files = append(files, a)
		} else {
			head = append(head, a)
		}
	}
	return head, files
}

// A UUID-named JSON V2 checkpoint whose file actions are in two sidecars
// ("V2 Spec", "Sidecar Files").
func TestV2JSONCheckpointWithSidecars(t *testing.T) {
	root := copyLog(t, "basic")
	want := latest(t, root)
	head, files := v2Parts(at(t, root, 4))
	writeParquet(t, root, "_sidecars/a.parquet", checkpointSchema(false), files[:2])
	writeParquet(t, root, "_sidecars/b.parquet", checkpointSchema(false), files[2:])
	head = append(head, Action{Sidecar: &Sidecar{Path: "a.parquet", SizeInBytes: 1}},
		Action{Sidecar: &Sidecar{Path: "file://" + root + "/_delta_log/_sidecars/b.parquet", SizeInBytes: 1}})
	write(t, root, pad20(4)+".checkpoint."+cpUUID+".json", jsonLines(t, head))
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json")

	got := latest(t, root)
	sameState(t, want, got)
	assert.Equal(t, "v2", got.Checkpoint.Kind)

	// A sidecar gone: the checkpoint is unusable and nothing older reaches.
	rm(t, root, "_sidecars/b.parquet")
	_, err := open(root).Latest(context.Background())
	assert.ErrorIs(t, err, ErrNotFound)
}

// A classic-named checkpoint may follow the V2 spec: checkpointMetadata
// and the file actions inline, in parquet.
func TestV2ClassicParquetCheckpoint(t *testing.T) {
	root := copyLog(t, "dv")
	want := latest(t, root)
	head, files := v2Parts(at(t, root, 1))
	writeParquet(t, root, pad20(1)+".checkpoint.parquet", checkpointSchema(true), append(head, files...))
	rm(t, root, "00000000000000000000.json")
	got := latest(t, root)
	sameState(t, want, got)
	assert.Equal(t, "classic", got.Checkpoint.Kind)
}

// A UUID-named parquet V2 checkpoint with a sidecar.
func TestV2ParquetCheckpointWithSidecar(t *testing.T) {
	root := copyLog(t, "dv")
	want := latest(t, root)
	head, files := v2Parts(at(t, root, 2))
	writeParquet(t, root, "_sidecars/"+cpUUID+".parquet", checkpointSchema(false), files)
	head = append(head, Action{Sidecar: &Sidecar{Path: cpUUID + ".parquet", SizeInBytes: 1}})
	writeParquet(t, root, pad20(2)+".checkpoint."+cpUUID+".parquet", checkpointSchema(true), head)
	rm(t, root, "00000000000000000000.json", "00000000000000000001.json")
	got := latest(t, root)
	sameState(t, want, got)
	assert.Equal(t, "v2", got.Checkpoint.Kind)
}

func TestBadV2Checkpoints(t *testing.T) {
	base := copyLog(t, "basic")
	s2 := at(t, base, 2)
	head, files := v2Parts(s2)
	noMeta := append([]Action{}, head[1:]...)
	wrongVersion := append([]Action{{CheckpointMetadata: &CheckpointMetadata{Version: 9}}}, head[1:]...)
	cases := map[string][]Action{
		"no checkpointMetadata":  append(noMeta, files...),
		"two checkpointMetadata": append(append([]Action{head[0]}, head...), files...),
		"wrong version":          append(wrongVersion, files...),
		"sidecar outside":        append(head, Action{Sidecar: &Sidecar{Path: "../x.parquet"}}),
		"sidecar elsewhere":      append(head, Action{Sidecar: &Sidecar{Path: "s3://other/_delta_log/_sidecars/x.parquet"}}),
		"commitInfo only":        {{CommitInfo: &CommitInfo{}}},
	}
	for name, actions := range cases {
		t.Run(name, func(t *testing.T) {
			root := copyLog(t, "basic")
			write(t, root, pad20(2)+".checkpoint."+cpUUID+".json", jsonLines(t, actions))
			rm(t, root, "00000000000000000000.json")
			_, err := open(root).At(context.Background(), 2)
			require.ErrorIs(t, err, ErrMalformed)
			assert.Contains(t, err.Error(), "_delta_log/")
		})
	}
}
