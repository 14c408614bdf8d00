package sharing

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/translate/schema"
	"github.com/lakegate/lakegate/translate/sharing/actions"
)

// VersionHeader carries the table version on version, metadata, query
// and changes answers.
const VersionHeader = "Delta-Table-Version"

// tableVersion answers GET .../version (and the deprecated HEAD).
func (s *Server) tableVersion(ctx context.Context, w http.ResponseWriter, r *http.Request, req Request) error {
	var since *time.Time
	if ts := r.URL.Query().Get("startingTimestamp"); ts != "" {
		t, err := ParseTimestamp(ts)
		if err == nil {
			err = notFuture(t, s.now())
		}
		if err != nil {
			return err
		}
		since = &t
	}
	_, h, err := s.open(ctx, req)
	if err != nil {
		return err
	}
	v := h.latest()
	if since != nil {
		if v, err = h.since(*since); err != nil {
			return err
		}
	}
	w.Header().Set(VersionHeader, strconv.FormatInt(v.V, 10))
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) open(ctx context.Context, req Request) (*loaded, history, error) {
	t, err := s.resolveTable(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.load(ctx, t)
	if err != nil && AsError(err).Code == http.StatusNotFound && t.guessed {
		// Not under the name as spelled: find it case-insensitively.
		sh, sc, serr := s.schema(ctx, req)
		if serr != nil {
			return nil, nil, serr
		}
		if t, err = s.listedTable(ctx, req, sh, sc); err == nil {
			l, err = s.load(ctx, t)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if l.log != nil {
		h, err := s.logHistory(ctx, l)
		if !errors.Is(err, errNoLog) {
			return l, h, err
		}
		l.log = nil
	}
	return l, lineage(l.tbl.Metadata(), l.tbl.MetadataLocation()), nil
}

// serveTable answers metadata, query and changes: parse everything the
// client sent before touching the catalog, then build every line before
// the status is written, so a failure is a clean error, never half a 200.
func (s *Server) serveTable(ctx context.Context, w http.ResponseWriter, r *http.Request, req Request) error {
	caps, err := ParseCapabilities(r.Header.Get(CapabilitiesHeader))
	if err != nil {
		return err
	}
	var q QueryRequest
	var ch ChangesRequest
	var idHash string
	switch req.Route.Op {
	case OpTableMetadata:
		q, err = metadataParams(r)
	case OpQueryTable:
		if idHash, err = ParseFileIDHash(r.Header.Get(FileIDHashHeader)); err == nil {
			q, err = ParseQuery(r.Body)
		}
	case OpQueryChanges:
		if idHash, err = ParseFileIDHash(r.Header.Get(FileIDHashHeader)); err == nil {
			ch, err = ParseChanges(r.URL.Query())
		}
	}
	if err != nil {
		return err
	}
	l, h, err := s.open(ctx, req)
	if err != nil {
		return err
	}
	// Presigned S3 URLs expire lifetime after their signing second
	// (X-Amz-Date has no fraction): a whole-second expiration is never
	// later than the URLs' own.
	rs := &response{s: s, req: req, l: l, caps: caps, idHash: idHash, changeFeed: s.ChangeDir != "" || changeFeedServable(l.tbl.Metadata()),
		exp: s.now().Truncate(time.Second).Add(s.lifetime())}
	rs.fileWriter = fileWriter{rs: rs, lines: pooledLines()}
	defer rs.release()
	// A table whose truth is its Delta log is answered from the log.
	changes, snapshot := rs.changes, rs.snapshot
	if l.log != nil {
		changes, snapshot = rs.logChanges, rs.logSnapshot
	}
	switch {
	case req.Route.Op == OpQueryChanges:
		err = changes(ctx, h, ch)
	case req.Route.Op == OpQueryTable && q.StartingVersion != nil:
		end := h.latest().V
		if q.EndingVersion != nil {
			end = *q.EndingVersion
		}
		err = changes(ctx, h, ChangesRequest{Start: Bound{Version: q.StartingVersion}, End: Bound{Version: &end},
			HistoricalMetadata: true, asQuery: true})
	default:
		err = snapshot(ctx, h, q, req.Route.Op == OpQueryTable)
	}
	if err != nil {
		return err
	}
	rs.write(w)
	return nil
}

// metadataParams reads the metadata endpoint's version / timestamp.
func metadataParams(r *http.Request) (QueryRequest, error) {
	var q QueryRequest
	qs := r.URL.Query()
	if v := qs.Get("version"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return q, badParam("version must be an integer, not %q", v)
		}
		q.Version = &n
	}
	if ts := qs.Get("timestamp"); ts != "" {
		q.Timestamp = &ts
	}
	return q, q.check()
}

// response accumulates the NDJSON lines of one answer.
type response struct {
	s       *Server
	req     Request
	l       *loaded
	caps    Capabilities
	idHash  string // the fileidhash scheme the client asked for, echoed
	exp     time.Time
	format  actions.Format
	mapping bool // delta format maps columns by field id
	// specs is the metadata whose partition specs decide the declared
	// partition columns: the answer's last version's.
	specs table.Metadata
	// changeFeed: the table declares a change data feed (see
	// changeFeedServable); historical metaData lines say so too.
	changeFeed bool
	version    int64
	// partitioned: the metadata line declares partition columns, so file
	// lines carry partition values.
	partitioned bool
	// fileWriter holds the answer's lines (and writes its file lines).
	fileWriter
}

func (rs *response) add(b []byte, err error) error {
	if err != nil {
		return Errorf(http.StatusInternalServerError, CodeInternal, "%v", err)
	}
	rs.lines = append(append(rs.lines, b...), '\n')
	return nil
}

// snapshot answers metadata, or a query of one version (latest or time
// travel): protocol, metadata, then one file line per data file.
func (rs *response) snapshot(ctx context.Context, h history, q QueryRequest, withFiles bool) error {
	v, err := pick(h, q, rs.s.now())
	if err == nil {
		err = rs.s.resolve(ctx, rs.l, &v)
	}
	if err != nil {
		return err
	}
	rs.version = v.V
	if err := rs.header(v, v); err != nil || !withFiles {
		return err
	}
	tasks, err := rs.s.planFiles(ctx, rs.l, v, q)
	if err != nil {
		return err
	}
	travel := q.Version != nil || q.Timestamp != nil
	return rs.fileLines(ctx, tasks, v.Meta.CurrentSchema(), v, travel)
}

// pick is the version a snapshot request reads.
func pick(h history, q QueryRequest, now time.Time) (version, error) {
	switch {
	case q.Version != nil:
		return h.at(*q.Version)
	case q.Timestamp != nil:
		t, err := ParseTimestamp(*q.Timestamp)
		if err == nil {
			err = notFuture(t, now)
		}
		if err != nil {
			return version{}, err
		}
		return h.asOf(t)
	}
	return h.latest(), nil
}

// header writes the protocol and metadata lines of version v, choosing
// the response format (and column mapping) the table and the client allow
// for everything up to version last: a change range decides on its end,
// since a rename inside it needs mapping for every line. Both are resolved.
func (rs *response) header(v, last version) error {
	f, mapping, err := chooseFormat(rs.caps, rs.l.tbl.Metadata(), last.Meta.CurrentSchema(), rs.req.Route.Table)
	if err != nil {
		return err
	}
	rs.format, rs.mapping, rs.specs = f, mapping, last.Meta
	t := rs.tableInfo(v)
	rs.partitioned = !t.Spec.IsUnpartitioned()
	if err := rs.add(actions.Protocol(f, t)); err != nil {
		return err
	}
	return rs.add(actions.Metadata(f, t))
}

// tableInfo is the table as of version v (resolved): its schema,
// properties and size then. Its partition columns are declared from the
// specs of the answer's last version (rs.specs), so a spec added inside a
// change range cannot leave its files' partition values undeclared.
func (rs *response) tableInfo(v version) actions.Table {
	meta, sch := v.Meta, v.Meta.CurrentSchema()
	t := actions.Table{
		ID: meta.TableUUID().String(), Name: rs.l.target.Table, Description: meta.Properties()["comment"],
		Schema: sch, Spec: declaredSpec(rs.specs, sch), Properties: meta.Properties(), Version: v.V,
		ColumnMapping: rs.mapping, ChangeDataFeed: rs.changeFeed,
	}
	if v.Snap != nil && v.Snap.Summary != nil {
		t.Size = summaryInt(v.Snap.Summary.Properties, "total-files-size")
		t.NumFiles = summaryInt(v.Snap.Summary.Properties, "total-data-files")
	}
	return t
}

func summaryInt(p iceberg.Properties, key string) *int64 {
	n, err := strconv.ParseInt(p[key], 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// declaredSpec is the spec whose identity fields are declared partition
// columns: the current one when every spec of the table has the same
// identity columns, else none. A Delta reader takes a partition column's
// value from partitionValues only, so every listed file must carry it;
// Iceberg writes identity source columns into the data files too, so
// declaring none loses pruning, never data.
func declaredSpec(meta table.Metadata, sch *iceberg.Schema) iceberg.PartitionSpec {
	cur := meta.PartitionSpec()
	want := schema.PartitionColumns(cur, sch)
	for _, s := range meta.PartitionSpecs() {
		if !slices.Equal(schema.PartitionColumns(s, sch), want) {
			return *iceberg.UnpartitionedSpec
		}
	}
	return cur
}

// chooseFormat follows the capabilities header: parquet unless the client
// takes delta and either asked for it alone or the table needs it
// (timestamp without zone, column mapping). It also says whether the
// delta answer maps columns by field id: only when names cannot be
// trusted (see mappingNeeded), so a table that needs no mapping is served
// to readers without the columnMapping feature.
func chooseFormat(c Capabilities, meta table.Metadata, sch *iceberg.Schema, name string) (actions.Format, bool, error) {
	mapping := mappingNeeded(meta, sch)
	need := needsDelta(sch, mapping)
	switch {
	case c.accepts(actions.Delta) && (need != "" || !c.accepts(actions.Parquet)):
		return actions.Delta, mapping != "", missingFeatures(c, sch, mapping != "")
	case need != "":
		return "", false, badParam("table %q cannot be read in parquet format: %s; ask for responseformat=delta", name, need)
	}
	return actions.Parquet, false, nil
}

func needsDelta(sch *iceberg.Schema, mapping string) string {
	if col := ntzColumn(sch); col != "" {
		return "column " + col + " is a timestamp without time zone (timestampNtz)"
	}
	return mapping
}

func ntzColumn(sch *iceberg.Schema) string {
	fields, _ := iceberg.IndexByID(sch)
	for id, f := range fields {
		if f.Type.Equals(iceberg.PrimitiveTypes.Timestamp) {
			name, _ := sch.FindColumnName(id)
			return name
		}
	}
	return ""
}

// mappingNeeded says why files must be read by field id rather than by
// column name, or "" when names are safe: a column whose field id had
// another name in an earlier schema (its older files carry the old name),
// or a name an earlier schema gave to another field id (a dropped column's
// files would read as the new one's data).
func mappingNeeded(meta table.Metadata, sch *iceberg.Schema) string {
	fields, _ := iceberg.IndexByID(sch)
	for id := range fields {
		name, _ := sch.FindColumnName(id)
		for _, old := range meta.Schemas() {
			// Only schemas before this one wrote the files it reads.
			if old.ID >= sch.ID {
				continue
			}
			if was, ok := old.FindColumnName(id); ok && was != name {
				return "column " + name + " was renamed, and its older files carry the old name"
			}
			if f, ok := old.FindFieldByName(name); ok && f.ID != id {
				return "column " + name + " reuses the name of a dropped column, whose files carry it"
			}
		}
	}
	return ""
}

// missingFeatures refuses delta format to a client that listed its
// reader features without those lakegate's delta answer needs.
func missingFeatures(c Capabilities, sch *iceberg.Schema, mapping bool) error {
	if c.ReaderFeatures == nil {
		return nil
	}
	var need []string
	if mapping {
		need = append(need, "columnmapping")
	}
	if ntzColumn(sch) != "" {
		need = append(need, "timestampntz")
	}
	var missing []string
	for _, f := range need {
		if !c.ReaderFeatures[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return badParam("the delta response needs reader features the client did not list: %s", strings.Join(missing, ","))
	}
	return nil
}

// write sends the answer: headers (version, echoed capabilities), then
// every line, then endStreamAction when the client asked for it.
func (rs *response) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set(VersionHeader, strconv.FormatInt(rs.version, 10))
	echo := "responseformat=" + string(rs.format)
	if rs.caps.EndStream {
		echo += ";includeendstreamaction=true"
		var minExp int64
		if rs.files > 0 {
			minExp = rs.exp.UnixMilli()
		}
		_ = rs.add(actions.EndStream("", "", minExp))
	}
	w.Header().Set(CapabilitiesHeader, echo)
	if rs.idHash != "" {
		w.Header().Set(FileIDHashHeader, rs.idHash)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(rs.lines)
	if rs.l != nil {
		telemetry.CountSharing(rs.l.target.Catalog, rs.req.Route.Share, rs.files, rs.bytes)
	}
}
