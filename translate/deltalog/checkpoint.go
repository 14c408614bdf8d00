package deltalog

import (
	"context"
	"strings"
)

func (cp *checkpoint) ref() *CheckpointRef {
	r := &CheckpointRef{Version: cp.version, Kind: map[fileKind]string{kindClassic: "classic", kindMultiPart: "multi-part", kindUUID: "v2"}[cp.kind]}
	for _, f := range cp.files {
		r.Files = append(r.Files, "_delta_log/"+f.Name)
	}
	return r
}

// cpReader gathers what a checkpoint says besides file actions: V2
// checkpoints' checkpointMetadata and sidecars, and counts of the actions
// a checkpoint must hold exactly once.
type cpReader struct {
	s                  *state
	meta, proto        int
	checkpointMetadata []CheckpointMetadata
	sidecars           []Sidecar
}

// take applies one checkpoint row. A checkpoint holds protocol, metaData,
// add, remove, txn and domainMetadata actions, plus checkpointMetadata and
// sidecar in V2 spec ("Checkpoints" under "Additional Requirements for
// Writers"); commitInfo and cdc are never in one and are skipped.
func (r *cpReader) take(file string, row int, a *Action) error {
	switch {
	case a.CheckpointMetadata != nil:
		r.checkpointMetadata = append(r.checkpointMetadata, *a.CheckpointMetadata)
		return nil
	case a.Sidecar != nil:
		r.sidecars = append(r.sidecars, *a.Sidecar)
		return nil
	case a.CommitInfo != nil:
		return nil
	case a.MetaData != nil:
		r.meta++
	case a.Protocol != nil:
		r.proto++
	}
	return r.s.apply(a, file, row)
}

// readCheckpoint loads cp into s.
func (l *Log) readCheckpoint(ctx context.Context, s *state, cp *checkpoint) error {
	r := &cpReader{s: s}
	for _, f := range cp.files {
		name := "_delta_log/" + f.Name
		var err error
		if strings.HasSuffix(f.Name, ".json") {
			err = l.readJSONCheckpoint(name, s.lim, r.take)
		} else {
			err = l.readParquet(ctx, name, s.lim, r.take)
		}
		if err != nil {
			return err
		}
	}
	if err := r.checkV2(cp); err != nil {
		return err
	}
	for _, sc := range r.sidecars {
		if err := l.readSidecar(ctx, s, sc); err != nil {
			return err
		}
	}
	if r.meta != 1 || r.proto != 1 {
		return errorf(ErrMalformed, cp.ref().Files[0], 0, "a checkpoint holds exactly one metaData and one protocol; this one has %d and %d", r.meta, r.proto)
	}
	return nil
}

// readJSONCheckpoint reads a JSON UUID-named checkpoint, which may hold
// every file action, so it is capped as a checkpoint, not as a commit.
func (l *Log) readJSONCheckpoint(name string, lim Limits, fn func(string, int, *Action) error) error {
	raw, err := l.readSmall(name, lim.MaxCheckpointBytes)
	if err != nil {
		return asUnusable(err)
	}
	lim.MaxCommitBytes = lim.MaxCheckpointBytes
	return eachJSONAction(name, raw, lim, func(line int, a *Action) error { return fn(name, line, a) })
}

// checkV2 holds a checkpoint to "V2 Spec": a UUID-named one has exactly
// one checkpointMetadata, of its own version; a classic one has one or
// none (V1); a multi-part one none ("Allowed combinations"). Sidecars only
// come with checkpointMetadata.
func (r *cpReader) checkV2(cp *checkpoint) error {
	file := cp.ref().Files[0]
	n := len(r.checkpointMetadata)
	switch {
	case cp.kind == kindUUID && n != 1:
		return errorf(ErrMalformed, file, 0, "a UUID-named checkpoint holds exactly one checkpointMetadata; this one has %d", n)
	case cp.kind == kindMultiPart && n != 0:
		return errorf(ErrMalformed, file, 0, "a multi-part checkpoint is V1 and holds no checkpointMetadata")
	case n > 1:
		return errorf(ErrMalformed, file, 0, "%d checkpointMetadata actions; a V2 checkpoint holds one", n)
	case n == 1 && r.checkpointMetadata[0].Version != cp.version:
		return errorf(ErrMalformed, file, 0, "checkpointMetadata says version %d in the checkpoint of version %d", r.checkpointMetadata[0].Version, cp.version)
	case n == 0 && len(r.sidecars) > 0:
		return errorf(ErrMalformed, file, 0, "sidecar actions in a checkpoint without checkpointMetadata (V1 spec)")
	}
	return nil
}

// readSidecar reads one sidecar's file actions ("Sidecar Files": "can have
// only add file and remove file entries").
func (l *Log) readSidecar(ctx context.Context, s *state, sc Sidecar) error {
	name, err := l.sidecarName(sc.Path)
	if err != nil {
		return err
	}
	return l.readParquet(ctx, name, s.lim, func(file string, row int, a *Action) error {
		if a.Add == nil && a.Remove == nil {
			return errorf(ErrMalformed, file, row, "a sidecar holds only add and remove actions")
		}
		return s.apply(a, file, row)
	})
}

// sidecarName is a sidecar's file under the table location. Its path is
// "URI-encoded ... Because sidecar files must always reside in the table's
// own _delta_log/_sidecars directory, implementations are encouraged to
// store only the file's name" ("Sidecar File Information"); a full URI is
// taken only when it points into that directory.
func (l *Log) sidecarName(p string) (string, error) {
	dir := join(l.Location, "_delta_log", "_sidecars")
	loc, err := ResolvePath(dir, p)
	if err != nil {
		return "", errorf(ErrMalformed, "_delta_log/_sidecars", 0, "sidecar %s", err)
	}
	base, ok := strings.CutPrefix(loc, dir+"/")
	if !ok || base == "" || strings.Contains(base, "/") {
		return "", errorf(ErrMalformed, "_delta_log/_sidecars", 0, "sidecar %q is not a file in the table's _delta_log/_sidecars", p)
	}
	return "_delta_log/_sidecars/" + base, nil
}
