package sharing

import (
	"time"

	"github.com/apache/iceberg-go/table"
)

// A Delta table version is an Iceberg snapshot of the main branch: its
// sequence number (format v2+), or for v1 tables its 1-based position in
// the main branch's lineage. Both are stable and grow with every commit;
// version 0 is the table before its first snapshot (no files). Sequence
// numbers may skip values (commits to other branches take some): a
// version in such a gap reads as the latest snapshot before it.
type version struct {
	V    int64
	Snap *table.Snapshot
}

// history is the main branch's lineage, oldest first.
type history []version

func lineage(meta table.Metadata) history {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	anc := table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID)
	out := make(history, len(anc))
	for i := range anc {
		snap := anc[len(anc)-1-i]
		v := snap.SequenceNumber
		if meta.Version() < 2 {
			v = int64(i + 1)
		}
		out[i] = version{V: v, Snap: &snap}
	}
	return out
}

// latest is the current version (0 before the first snapshot).
func (h history) latest() version {
	if len(h) == 0 {
		return version{}
	}
	return h[len(h)-1]
}

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
	out, found := version{}, false
	for _, x := range h {
		if x.Snap.TimestampMs > ms {
			break
		}
		out, found = x, true
	}
	if !found {
		return version{}, badParam("timestamp %s is before the table's first version", t.UTC().Format(time.RFC3339))
	}
	return out, nil
}

// since is the earliest version committed at or after t.
func (h history) since(t time.Time) (version, *Error) {
	ms := t.UnixMilli()
	for _, x := range h {
		if x.Snap.TimestampMs >= ms {
			return x, nil
		}
	}
	return version{}, badParam("timestamp %s is after the table's latest version %d", t.UTC().Format(time.RFC3339), h.latest().V)
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
