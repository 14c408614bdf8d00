package embedded

// Scan planning: reading and validating PlanTableScanRequest, and planning.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// planRequest is the spec's PlanTableScanRequest.
type planRequest struct {
	SnapshotID        *int64          `json:"snapshot-id"`
	Select            []string        `json:"select"`
	Filter            json.RawMessage `json:"filter"`
	MinRowsRequested  *int64          `json:"min-rows-requested"`
	CaseSensitive     *bool           `json:"case-sensitive"`
	UseSnapshotSchema *bool           `json:"use-snapshot-schema"`
	StartSnapshotID   *int64          `json:"start-snapshot-id"`
	EndSnapshotID     *int64          `json:"end-snapshot-id"`
	StatsFields       []string        `json:"stats-fields"`
}

// readPlanRequest decodes the body. The spec makes the body optional, so an
// empty one plans the current snapshot with no filter.
func readPlanRequest(r *http.Request) (planRequest, error) {
	var req planRequest
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return req, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := decodeBody(r, &req); err != nil {
		return req, err
	}
	return req, req.validateShape()
}

// validateShape rejects combinations the spec forbids before any table
// work is done.
func (req planRequest) validateShape() error {
	incremental := req.StartSnapshotID != nil || req.EndSnapshotID != nil
	switch {
	case incremental && req.SnapshotID != nil:
		return badRequest("snapshot-id cannot be combined with start-snapshot-id/end-snapshot-id")
	case req.StartSnapshotID != nil && req.EndSnapshotID == nil:
		return badRequest("end-snapshot-id is required when start-snapshot-id is specified")
	case req.EndSnapshotID != nil && req.StartSnapshotID == nil:
		return badRequest("start-snapshot-id is required when end-snapshot-id is specified")
	case req.MinRowsRequested != nil && *req.MinRowsRequested < 0:
		return badRequest("min-rows-requested must not be negative, got %d", *req.MinRowsRequested)
	}
	return nil
}

// scanConfig is a validated request resolved against the table metadata.
type scanConfig struct {
	caseSensitive bool
	snapshotID    *int64 // point-in-time snapshot; nil is the current one
	start, end    *int64 // incremental range (start exclusive)
	filter        iceberg.BooleanExpression
	// pushFilter is false when iceberg-go would bind the filter against a
	// different schema than the client asked for; planning then keeps every
	// file and the client applies its own filter.
	pushFilter bool
	minRows    int64 // -1: no hint
	statsIDs   map[int]bool
}

func (req planRequest) resolve(meta table.Metadata) (scanConfig, error) {
	sc := scanConfig{
		caseSensitive: req.CaseSensitive == nil || *req.CaseSensitive,
		snapshotID:    req.SnapshotID,
		start:         req.StartSnapshotID,
		end:           req.EndSnapshotID,
		minRows:       -1,
	}
	if req.MinRowsRequested != nil {
		sc.minRows = *req.MinRowsRequested
	}
	for _, id := range []*int64{req.SnapshotID, req.StartSnapshotID, req.EndSnapshotID} {
		if id != nil && meta.SnapshotByID(*id) == nil {
			return sc, badRequest("snapshot %d does not exist in this table", *id)
		}
	}
	schema := sc.schema(meta, req.UseSnapshotSchema != nil && *req.UseSnapshotSchema)
	var err error
	if sc.filter, err = parseFilter(req.Filter, schema, sc.caseSensitive); err != nil {
		return sc, err
	}
	if err := validateSelect(schema, req.Select, sc.caseSensitive); err != nil {
		return sc, err
	}
	if sc.statsIDs, err = statsFieldIDs(schema, req.StatsFields, sc.caseSensitive); err != nil {
		return sc, err
	}
	return sc, nil
}

// schema picks the schema that names in select/filter refer to and decides
// whether iceberg-go's scan will bind the filter against that same schema.
// iceberg-go binds against the snapshot's schema whenever a snapshot is
// pinned, and against the table schema otherwise; when that differs from the
// requested one, pushing the filter could bind a name to the wrong column.
func (sc *scanConfig) schema(meta table.Metadata, useSnapshotSchema bool) *iceberg.Schema {
	current := meta.CurrentSchema()
	pinned := sc.snapshotID
	if sc.end != nil {
		pinned = sc.end
	}
	if pinned == nil && useSnapshotSchema {
		// Pin the current snapshot so the scan uses its schema, as asked.
		if snap := meta.CurrentSnapshot(); snap != nil {
			id := snap.SnapshotID
			sc.snapshotID, pinned = &id, &id
		}
	}
	sc.pushFilter = true
	if pinned == nil {
		return current
	}
	snapSchema := snapshotSchema(meta, *pinned)
	if useSnapshotSchema {
		return snapSchema
	}
	sc.pushFilter = snapSchema.ID == current.ID
	return current
}

