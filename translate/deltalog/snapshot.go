package deltalog

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// Log is a Delta table's log: the table's location, the IO that reads its
// files and the Lister that lists _delta_log. Location is as IO takes it
// (s3://bucket/table, file:///tmp/t, /tmp/t). A Log holds no state between
// calls: each Latest or At lists and reads the log afresh, and calls may run
// concurrently.
type Log struct {
	Location string
	IO       iceio.IO
	// Lister lists _delta_log; nil takes IOLister when IO can list
	// (iceberg-go's LocalFS and blob IOs can).
	Lister Lister
	Limits Limits
}

// New is the Log at location, read through fsys.
func New(location string, fsys iceio.IO) *Log {
	return &Log{Location: strings.TrimSuffix(location, "/"), IO: fsys}
}

// Snapshot is the table's state at Version ("Delta Table Specification":
// protocol, metadata, files, tombstones, transactions), computed by
// "Action Reconciliation".
type Snapshot struct {
	Version int64
	// Timestamp is Version's commit timestamp in milliseconds since the
	// epoch: its inCommitTimestamp when In-Commit Timestamps are on for it,
	// else its commit file's modification time ("In-Commit Timestamps").
	Timestamp         int64
	InCommitTimestamp bool
	Protocol          Protocol
	Metadata          Metadata
	// Files are the active add files, removes applied, sorted by Location.
	// Deletion vectors are reported on them, not applied.
	Files []AddFile
	// Tombstones are the removes still held (never expired here: expiry
	// depends on the reader's clock and retention, which is VACUUM's
	// business).
	Tombstones []RemoveFile
	Txns       map[string]Txn
	Domains    map[string]DomainMetadata
	// Checkpoint is the checkpoint the snapshot started from; nil when it
	// was replayed from version 0.
	Checkpoint *CheckpointRef
	// Commits are the commits replayed after the checkpoint (or from 0),
	// oldest first, with their timestamps.
	Commits []Commit
}

// CheckpointRef names the checkpoint a snapshot was read from.
type CheckpointRef struct {
	Version int64
	Kind    string   // "classic", "multi-part" or "v2" (UUID-named)
	Files   []string // under the table location, e.g. "_delta_log/…parquet"
}

// Commit is one replayed commit.
type Commit struct {
	Version           int64
	Timestamp         int64 // ms since the epoch, as Snapshot.Timestamp
	InCommitTimestamp bool
	Operation         string // commitInfo.operation, when written
}

// Latest is the snapshot at the newest version in the log.
func (l *Log) Latest(ctx context.Context) (*Snapshot, error) {
	return l.snapshot(ctx, -1)
}

// LatestVersion is the newest version in the log, from one listing of
// _delta_log and no file read: the cheap question "has the table moved
// since version v?" before the price of a snapshot is paid.
func (l *Log) LatestVersion(ctx context.Context) (int64, error) {
	ls, err := l.list(ctx, l.Limits.withDefaults())
	if err != nil {
		return 0, err
	}
	return l.target(ls, -1)
}

// At is the snapshot at version (time travel by version).
func (l *Log) At(ctx context.Context, version int64) (*Snapshot, error) {
	if version < 0 {
		return nil, errorf(ErrNotFound, "", 0, "version %d: versions start at 0", version)
	}
	return l.snapshot(ctx, version)
}

func (l *Log) snapshot(ctx context.Context, want int64) (*Snapshot, error) {
	lim := l.Limits.withDefaults()
	ls, err := l.list(ctx, lim)
	if err != nil {
		return nil, err
	}
	target, err := l.target(ls, want)
	if err != nil {
		return nil, err
	}
	var last error
	for _, cp := range ls.candidates(target, l.readLastCheckpoint(ctx)) {
		snap, err := l.build(ctx, lim, ls, target, &cp)
		var u unusable
		if errors.As(err, &u) {
			last = u.err // a part or sidecar vanished: try an older one
			continue
		}
		return snap, err
	}
	if ls.firstContiguous(target) == 0 {
		return l.build(ctx, lim, ls, target, nil)
	}
	if last != nil {
		return nil, errorf(ErrNotFound, "_delta_log", 0, "version %d cannot be reconstructed: its checkpoints are incomplete (%v)", target, last)
	}
	return nil, errorf(ErrNotFound, "_delta_log", 0, "version %d cannot be reconstructed: no checkpoint at or before it is followed by all the commits up to it", target)
}

// target is the version to read: want, or the latest when want is -1.
func (l *Log) target(ls listing, want int64) (int64, error) {
	if ls.latest < 0 {
		return 0, errorf(ErrNotFound, "_delta_log", 0, "no Delta commit or checkpoint at %s", l.Location)
	}
	if want > ls.latest {
		return 0, errorf(ErrNotFound, "_delta_log", 0, "version %d does not exist; the latest is %d", want, ls.latest)
	}
	if want < 0 {
		return ls.latest, nil
	}
	return want, nil
}

// list lists and sorts out _delta_log.
func (l *Log) list(ctx context.Context, lim Limits) (listing, error) {
	lister := l.Lister
	if lister == nil {
		var err error
		if lister, err = listerFor(l.IO, lim.MaxLogFiles); err != nil {
			return listing{}, err
		}
	}
	files, err := lister.List(ctx, join(l.Location, "_delta_log"))
	switch {
	case errors.Is(err, errTooMany) || len(files) > lim.MaxLogFiles:
		return listing{}, errorf(ErrLimit, "_delta_log", 0, "more than %d files", lim.MaxLogFiles)
	case errors.Is(err, fs.ErrNotExist):
		return listing{}, errorf(ErrNotFound, "_delta_log", 0, "no Delta log at %s", l.Location)
	case err != nil:
		return listing{}, err
	}
	return newListing(files), nil
}

// unusable is a checkpoint that cannot be read because a file it needs is
// gone; the snapshot falls back to an older checkpoint.
type unusable struct{ err error }

func (u unusable) Error() string { return u.err.Error() }

// readSmall reads a whole file of at most max bytes.
func (l *Log) readSmall(name string, max int64) ([]byte, error) {
	f, err := l.IO.Open(join(l.Location, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(ErrNotFound, name, 0, "listed but gone: %v", err)
		}
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > max {
		return nil, errorf(ErrLimit, name, 0, "over the limit of %d bytes", max)
	}
	return raw, nil
}
