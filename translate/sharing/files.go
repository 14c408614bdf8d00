package sharing

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/hints"
)

// planFiles lists the data files of version v that may match the query's
// hints: planned by the backend when it offers server-side planning (and
// Planning is auto), else by lakegate over the manifests. limitHint stops
// the listing once the files hold that many records.
func (s *Server) planFiles(ctx context.Context, l *loaded, v version, q QueryRequest) ([]table.FileScanTask, error) {
	if v.Snap == nil {
		return nil, nil
	}
	key := planKeyOf(v, q)
	tasks, ok := s.plans.get(key)
	if !ok {
		var local bool
		var err error
		if tasks, local, err = s.plan(ctx, l, v, q); err != nil {
			return nil, err
		}
		if local {
			s.plans.add(key, tasks) // a backend's plan is its own to cache
		}
	}
	if q.LimitHint != nil {
		tasks = limited(tasks, *q.LimitHint)
	}
	return tasks, nil
}

// plan lists the files of v's snapshot that q's hints may match: planned
// by the backend, or by lakegate over the manifests (local).
func (s *Server) plan(ctx context.Context, l *loaded, v version, q QueryRequest) (tasks []table.FileScanTask, local bool, err error) {
	// Planning binds names to the snapshot's own schema: a version that
	// only changed the schema (a column added since) has columns the
	// snapshot's files and the backend's planner do not know.
	sch := snapshotSchema(v)
	filter := filterOf(q, sch, s.log())
	tasks, err = s.remotePlan(ctx, l, v, sch, filter)
	if err == nil && tasks == nil {
		local = true
		opts := []table.ScanOption{table.WithSnapshotID(v.Snap.SnapshotID)}
		if filter != nil {
			opts = append(opts, table.WithRowFilter(filter))
		}
		tasks, err = l.tbl.Scan(opts...).PlanFiles(ctx)
	}
	if err != nil {
		return nil, false, s.storageError(err, "planning the files of table %q failed", l.target.Table)
	}
	return tasks, local, noDeletes(tasks, l.target.Table)
}

// snapshotSchema is the schema version v's snapshot was written with
// (the version's own when the snapshot names none).
func snapshotSchema(v version) *iceberg.Schema {
	if v.Snap != nil && v.Snap.SchemaID != nil {
		for _, s := range v.Meta.Schemas() {
			if s.ID == *v.Snap.SchemaID {
				return s
			}
		}
	}
	return v.Meta.CurrentSchema()
}

// remotePlan asks the backend to plan (nil tasks when planning is local or
// the backend offers no planning). It calls the REST client's planner
// itself rather than through table.Scan, which asks for no column stats:
// file lines need every column's bounds and null counts.
func (s *Server) remotePlan(ctx context.Context, l *loaded, v version, sch *iceberg.Schema, filter iceberg.BooleanExpression) ([]table.FileScanTask, error) {
	if s.Planning == PlanLocal {
		return nil, nil
	}
	cl, err := s.Catalogs.Open(ctx, l.target.Catalog)
	if err != nil || !cl.SupportsRemoteScanPlanning() {
		return nil, err
	}
	if filter == nil {
		filter = iceberg.AlwaysTrue{}
	}
	// Names (filter, stats fields) are the version's own schema's.
	caseSensitive, snapshotSchema, id := true, true, v.Snap.SnapshotID
	res, err := cl.PlanFiles(ctx, table.ScanPlanningRequest{
		Identifier: l.target.identifier(), Metadata: l.tbl.Metadata(), Schema: sch,
		MetadataLocation: l.tbl.MetadataLocation(), FileIOProperties: l.props,
		SnapshotID: &id, RowFilter: filter, StatsFields: statsFields(sch),
		CaseSensitive: &caseSensitive, UseSnapshotSchema: &snapshotSchema,
	})
	if err != nil {
		return nil, err
	}
	if res.IO != nil {
		_ = res.IO.Close() // lakegate reads no file of the plan
	}
	if res.Tasks == nil {
		res.Tasks = []table.FileScanTask{}
	}
	return res.Tasks, nil
}