// snapshotSchema is the schema a snapshot was written with, falling back to
// the current schema for snapshots that do not record one (v1 tables).
func snapshotSchema(meta table.Metadata, snapshotID int64) *iceberg.Schema {
	snap := meta.SnapshotByID(snapshotID)
	if snap == nil || snap.SchemaID == nil {
		return meta.CurrentSchema()
	}
	for _, s := range meta.Schemas() {
		if s.ID == *snap.SchemaID {
			return s
		}
	}
	return meta.CurrentSchema()
}

// parseFilter turns the request's Expression JSON into an unbound
// expression and checks that it binds, so a bad filter is a 400 here rather
// than a planning failure later.
func parseFilter(raw json.RawMessage, schema *iceberg.Schema, caseSensitive bool) (iceberg.BooleanExpression, error) {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return iceberg.AlwaysTrue{}, nil
	}
	raw, err := spellConstants(raw)
	if err != nil {
		return nil, badRequest("malformed filter: %v", err)
	}
	if !caseSensitive {
		// iceberg-go's parser resolves names case-sensitively; respell them
		// as the schema does so case-insensitive requests parse too.
		if raw, err = canonicalizeTerms(raw, schema); err != nil {
			return nil, badRequest("malformed filter: %v", err)
		}
	}
	expr, err := parseExpr(raw, schema)
	if err != nil {
		return nil, badRequest("invalid filter: %v", err)
	}
	if _, err := iceberg.BindExpr(schema, expr, caseSensitive); err != nil {
		return nil, badRequest("invalid filter: %v", err)
	}
	return expr, nil
}

// spellConstants rewrites the spec's TrueExpression and FalseExpression
// ({"type":"true"}, {"type":"false"}), at any depth, as the bare booleans
// iceberg-go's parser takes for them.
func spellConstants(raw json.RawMessage) (json.RawMessage, error) {
	if !bytes.Contains(raw, []byte(`"true"`)) && !bytes.Contains(raw, []byte(`"false"`)) {
		return raw, nil
	}
	return rewriteExpr(raw, func(node map[string]json.RawMessage) (json.RawMessage, error) {
		var typ string
		_ = json.Unmarshal(node["type"], &typ)
		if (typ == "true" || typ == "false") && len(node) == 1 {
			return json.RawMessage(typ), nil
		}
		return nil, nil
	})
}

// rewriteExpr walks an Expression JSON depth first (child, left, right)
// and lets rewrite change each object node: its answer replaces the node,
// or, when nil, the node is kept (with rewritten children). Non-object
// expressions (true, false) are left as they are.
func rewriteExpr(raw json.RawMessage, rewrite func(map[string]json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return raw, nil
	}
	var node map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &node); err != nil {
		return nil, err
	}
	if out, err := rewrite(node); out != nil || err != nil {
		return out, err
	}
	for _, k := range []string{"child", "left", "right"} {
		if v, ok := node[k]; ok {
			c, err := rewriteExpr(v, rewrite)
			if err != nil {
				return nil, err
			}
			node[k] = c
		}
	}
	return json.Marshal(node)
}

// parseExpr wraps iceberg.ParseExpr, turning a parser panic on hostile
// input into a 400 instead of a dropped connection.
func parseExpr(raw json.RawMessage, schema *iceberg.Schema) (expr iceberg.BooleanExpression, err error) {
	defer func() {
		if p := recover(); p != nil {
			expr, err = nil, fmt.Errorf("cannot parse expression: %v", p)
		}
	}()
	return iceberg.ParseExpr(raw, schema)
}

// canonicalizeTerms rewrites every term name in an Expression JSON to the
// schema's spelling of the field it names case-insensitively. Unknown names
// are left alone for the parser to reject.
func canonicalizeTerms(raw json.RawMessage, schema *iceberg.Schema) (json.RawMessage, error) {
	return rewriteExpr(raw, func(node map[string]json.RawMessage) (json.RawMessage, error) {
		if t, ok := node["term"]; ok {
			c, err := canonicalTerm(t, schema)
			if err != nil {
				return nil, err
			}
			node["term"] = c
		}
		return nil, nil
	})
}

