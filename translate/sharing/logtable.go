package sharing

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/lakegate/lakegate/translate/deltalog"
	"github.com/lakegate/lakegate/translate/sharing/actions"
)

// A table whose truth is its Delta log (an EXTERNAL Delta table: its
// engines commit to _delta_log and never tell the catalog) is shared from
// the log, as Delta Sharing shares Delta tables: its versions are the
// log's versions with the log's commit times, its protocol and metaData
// the log's, its files the log's add actions with their partition values
// and stats (Delta writers keep partition columns out of the data files),
// and its changes each commit's own actions. Its Iceberg side, which
// lakegate keeps in step for Iceberg readers, is only where the table is
// found and how its storage is opened (confined to the catalog's allowed
// locations, with the catalog's vended credentials).

// logHistory is every version of the table's log a reader may ask for,
// with the latest snapshot, read once per request.
func (s *Server) logHistory(ctx context.Context, l *loaded) (history, error) {
	snap, commits, err := l.log.History(ctx)
	if errors.Is(err, deltalog.ErrNotFound) {
		if _, lerr := l.log.LatestVersion(ctx); errors.Is(lerr, deltalog.ErrNotFound) {
			return nil, errNoLog
		}
	}
	if err != nil {
		return nil, s.logError(err, l, "reading the Delta log of table %q failed", l.target.Table)
	}
	l.latest = snap
	h := make(history, len(commits))
	for i, c := range commits {
		h[i] = version{V: c.Version, Ts: c.Timestamp}
	}
	return h, nil
}

// errNoLog: the table's location has no Delta commit yet; until one is
// written the table is what its create said, its Iceberg side.
var errNoLog = errors.New("no Delta log yet")

// logAt is the log's snapshot at version v (the latest is already read).
func (rs *response) logAt(ctx context.Context, v int64) (*deltalog.Snapshot, error) {
	l := rs.l
	if l.latest != nil && l.latest.Version == v {
		return l.latest, nil
	}
	snap, err := l.log.At(ctx, v)
	if err != nil {
		return nil, rs.s.logError(err, l, "reading version %d of table %q failed", v, l.target.Table)
	}
	return snap, nil
}

// logError puts a failure to read the log in the protocol's model: a
// version the log can no longer reconstruct is the caller's to change
// (400); a log that breaks the protocol, or storage that fails, is 502
// with the cause in the server's log (it may name server paths).
func (s *Server) logError(err error, l *loaded, format string, args ...any) error {
	if errors.Is(err, deltalog.ErrNotFound) {
		var de *deltalog.Error
		if errors.As(err, &de) {
			return badParam("table %q: %s", l.target.Table, de.Msg)
		}
		return badParam("table %q: a version it no longer has", l.target.Table)
	}
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	return s.storageError(err, format, args...)
}

// logSnapshot answers metadata, or a query of one version of the log.
func (rs *response) logSnapshot(ctx context.Context, h history, q QueryRequest, withFiles bool) error {
	v, err := pick(h, q, rs.s.now())
	if err != nil {
		return err
	}
	snap, err := rs.logAt(ctx, v.V)
	if err != nil {
		return err
	}
	rs.version = v.V
	if err := rs.logHeader(snap, snap, true); err != nil || !withFiles {
		return err
	}
	if err := noDeletionVectors(snap, rs.l.target.Table); err != nil {
		return err
	}
	travel := q.Version != nil || q.Timestamp != nil
	line := func(e *actions.Encoder, dst []byte, f actions.Format, file actions.File) ([]byte, error) {
		return e.AppendFileLine(dst, f, file, travel)
	}
	for i := range snap.Files {
		a := &snap.Files[i]
		lf := actions.LogFile{Location: a.Location, PartitionValues: a.PartitionValues, Size: a.Size,
			ModificationTime: a.ModificationTime, Stats: a.Stats}
		if err := rs.logFileLine(ctx, line, lf, v); err != nil {
			return err
		}
	}
	return nil
}

