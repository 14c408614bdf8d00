package sharing

import (
	"context"
	"path"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"
	lru "github.com/hashicorp/golang-lru/v2"
)

// A Delta table version is one of the table's Iceberg metadata files:
// every commit writes one, whether it adds a snapshot or only changes the
// schema or properties, so every change is a version. Catalogs number the
// files from 0 at creation (NNNNN-<uuid>.metadata.json, Hadoop's
// vN.metadata.json, vN-<uuid>.metadata.json), and version N is the file
// numbered N; a version in a
// gap of the numbering (a register with overwrite may jump) reads as the
// latest file before it. A version's time is the file's metadata-log
// timestamp. A catalog whose file names carry no number gets versions by
// position in the metadata log, which shift once the log is trimmed.
// Versions older than the oldest file the metadata log keeps
// (write.metadata.previous-versions-max) can no longer be read.
type version struct {
	V   int64
	Loc string // the metadata file
	Ts  int64  // commit time, ms
	// Meta is the table as of this version and Snap its current snapshot
	// (nil before the first): filled by resolve.
	Meta table.Metadata
	Snap *table.Snapshot
}

// history is every version the metadata log keeps, oldest first, then the
// current one (resolved).
type history []version

func lineage(meta table.Metadata, loc string) history {
	var h history
	for e := range meta.PreviousFiles() {
		h = append(h, version{Loc: e.MetadataFile, Ts: e.TimestampMs})
	}
	h = append(h, version{Loc: loc, Ts: meta.LastUpdatedMillis(), Meta: meta, Snap: meta.CurrentSnapshot()})
	h.number()
	return h
}

// number gives each entry its version: the file's number, kept strictly
// increasing (a file numbered lower than its predecessor follows it), or
// every entry's position when some file is not numbered. Times never go
// back either.
func (h history) number() {
	for i := range h {
		n, ok := fileNumber(h[i].Loc)
		if !ok {
			for j := range h {
				h[j].V = int64(j)
			}
			break
		}
		h[i].V = n
	}
	for i := 1; i < len(h); i++ {
		h[i].V = max(h[i].V, h[i-1].V+1)
		h[i].Ts = max(h[i].Ts, h[i-1].Ts)
	}
}

var (
	metadataFileName = regexp.MustCompile(`^(\d+)-[0-9A-Fa-f-]{36}(?:\.[a-z0-9]+)?\.metadata\.json$`)
	// Hadoop's vN.metadata.json, and vN-<uuid>.metadata.json, which some
	// catalogs write (with an empty metadata log: the file's own number is
	// then the only version there is).
	legacyMetadataFileName = regexp.MustCompile(`^v(\d+)(?:-[0-9A-Fa-f-]{36})?(?:\.gz)?\.metadata\.json$`)
)

