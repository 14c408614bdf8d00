package sharing

import (
	"time"

	"github.com/apache/iceberg-go/table"
)

// A Delta table version is an Iceberg snapshot of the main branch: its
// sequence number (format v2+), or for v1 tables its 1-based position in
// the main branch's lineage. Both are stable and grow with every commit.
// Version 0 is the table as created, before its first snapshot (no files);
// it exists from creation, with the table's creation time (the oldest
// metadata-log entry, or the metadata's own time when there is none).
// Sequence numbers may skip values (commits to other branches take some):
// a version in such a gap reads as the latest snapshot before it.
type version struct {
	V    int64
	Snap *table.Snapshot // nil for version 0
	Ts   int64           // commit time, ms
}

// history is version 0, then the main branch's lineage, oldest first.
type history []version

func lineage(meta table.Metadata) history {
	out := history{{V: 0, Ts: created(meta)}}
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return out
	}
	anc := table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID)
	for i := range anc {
		snap := anc[len(anc)-1-i]
		v := snap.SequenceNumber
		if meta.Version() < 2 {
			v = int64(i + 1)
		}
		out = append(out, version{V: v, Snap: &snap, Ts: snap.TimestampMs})
	}
	if out[1].Ts < out[0].Ts {
		out[0].Ts = out[1].Ts // a truncated metadata log: creation was no later
	}
	return out
}

// created is when the table was created, as far as its metadata tells.
func created(meta table.Metadata) int64 {
	ts := meta.LastUpdatedMillis()
	for e := range meta.PreviousFiles() {
		ts = min(ts, e.TimestampMs)
	}
	return ts
}

// latest is the current version.
func (h history) latest() version { return h[len(h)-1] }

// at is the table as of version v: the latest snapshot at or before it.
func (h history) at(v int64) (version, *Error) {
	if v > h.latest().V {
		return version{}, badParam("version %d does not exist: the latest version is %d", v, h.latest().V)
	}
	out := version{}
	for _, x := range h {
		if x.V > v {
			break
		}
		out = x
	}
	return out, nil
}

// asOf is the latest version committed at or before t.
func (h history) asOf(t time.Time) (version, *Error) {
	ms := t.UnixMilli()
	if ms < h[0].Ts {
		return version{}, badParam("timestamp %s is before the table was created (%s)",
			t.UTC().Format(time.RFC3339), time.UnixMilli(h[0].Ts).UTC().Format(time.RFC3339))
	}
	out := h[0]
	for _, x := range h {
		if x.Ts > ms {
			break
		}
		out = x
	}
	return out, nil
}

// since is the earliest version committed at or after t.
func (h history) since(t time.Time) (version, *Error) {
	ms := t.UnixMilli()
	for _, x := range h {
		if x.Ts >= ms {
			return x, nil
		}
	}
	return version{}, badParam("timestamp %s is after the table's latest version %d", t.UTC().Format(time.RFC3339), h.latest().V)
}

// notFuture refuses a timestamp after now, the same way for every
// endpoint: no version can have been committed then.
func notFuture(t, now time.Time) *Error {
	if t.After(now) {
		return badParam("timestamp %s is in the future", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// between is every version in [from, to], oldest first.
func (h history) between(from, to int64) history {
	var out history
	for _, x := range h {
		if x.V >= from && x.V <= to {
			out = append(out, x)
		}
	}
	return out
}

// rewrites reports a snapshot that removed data files and added others
// (a copy-on-write delete, update or merge, a compaction): its file-level
// changes are not its row-level ones, and lakegate cannot derive those yet.
func rewrites(s *table.Snapshot) bool {
	if s == nil || s.Summary == nil {
		return false
	}
	deleted, added := summaryInt(s.Summary.Properties, "deleted-data-files"), summaryInt(s.Summary.Properties, "added-data-files")
	return deleted != nil && *deleted > 0 && added != nil && *added > 0
}

// changeFeedServable reports whether every version's changes are exactly
// its files' (appends and whole-file deletes only): only then does the
// table declare a change data feed.
func changeFeedServable(h history) bool {
	for _, x := range h {
		if rewrites(x.Snap) {
			return false
		}
	}
	return true
}