// noDeletionVectors refuses a version whose files have deletion vectors:
// lakegate does not hand out their vector files, and a file line without
// its vector would return deleted rows.
func noDeletionVectors(snap *deltalog.Snapshot, name string) error {
	for i := range snap.Files {
		if snap.Files[i].DeletionVector != nil {
			return badParam("version %d of table %q has deletion vectors, which lakegate does not share "+
				"(rewrite the files, e.g. with Delta's PURGE / OPTIMIZE, to share the version)", snap.Version, name)
		}
	}
	return nil
}

// logFileLine appends one file line of a log's file with a fresh URL.
func (rs *response) logFileLine(ctx context.Context, line func(*actions.Encoder, []byte, actions.Format, actions.File) ([]byte, error),
	lf actions.LogFile, v version) error {
	u, err := rs.fileURL(ctx, lf.Location)
	if err != nil {
		// The file's name, not its location: a local one is a server path.
		return Errorf(http.StatusInternalServerError, CodeInternal, "cannot hand out a URL for file %s of table %q: %v",
			path.Base(lf.Location), rs.l.target.Table, err)
	}
	rs.files++
	rs.bytes += lf.Size
	return rs.fileLine(line, actions.File{URL: u, Log: &lf, Version: v.V, Timestamp: v.Ts, Expiration: rs.exp.UnixMilli()})
}

// logHeader writes the protocol and metaData lines of snapshot head,
// choosing the response format for everything up to snapshot decide (a
// change range decides on its end). withProtocol is false for the
// historical metaData lines of a change range.
func (rs *response) logHeader(head, decide *deltalog.Snapshot, withProtocol bool) error {
	f, err := chooseLogFormat(rs.caps, decide, rs.req.Route.Table)
	if err != nil {
		return err
	}
	rs.format = f
	t := logTable(rs.l.target.Table, head)
	if withProtocol {
		if err := rs.add(actions.LogProtocol(f, t)); err != nil {
			return err
		}
	}
	return rs.add(actions.LogMetadata(f, t))
}

// logTable is the table of snapshot snap, with its size and file count.
func logTable(name string, snap *deltalog.Snapshot) actions.LogTable {
	var size int64
	for i := range snap.Files {
		size += snap.Files[i].Size
	}
	n := int64(len(snap.Files))
	return actions.LogTable{Name: name, Version: snap.Version, Protocol: snap.Protocol, Metadata: snap.Metadata,
		Size: &size, NumFiles: &n}
}

// chooseLogFormat follows the capabilities header as chooseFormat does:
// parquet unless the client takes delta and either asked for it alone or
// the table needs a Delta reader (LogNeedsDelta); a client that lists its reader
// features must list every one the log's protocol names.
func chooseLogFormat(c Capabilities, snap *deltalog.Snapshot, name string) (actions.Format, error) {
	need := actions.LogNeedsDelta(snap.Protocol, snap.Metadata)
	switch {
	case c.accepts(actions.Delta) && (need != "" || !c.accepts(actions.Parquet)):
		return actions.Delta, missingLogFeatures(c, snap.Protocol)
	case need != "":
		return "", badParam("table %q cannot be read in parquet format: %s; ask for responseformat=delta", name, need)
	}
	return actions.Parquet, nil
}

func missingLogFeatures(c Capabilities, p deltalog.Protocol) error {
	if c.ReaderFeatures == nil {
		return nil
	}
	var missing []string
	for _, f := range p.ReaderFeatures {
		if !c.ReaderFeatures[strings.ToLower(f)] {
			missing = append(missing, strings.ToLower(f))
		}
	}
	if len(missing) > 0 {
		return badParam("the table's Delta log needs reader features the client did not list: %s", strings.Join(missing, ","))
	}
	return nil
}