// fileNumber is the commit number in a metadata file's name.
func fileNumber(loc string) (int64, bool) {
	name := path.Base(loc)
	m := metadataFileName.FindStringSubmatch(name)
	if m == nil {
		m = legacyMetadataFileName.FindStringSubmatch(name)
	}
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// latest is the current version.
func (h history) latest() version { return h[len(h)-1] }

// index is the position of the entry v reads: the latest at or before it.
func (h history) index(v int64) (int, error) {
	if v > h.latest().V {
		return 0, badParam("version %d does not exist: the latest version is %d", v, h.latest().V)
	}
	if v < h[0].V {
		return 0, badParam("version %d is no longer available: the table's metadata log starts at version %d", v, h[0].V)
	}
	i := 0
	for j, x := range h {
		if x.V > v {
			break
		}
		i = j
	}
	return i, nil
}

// at is the table as of version v.
func (h history) at(v int64) (version, error) {
	i, err := h.index(v)
	if err != nil {
		return version{}, err
	}
	return h[i], nil
}

// asOf is the latest version committed at or before t.
func (h history) asOf(t time.Time) (version, error) {
	ms := t.UnixMilli()
	if ms < h[0].Ts {
		when := time.UnixMilli(h[0].Ts).UTC().Format(time.RFC3339)
		if h[0].V == 0 {
			return version{}, badParam("timestamp %s is before the table was created (%s)", t.UTC().Format(time.RFC3339), when)
		}
		return version{}, badParam("timestamp %s is before version %d (%s), the oldest the table's metadata log keeps",
			t.UTC().Format(time.RFC3339), h[0].V, when)
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
func (h history) since(t time.Time) (version, error) {
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
func notFuture(t, now time.Time) error {
	if t.After(now) {
		return badParam("timestamp %s is in the future", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// defaultMaxVersions bounds how many versions one changes request reads.
const defaultMaxVersions = 1000

// metadataCacheSize is how many historical metadata files the server
// keeps parsed: they never change once written.
const metadataCacheSize = 128

type metadataCache struct {
	once  sync.Once
	cache *lru.Cache[string, table.Metadata]
}

func (c *metadataCache) get() *lru.Cache[string, table.Metadata] {
	c.once.Do(func() { c.cache, _ = lru.New[string, table.Metadata](metadataCacheSize) })
	return c.cache
}

// resolve fills in the table as of v, reading its metadata file through
// the table's (confined) file system when it is not the current one.
func (s *Server) resolve(ctx context.Context, l *loaded, v *version) error {
	if v.Meta == nil {
		key := l.target.Catalog + "\x00" + v.Loc
		m, ok := s.metadata.get().Get(key)
		if !ok {
			t, err := table.NewFromLocation(ctx, l.tbl.Identifier(), v.Loc, l.tbl.FS, nil)
			if err != nil {
				return s.storageError(err, "reading version %d of table %q (%s) failed", v.V, l.target.Table, path.Base(v.Loc))
			}
			m = t.Metadata()
			s.metadata.get().Add(key, m)
		}
		v.Meta = m
	}
	v.Snap = v.Meta.CurrentSnapshot()
	return nil
}

// resolveAll resolves h[from:to+1].
func (s *Server) resolveAll(ctx context.Context, l *loaded, h history, from, to int) error {
	for i := from; i <= to; i++ {
		if err := s.resolve(ctx, l, &h[i]); err != nil {
			return err
		}
	}
	return nil
}

// rewrites reports a snapshot that removed data files and added others
// (a copy-on-write delete, update or merge): its file-level changes are not
// its row-level ones, which cdf.go derives. A compaction changes no rows.
func rewrites(s *table.Snapshot) bool {
	if s == nil || s.Summary == nil || compaction(*s) {
		return false
	}
	deleted, added := summaryInt(s.Summary.Properties, "deleted-data-files"), summaryInt(s.Summary.Properties, "added-data-files")
	return deleted != nil && *deleted > 0 && added != nil && *added > 0
}

// changeFeedServable reports whether every snapshot of the main branch
// changes exactly its files (appends and whole-file deletes only): without
// a ChangeDir to derive rewrites in, only then does the table declare a
// change data feed.
func changeFeedServable(meta table.Metadata) bool {
	cur := meta.CurrentSnapshot()
	if cur == nil {
		return true
	}
	for _, snap := range table.AncestorsOf(cur.SnapshotID, meta.SnapshotByID) {
		if rewrites(&snap) {
			return false
		}
	}
	return true
}

// snapshotsBetween are the snapshots version v committed after its
// predecessor's snapshot, oldest first: all of v's lineage when the
// predecessor had none (known: an empty table before), v's own snapshot
// only when the predecessor is not known (the oldest version the log
// keeps). A v whose snapshot does not descend from the predecessor's
// replaced the history (a rollback or a replace) and is refused.
// Compactions (replace snapshots) change no rows and are left out, as
// Iceberg's changelog scan leaves them out.
func snapshotsBetween(prev version, known bool, v version, tbl string) ([]table.Snapshot, error) {
	if v.Snap == nil {
		return nil, nil
	}
	var snaps []table.Snapshot
	switch {
	case !known:
		snaps = []table.Snapshot{*v.Snap}
	case prev.Snap == nil:
		snaps = table.AncestorsOf(v.Snap.SnapshotID, v.Meta.SnapshotByID)
	default:
		between, found := table.AncestorsBetween(v.Snap.SnapshotID, prev.Snap.SnapshotID, v.Meta.SnapshotByID)
		if !found {
			return nil, badParam("version %d of table %q does not descend from the version before it (a rollback or "+
				"a replace of the table's history): its changes cannot be listed; ask for a range that starts after it",
				v.V, tbl)
		}
		snaps = between
	}
	slices.Reverse(snaps)
	return slices.DeleteFunc(snaps, compaction), nil
}

// compaction reports a replace snapshot: files rewritten, rows unchanged.
func compaction(s table.Snapshot) bool {
	return s.Summary != nil && s.Summary.Operation == table.OpReplace
}
