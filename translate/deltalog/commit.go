package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
)

// CDCFile is a commit's cdc action ("Add CDC File"): a change data file a
// writer with the change data feed on wrote for that version.
type CDCFile struct {
	Path            string             `json:"path"`
	Location        string             `json:"-"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	DataChange      bool               `json:"dataChange"`
}

// CommitFiles are the file actions of one commit, as change readers take
// them ("Change Data Files"): its adds and removes, and its cdc files,
// which stand for the version's changes when present. Locations are
// resolved as a snapshot's are.
type CommitFiles struct {
	Version int64
	// Metadata is the commit's metaData action (a schema or property
	// change), nil when it has none.
	Metadata *Metadata
	Adds     []AddFile
	Removes  []RemoveFile
	CDC      []CDCFile
}

// Commit reads the file actions of version v's commit file. Snapshots
// replay commits; change readers need one commit's own actions, which a
// snapshot has folded away. A version whose commit file is gone (cleaned
// up after a checkpoint) is ErrNotFound.
func (l *Log) Commit(ctx context.Context, v int64) (*CommitFiles, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, errorf(ErrNotFound, "", 0, "version %d: versions start at 0", v)
	}
	lim := l.Limits.withDefaults()
	name := "_delta_log/" + commitFileName(v)
	raw, err := l.readSmall(name, lim.MaxCommitBytes)
	if err != nil {
		return nil, err // a file gone after a checkpoint is ErrNotFound
	}
	out := &CommitFiles{Version: v}
	err = eachJSONAction(name, raw, lim, func(line int, a *Action) error {
		var rerr error
		switch {
		case a.Add != nil:
			a.Add.Location, rerr = ResolvePath(l.Location, a.Add.Path)
			out.Adds = append(out.Adds, *a.Add)
		case a.Remove != nil:
			a.Remove.Location, rerr = ResolvePath(l.Location, a.Remove.Path)
			out.Removes = append(out.Removes, *a.Remove)
		case a.MetaData != nil:
			out.Metadata = a.MetaData
		}
		if rerr != nil {
			return errorf(ErrMalformed, name, line, "%s", rerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// cdc is no action a snapshot needs, so eachJSONAction skips it: its
	// lines are read here on their own.
	if out.CDC, err = l.cdcFiles(name, raw); err != nil {
		return nil, err
	}
	return out, nil
}

// cdcFiles reads the cdc actions of a commit file eachJSONAction has
// already checked line by line (UTF-8, sizes, one action per line).
func (l *Log) cdcFiles(name string, raw []byte) ([]CDCFile, error) {
	var out []CDCFile
	for n := 1; len(raw) > 0; n++ {
		var line []byte
		line, raw = cutLine(raw)
		line = bytes.TrimSpace(line)
		if !bytes.Contains(line, []byte(`"cdc"`)) {
			continue
		}
		var a struct {
			CDC *CDCFile `json:"cdc"`
		}
		if err := json.Unmarshal(line, &a); err != nil || a.CDC == nil {
			continue // a "cdc" inside another action's strings
		}
		loc, err := ResolvePath(l.Location, a.CDC.Path)
		if err != nil {
			return nil, errorf(ErrMalformed, name, n, "%s", err)
		}
		a.CDC.Location = loc
		out = append(out, *a.CDC)
	}
	return out, nil
}

// History is the latest snapshot and every version of the log a reader
// may still ask for, oldest first, each with its commit time: the
// commits listed without a gap up to the latest. Versions the snapshot
// replayed carry its times (In-Commit Timestamps honoured); older ones
// the commit file's modification time, or its inCommitTimestamp when the
// table has In-Commit Timestamps on. A latest version known only from its
// checkpoint (its commit file cleaned up) is the snapshot's own time.
func (l *Log) History(ctx context.Context) (*Snapshot, []Commit, error) {
	snap, err := l.Latest(ctx)
	if err != nil {
		return nil, nil, err
	}
	lim := l.Limits.withDefaults()
	ls, err := l.list(ctx, lim)
	if err != nil {
		return nil, nil, err
	}
	replayed := make(map[int64]Commit, len(snap.Commits))
	for _, c := range snap.Commits {
		replayed[c.Version] = c
	}
	ict := snap.Metadata.Configuration["delta.enableInCommitTimestamps"] == "true"
	var out []Commit
	for v := ls.firstContiguous(snap.Version); v <= snap.Version; v++ {
		c, ok := replayed[v]
		switch {
		case ok:
		case v == snap.Version:
			c = Commit{Version: v, Timestamp: snap.Timestamp, InCommitTimestamp: snap.InCommitTimestamp}
		default:
			if c, err = l.listedCommit(ls.commits[v], lim, ict); err != nil {
				return nil, nil, err
			}
		}
		out = append(out, c)
	}
	if len(out) == 0 || out[len(out)-1].Version != snap.Version {
		out = append(out, Commit{Version: snap.Version, Timestamp: snap.Timestamp, InCommitTimestamp: snap.InCommitTimestamp})
	}
	// Times never go back, as readers assume when they search by time
	// ("Commit Provenance Information" allows clock skew between writers).
	for i := 1; i < len(out); i++ {
		out[i].Timestamp = max(out[i].Timestamp, out[i-1].Timestamp)
	}
	return snap, out, nil
}

// listedCommit times a commit older than the latest snapshot's replay:
// its file's modification time, or its inCommitTimestamp (read only when
// the table has In-Commit Timestamps on).
func (l *Log) listedCommit(lf logFile, lim Limits, ict bool) (Commit, error) {
	c := Commit{Version: lf.version, Timestamp: lf.ModTime.UnixMilli()}
	if !ict {
		return c, nil
	}
	_, ci, err := l.readCommit("_delta_log/"+lf.Name, lim)
	if err != nil {
		return Commit{}, err
	}
	if ci != nil && ci.InCommitTimestamp != nil {
		c.Timestamp, c.InCommitTimestamp = *ci.InCommitTimestamp, true
	}
	if ci != nil {
		c.Operation = ci.Operation
	}
	return c, nil
}