// logChanges answers a changes request (or a query with startingVersion)
// from each commit of the range: its cdc files when its writer wrote any
// (the change feed only: "readers should use the cdc actions ... instead
// of computing changes from add and remove"), else its removes and adds
// that change data. A commit that rewrote files without change files
// cannot tell its row-level changes (untouched rows would read as deleted
// and inserted), so a change feed over it is refused; a query replays
// files, so it gets them. With includeHistoricalMetadata, a metaData line
// at each commit that changed the metadata.
func (rs *response) logChanges(ctx context.Context, h history, c ChangesRequest) error {
	from, first, last, err := rs.changeIndexes(h, c, "commit file")
	if err != nil {
		return err
	}
	headV, decideV := changesHead(h, first, last, c.HistoricalMetadata)
	head, err := rs.logAt(ctx, headV.V)
	if err != nil {
		return err
	}
	decide, err := rs.logAt(ctx, decideV.V)
	if err != nil {
		return err
	}
	if err := rs.logHeader(head, decide, true); err != nil {
		return err
	}
	rs.version = from
	for i := first; i <= last; i++ {
		if err := rs.logCommit(ctx, h[i], c, i > first); err != nil {
			return err
		}
	}
	return nil
}

// logCommit appends the lines of one commit of a change range.
func (rs *response) logCommit(ctx context.Context, v version, c ChangesRequest, afterFirst bool) error {
	cf, err := rs.l.log.Commit(ctx, v.V)
	if err != nil {
		return rs.s.logError(err, rs.l, "reading version %d of table %q failed", v.V, rs.l.target.Table)
	}
	if c.HistoricalMetadata && afterFirst && cf.Metadata != nil {
		t := logTable(rs.l.target.Table, &deltalog.Snapshot{Version: v.V, Metadata: *cf.Metadata})
		t.Size, t.NumFiles = nil, nil // not known without a snapshot
		if err := rs.add(actions.LogMetadata(rs.format, t)); err != nil {
			return err
		}
	}
	if !c.asQuery && len(cf.CDC) > 0 {
		return rs.logCdcLines(ctx, v, cf.CDC)
	}
	removes := changingData(cf.Removes, func(r deltalog.RemoveFile) bool { return r.DataChange })
	adds := changingData(cf.Adds, func(a deltalog.AddFile) bool { return a.DataChange })
	if !c.asQuery && len(removes) > 0 && len(adds) > 0 {
		return badParam("version %d of table %q rewrote data files without writing change data files, so its row-level "+
			"changes are not known (enable delta.enableChangeDataFeed on the table for later versions); "+
			"ask for a range that leaves it out", v.V, rs.l.target.Table)
	}
	for _, r := range removes {
		var size int64
		if r.Size != nil {
			size = *r.Size
		}
		lf := actions.LogFile{Location: r.Location, PartitionValues: r.PartitionValues, Size: size}
		if err := rs.logFileLine(ctx, (*actions.Encoder).AppendRemove, lf, v); err != nil {
			return err
		}
	}
	for _, a := range adds {
		lf := actions.LogFile{Location: a.Location, PartitionValues: a.PartitionValues, Size: a.Size,
			ModificationTime: a.ModificationTime, Stats: a.Stats}
		if a.DeletionVector != nil {
			return badParam("version %d of table %q added a file with a deletion vector, which lakegate does not share",
				v.V, rs.l.target.Table)
		}
		if err := rs.logFileLine(ctx, (*actions.Encoder).AppendAdd, lf, v); err != nil {
			return err
		}
	}
	return nil
}

// logCdcLines appends a commit's change data files as cdf lines.
func (rs *response) logCdcLines(ctx context.Context, v version, files []deltalog.CDCFile) error {
	for _, f := range files {
		u, err := rs.fileURL(ctx, f.Location)
		if err != nil {
			return Errorf(http.StatusInternalServerError, CodeInternal, "cannot hand out a URL for change file %s of table %q: %v",
				path.Base(f.Location), rs.l.target.Table, err)
		}
		rs.files++
		rs.bytes += f.Size
		if err := rs.add(actions.Cdf(rs.format, actions.ChangeFile{URL: u, Path: f.Location, PartitionValues: f.PartitionValues,
			Size: f.Size, Version: v.V, Timestamp: v.Ts, Expiration: rs.exp.UnixMilli()})); err != nil {
			return err
		}
	}
	return nil
}

// changingData keeps a commit's file actions that change data: a
// compaction's (dataChange false) change no rows, as Delta's change
// readers skip them.
func changingData[T any](actions []T, dataChange func(T) bool) []T {
	var out []T
	for _, a := range actions {
		if dataChange(a) {
			out = append(out, a)
		}
	}
	return out
}