// statsFields names every primitive column, so the backend sends their
// bounds and counts.
func statsFields(sch *iceberg.Schema) []string {
	fields, _ := iceberg.IndexByID(sch)
	var out []string
	for id, f := range fields {
		if _, ok := f.Type.(iceberg.PrimitiveType); ok {
			if name, ok := sch.FindColumnName(id); ok {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// filterOf turns the hints into one Iceberg filter; hints that cannot be
// used are ignored, as the protocol asks (filtering is best effort).
func filterOf(q QueryRequest, sch *iceberg.Schema, log *zap.Logger) iceberg.BooleanExpression {
	var parts []iceberg.BooleanExpression
	if q.JSONPredicateHints != "" {
		e, err := hints.JSON(string(q.JSONPredicateHints), sch)
		if err != nil {
			log.Debug("jsonPredicateHints partly ignored", zap.Error(err))
		}
		parts = append(parts, e)
	}
	if len(q.PredicateHints) > 0 {
		e, err := hints.SQL(q.PredicateHints, sch)
		if err != nil {
			log.Debug("predicateHints partly ignored", zap.Error(err))
		}
		parts = append(parts, e)
	}
	var out iceberg.BooleanExpression
	for _, p := range parts {
		if p == nil || p.Equals(iceberg.AlwaysTrue{}) {
			continue
		}
		if out == nil {
			out = p
		} else {
			out = iceberg.NewAnd(out, p)
		}
	}
	return out
}

// noDeletes refuses tables whose rows are deleted by delete files: the
// protocol's file lists cannot say which rows of a file are gone, and
// answering without them would return deleted rows.
func noDeletes(tasks []table.FileScanTask, name string) error {
	for _, t := range tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return badParam("table %q has row-level delete files (merge-on-read); "+
				"Delta Sharing cannot express them, so lakegate does not share this version "+
				"(compact the table to rewrite the deletes into data files)", name)
		}
	}
	return nil
}

func limited(tasks []table.FileScanTask, limit int64) []table.FileScanTask {
	var rows int64
	for i, t := range tasks {
		if rows >= limit {
			return tasks[:i]
		}
		rows += t.File.Count()
	}
	return tasks
}

// changesHead is the version whose metaData heads a change feed, and the
// one the answer's format and partition columns are decided on. As the
// reference server answers: with includeHistoricalMetadata the starting
// version's (a reader starts from that schema, and later lines carry each
// change after it); without, the table's latest, which Spark's batch
// reader builds its scan from, so rows of every version in the range
// read into the newest columns.
func changesHead(h history, first, last int, historical bool) (head, decide version) {
	if historical {
		return h[first], h[last]
	}
	return h.latest(), h.latest()
}

// changes answers a changes request (or a query with startingVersion):
// for every version in the range, `add` for each data file its snapshots
// added and `remove` for each they deleted, read from the manifests those
// snapshots wrote (a version that only changed the schema or properties
// has none); with includeHistoricalMetadata, a metaData line at each
// version whose schema differs from the one before.
func (rs *response) changes(ctx context.Context, h history, c ChangesRequest) error {
	from, first, last, err := rs.changeIndexes(h, c, "metadata file")
	if err != nil {
		return err
	}
	lo := max(first-1, 0) // the version before the range: what the first one changed
	if err := rs.s.resolveAll(ctx, rs.l, h, lo, last); err != nil {
		return err
	}
	if err := rs.header(changesHead(h, first, last, c.HistoricalMetadata)); err != nil {
		return err
	}
	rs.version = from
	fs, ferr := rs.l.tbl.FS(ctx)
	if ferr != nil {
		return rs.s.storageError(ferr, "opening the storage of table %q failed", rs.l.target.Table)
	}
	schemaID := h[first].Meta.CurrentSchema().ID
	for i := first; i <= last; i++ {
		v := h[i]
		if sch := v.Meta.CurrentSchema(); c.HistoricalMetadata && sch.ID != schemaID {
			schemaID = sch.ID
			if err := rs.add(actions.Metadata(rs.format, rs.tableInfo(v))); err != nil {
				return err
			}
		}
		var prev version
		if i > 0 {
			prev = h[i-1]
		}
		snaps, err := snapshotsBetween(prev, i > 0, v, rs.l.target.Table)
		if err != nil {
			return err
		}
		// A rewrite's file-level changes would report its untouched rows
		// as deleted and inserted: in a change feed a version with one gets
		// its row-level changes derived, all its snapshots together (a
		// Delta reader takes only the change files of a version that has
		// them). A query replays files, so it gets them as they are.
		if !c.asQuery && slices.ContainsFunc(snaps, func(s table.Snapshot) bool { return rewrites(&s) }) {
			if err := rs.rewriteChanges(ctx, fs, v, snaps); err != nil {
				return err
			}
			continue
		}
		if err := rs.fileChanges(ctx, fs, v, snaps); err != nil {
			return err
		}
	}
	return nil
}

// fileChanges adds the remove and add lines of a version whose snapshots
// only appended and deleted whole files.
func (rs *response) fileChanges(ctx context.Context, fs iceio.IO, v version, snaps []table.Snapshot) error {
	removed, added, err := rs.versionFiles(fs, v, snaps)
	if err != nil {
		return err
	}
	sch := v.Meta.CurrentSchema()
	for _, set := range []struct {
		files []iceberg.DataFile
		line  func(*actions.Encoder, []byte, actions.Format, actions.File) ([]byte, error)
	}{{removed, (*actions.Encoder).AppendRemove}, {added, (*actions.Encoder).AppendAdd}} {
		for _, df := range set.files {
			f, err := rs.file(ctx, df, sch, v)
			if err != nil {
				return err
			}
			if err := rs.fileLine(set.line, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// changeIndexes resolves a change range to the positions in h of its
// first and last versions (and its starting version), refusing a range
// longer than max_change_versions: each version costs one read (unit).
func (rs *response) changeIndexes(h history, c ChangesRequest, unit string) (from int64, first, last int, err error) {
	from, to, err := changeRange(h, c, rs.s.now())
	if err != nil {
		return 0, 0, 0, err
	}
	if first, err = h.index(from); err != nil {
		return 0, 0, 0, err
	}
	if last, err = h.index(to); err != nil {
		return 0, 0, 0, err
	}
	if n := last - first + 1; n > rs.s.maxVersions() {
		return 0, 0, 0, badParam("versions %d to %d of table %q are %d versions; lakegate reads at most %d per request "+
			"(each is one %s): ask for a shorter range", from, to, rs.l.target.Table, n, rs.s.maxVersions(), unit)
	}
	return from, first, last, nil
}

// changeRange resolves a range's bounds. A starting timestamp in the future
// is refused as everywhere else; an ending one past the latest version is
// clamped to it, as an ending version is.
func changeRange(h history, c ChangesRequest, now time.Time) (int64, int64, error) {
	from, to := int64(0), h.latest().V
	switch {
	case c.Start.Version != nil:
		from = *c.Start.Version
	case c.Start.Timestamp != nil:
		err := notFuture(*c.Start.Timestamp, now)
		var v version
		if err == nil {
			v, err = h.since(*c.Start.Timestamp)
		}
		if err != nil {
			return 0, 0, err
		}
		from = v.V
	}
	switch {
	case c.End.Version != nil:
		to = *c.End.Version
	case c.End.Timestamp != nil:
		v, err := h.asOf(*c.End.Timestamp)
		if err != nil {
			return 0, 0, err
		}
		to = v.V
	}
	if from > h.latest().V {
		return 0, 0, badParam("startingVersion %d is after the latest version %d", from, h.latest().V)
	}
	if to > h.latest().V {
		to = h.latest().V
	}
	if to < from {
		return 0, 0, badParam("the range ends (version %d) before it starts (version %d)", to, from)
	}
	return from, to, nil
}
