package deltalog

import (
	"context"
	"strconv"
)

// build replays from cp (nil: from version 0) up to target.
func (l *Log) build(ctx context.Context, lim Limits, ls listing, target int64, cp *checkpoint) (*Snapshot, error) {
	s := newState(l.Location, lim)
	snap := &Snapshot{Version: target}
	start := int64(0)
	if cp != nil {
		if err := l.readCheckpoint(ctx, s, cp); err != nil {
			return nil, err
		}
		snap.Checkpoint = cp.ref()
		start = cp.version + 1
	}
	for v := start; v <= target; v++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := l.replayCommit(s, lim, ls.commits[v])
		if err != nil {
			return nil, err
		}
		snap.Commits = append(snap.Commits, c)
	}
	if err := checkReadable(s); err != nil {
		return nil, err
	}
	if err := l.stamp(snap, s, lim, ls, cp); err != nil {
		return nil, err
	}
	snap.Protocol, snap.Metadata = *s.protocol, *s.metadata
	snap.Files, snap.Tombstones = s.files(), s.tombstones()
	snap.Txns, snap.Domains = s.clone()
	return snap, nil
}

// replayCommit applies one commit file and times it.
func (l *Log) replayCommit(s *state, lim Limits, lf logFile) (Commit, error) {
	name := "_delta_log/" + lf.Name
	actions, ci, err := l.readCommit(name, lim)
	if err != nil {
		return Commit{}, err
	}
	if err := s.applyCommit(name, actions); err != nil {
		return Commit{}, err
	}
	c := Commit{Version: lf.version}
	if ci != nil {
		c.Operation = ci.Operation
	}
	c.Timestamp, c.InCommitTimestamp, err = commitTime(s, lf, ci)
	return c, err
}

// readCommit reads a commit file's actions, its commitInfo apart.
func (l *Log) readCommit(name string, lim Limits) ([]lineAction, *CommitInfo, error) {
	raw, err := l.readSmall(name, lim.MaxCommitBytes)
	if err != nil {
		return nil, nil, err
	}
	var out []lineAction
	var ci *CommitInfo
	err = eachJSONAction(name, raw, lim, func(line int, a *Action) error {
		switch {
		case a.Sidecar != nil || a.CheckpointMetadata != nil:
			return errorf(ErrMalformed, name, line, "a V2 checkpoint action in a commit file")
		case a.CommitInfo != nil:
			if ci == nil {
				ci = a.CommitInfo
			}
		default:
			out = append(out, lineAction{line, a})
		}
		return nil
	})
	return out, ci, err
}

// commitTime is a commit's timestamp per "Recommendations for Readers of
// Tables with In-Commit Timestamps": inCommitTimestamp for versions at or
// after delta.inCommitTimestampEnablementVersion while the feature is on
// (writer feature inCommitTimestamp and delta.enableInCommitTimestamps,
// "In-Commit Timestamps" Enablement), the file's modification time before.
// s is the state after the commit.
func commitTime(s *state, lf logFile, ci *CommitInfo) (int64, bool, error) {
	if !ictEnabled(s, lf.version) {
		return lf.ModTime.UnixMilli(), false, nil
	}
	if ci == nil || ci.InCommitTimestamp == nil {
		return 0, false, errorf(ErrMalformed, "_delta_log/"+lf.Name, 0,
			"In-Commit Timestamps are enabled but the commit has no commitInfo.inCommitTimestamp")
	}
	return *ci.InCommitTimestamp, true, nil
}

func ictEnabled(s *state, v int64) bool {
	if s.protocol == nil || s.metadata == nil || !s.protocol.HasWriterFeature("inCommitTimestamp") {
		return false
	}
	cfg := s.metadata.Configuration
	if cfg["delta.enableInCommitTimestamps"] != "true" {
		return false
	}
	if ev, ok := cfg["delta.inCommitTimestampEnablementVersion"]; ok {
		n, err := strconv.ParseInt(ev, 10, 64)
		return err == nil && v >= n
	}
	return true
}

// stamp sets the snapshot's timestamp: its last replayed commit's, or,
// when the snapshot is the checkpoint's own version, that version's
// commit file's. Checkpoints keep no commitInfo, so the commit file is
// read for it ("Action Reconciliation"; "Metadata Cleanup" keeps that file
// for this reason). If cleanup removed it anyway, the checkpoint file's
// modification time stands in, unless In-Commit Timestamps are on: then
// the time is unknowable and that is an error.
func (l *Log) stamp(snap *Snapshot, s *state, lim Limits, ls listing, cp *checkpoint) error {
	if n := len(snap.Commits); n > 0 {
		last := snap.Commits[n-1]
		snap.Timestamp, snap.InCommitTimestamp = last.Timestamp, last.InCommitTimestamp
		return nil
	}
	lf, ok := ls.commits[cp.version]
	if !ok {
		if ictEnabled(s, cp.version) {
			return errorf(ErrMalformed, "_delta_log/"+commitFileName(cp.version), 0,
				"missing: it holds the In-Commit Timestamp of checkpoint version %d", cp.version)
		}
		snap.Timestamp = cp.files[0].ModTime.UnixMilli()
		return nil
	}
	_, ci, err := l.readCommit("_delta_log/"+lf.Name, lim)
	if err != nil {
		return err
	}
	snap.Timestamp, snap.InCommitTimestamp, err = commitTime(s, lf, ci)
	return err
}

// checkReadable refuses what this reader cannot interpret: a snapshot
// needs one protocol and one metaData ("Action Reconciliation"), and a
// reader version above 3 may change the log itself ("Protocol Evolution":
// a client on an older protocol version must throw). Reader features are
// reported, not refused: none of the known ones changes log replay except
// v2Checkpoint, which is read. Note catalogManaged: the catalog may hold
// ratified commits not yet published to _delta_log, so the snapshot may
// be behind the catalog's version; the caller asks the catalog.
func checkReadable(s *state) error {
	switch {
	case s.protocol == nil:
		return errorf(ErrMalformed, "_delta_log", 0, "no protocol action up to this version")
	case s.metadata == nil:
		return errorf(ErrMalformed, "_delta_log", 0, "no metaData action up to this version")
	case s.protocol.MinReaderVersion > 3:
		return errorf(ErrUnsupported, "_delta_log", 0, "reader version %d: this reader knows versions 1 to 3", s.protocol.MinReaderVersion)
	}
	return nil
}