// canonicalTerm handles the two term spellings: a bare name, or an object
// ({"type":"reference"|"transform", "term": name, ...}).
func canonicalTerm(raw json.RawMessage, schema *iceberg.Schema) (json.RawMessage, error) {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return json.Marshal(canonicalName(schema, name))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw, nil // not a term; the parser reports it
	}
	if json.Unmarshal(obj["term"], &name) == nil {
		t, err := json.Marshal(canonicalName(schema, name))
		if err != nil {
			return nil, err
		}
		obj["term"] = t
	}
	return json.Marshal(obj)
}

func canonicalName(schema *iceberg.Schema, name string) string {
	if f, ok := schema.FindFieldByNameCaseInsensitive(name); ok {
		if n, ok := schema.FindColumnName(f.ID); ok {
			return n
		}
	}
	return name
}

// validateSelect checks the selected field names exist. Row-lineage
// metadata columns are not schema fields but are legal to select.
func validateSelect(schema *iceberg.Schema, names []string, caseSensitive bool) error {
	var fields []string
	for _, n := range names {
		if !isLineageColumn(n, caseSensitive) {
			fields = append(fields, n)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	if _, err := schema.Select(caseSensitive, fields...); err != nil {
		return badRequest("invalid select: %v", err)
	}
	return nil
}

func isLineageColumn(name string, caseSensitive bool) bool {
	for _, c := range []string{iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName} {
		if name == c || (!caseSensitive && strings.EqualFold(name, c)) {
			return true
		}
	}
	return false
}

// statsFieldIDs resolves stats-fields to field ids (with nested children).
// nil means no column stats: the spec sends stats only for requested fields.
func statsFieldIDs(schema *iceberg.Schema, names []string, caseSensitive bool) (map[int]bool, error) {
	if names == nil {
		return nil, nil
	}
	ids := map[int]bool{}
	if len(names) == 0 {
		return ids, nil
	}
	sel, err := schema.Select(caseSensitive, names...)
	if err != nil {
		return nil, badRequest("invalid stats-fields: %v", err)
	}
	fields, err := sel.FlatFields()
	if err != nil {
		return nil, err
	}
	for f := range fields {
		ids[f.ID] = true
	}
	return ids, nil
}

// ---------------------------------------------------------------------------
// Planning

// planFiles runs iceberg-go's planner for the request: an incremental
// append scan for a snapshot range, otherwise a point-in-time scan.
func (sc scanConfig) planFiles(ctx context.Context, tbl *table.Table) ([]table.FileScanTask, error) {
	opts := []table.ScanOption{table.WithCaseSensitive(sc.caseSensitive)}
	if sc.pushFilter {
		opts = append(opts, table.WithRowFilter(sc.filter))
	}
	if sc.start != nil {
		tasks, err := tbl.NewIncrementalAppendScan(opts...).
			FromSnapshotExclusive(*sc.start).ToSnapshot(*sc.end).PlanFiles(ctx)
		if errors.Is(err, table.ErrMissingOperation) || errors.Is(err, table.ErrInvalidOperation) {
			// The range holds a snapshot the incremental scan cannot
			// classify; that is a property of the requested range.
			return nil, badRequest("cannot plan incremental scan: %v", err)
		}
		return tasks, err
	}
	if sc.snapshotID != nil {
		opts = append(opts, table.WithSnapshotID(*sc.snapshotID))
	}
	if sc.minRows > 0 {
		// A hint: the planner may stop reading manifests once enough rows
		// are covered; the client still applies its own limit.
		opts = append(opts, table.WithLimit(sc.minRows))
	}
	scan := tbl.Scan(opts...)
	defer scan.Close()
	return scan.PlanFiles(ctx)
}

// wholeFileTasks folds the byte-range splits iceberg-go makes of large
// Parquet files back into one task per file: REST FileScanTasks carry whole
// files (with split-offsets) and clients split them again themselves.
func wholeFileTasks(tasks []table.FileScanTask) []table.FileScanTask {
	seen := make(map[string]bool, len(tasks))
	out := tasks[:0:0]
	for _, t := range tasks {
		if seen[t.File.FilePath()] {
			continue
		}
		seen[t.File.FilePath()] = true
		out = append(out, t)
	}
	return out
}
