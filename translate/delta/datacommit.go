package delta

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/translate/deltalog"
	"github.com/lakegate/lakegate/translate/schema"
	"github.com/lakegate/lakegate/upstream/locations"
)

// A Delta data commit is an add-commit without UniForm metadata: the
// engine wrote Parquet files and a staged commit file under the table's
// _delta_log/_staged_commits, and asks the catalog to ratify it. lakegate
// ratifies it by making the Iceberg table hold the same rows: the commit
// file's add and remove actions become one Iceberg snapshot (files added,
// files removed) committed together with the Delta bookkeeping, so the
// table read as Iceberg (by Spark, PyIceberg, Trino) has every row the
// Delta version has.
//
// What cannot be expressed that way is refused before anything changes,
// with 400 (untranslatable): deletion vectors (Iceberg v2 has no equivalent without
// rewriting files), partition values of types lakegate does not parse, add
// actions without a record count, column mapping whose ids differ from the
// Iceberg field ids (Iceberg readers match Parquet columns by id).

// untranslatable refuses a data commit lakegate cannot ratify as an
// Iceberg snapshot. It is a 400, not the spec's 501: delta-spark retries a
// 5xx answer to add-commit without end (seen: 90 identical commits in 13
// minutes), while a 400 ends the statement with this message.
func untranslatable(format string, args ...any) *Error {
	return invalidParam("lakegate cannot ratify this commit as an Iceberg snapshot: "+format, args...)
}

// maxCommitFile caps the commit file lakegate reads (a commit of some
// hundred thousand files).
const maxCommitFile = 64 << 20

// stagedCommitName is a staged commit file: <version>.<uuid>.json.
var stagedCommitName = regexp.MustCompile(`^(\d{20})\.[0-9a-fA-F-]{36}\.json$`)

// dataCommit is a commit file's file changes, as Iceberg data files.
type dataCommit struct {
	version int64
	adds    []iceberg.DataFile
	removes []iceberg.DataFile
	fsF     func(context.Context) (iceio.IO, error)
}

// deltaAction is one line of a commit file; only the file actions matter.
type deltaAction struct {
	Add    *fileAction `json:"add"`
	Remove *fileAction `json:"remove"`
}

type fileAction struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	Stats           string             `json:"stats"`
	DeletionVector  json.RawMessage    `json:"deletionVector"`
}

func isDataCommit(u *Update) bool {
	return u != nil && u.Action == ActAddCommit &&
		(u.Uniform == nil || u.Uniform.Iceberg == nil || u.Uniform.Iceberg.MetadataLocation == "")
}

// readDataCommit reads and translates the commit file u names.
func (s *Service) readDataCommit(ctx context.Context, ref Ref, l *loaded, u *Update) (*dataCommit, error) {
	name := *u.Commit.FileName
	m := stagedCommitName.FindStringSubmatch(name)
	if m == nil {
		return nil, invalidParam("commit file-name %q is not a staged commit file (<20-digit version>.<uuid>.json)", name)
	}
	if v, _ := strconv.ParseInt(m[1], 10, 64); v != *u.Commit.Version {
		return nil, invalidParam("commit file-name %q is not of version %d", name, *u.Commit.Version)
	}
	fsF, err := s.tableIO(ref, l)
	if err != nil {
		return nil, err
	}
	raw, err := readCommitFile(ctx, fsF, strings.TrimSuffix(l.Metadata.Location(), "/")+"/_delta_log/_staged_commits/"+name, u.Commit.FileSize)
	if err != nil {
		return nil, err
	}
	dc := &dataCommit{version: *u.Commit.Version, fsF: fsF}
	tr := fileTranslator{m: l.Metadata}
	err = eachAction(raw, func(a deltaAction) error {
		switch {
		case a.Add != nil:
			df, err := tr.dataFile(a.Add, true)
			if err != nil {
				return err
			}
			dc.adds = append(dc.adds, df)
		case a.Remove != nil:
			df, err := tr.dataFile(a.Remove, false)
			if err != nil {
				return err
			}
			dc.removes = append(dc.removes, df)
		}
		return nil
	})
	return dc, err
}

// tableIO opens the table's files with what its LoadTable answer carries
// (config and vended credentials), or, for a catalog whose storage keys
// the gateway holds (whose answers carry none), with those keys; confined
// to the catalog's locations either way.
func (s *Service) tableIO(ref Ref, l *loaded) (func(context.Context) (iceio.IO, error), error) {
	props := map[string]string{}
	for k, v := range l.Config {
		props[k] = v
	}
	loc := l.Metadata.Location()
	for _, c := range l.Credentials {
		if strings.HasPrefix(loc, c.Prefix) {
			for k, v := range c.Config {
				props[k] = v
			}
		}
	}
	for k, v := range s.catalogs.StorageProperties(ref.Catalog) {
		props[k] = v
	}
	fsF := iceio.LoadFSFunc(props, l.MetadataLocation)
	if rule := s.catalogs.Locations(ref.Catalog); rule != nil {
		if !rule.Allows(loc) {
			return nil, Errorf(http.StatusForbidden, PermissionDenied, "the table's location is outside its catalog's allowed locations")
		}
		fsF = locations.ConfineFunc(fsF, rule)
	}
	return fsF, nil
}

// readCommitFile reads the staged commit file, which must be the size the
// add-commit states.
func readCommitFile(ctx context.Context, fsF func(context.Context) (iceio.IO, error), path string, size *int64) ([]byte, error) {
	if size != nil && *size > maxCommitFile {
		return nil, untranslatable("commit file of %d bytes: lakegate reads commit files up to %d bytes", *size, maxCommitFile)
	}
	fs, err := fsF(ctx)
	if err != nil {
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "opening the table's storage: %v", err)
	}
	f, err := fs.Open(path)
	if err != nil {
		if errors.Is(err, locations.ErrOutside) {
			return nil, Errorf(http.StatusForbidden, PermissionDenied, "the commit file is outside the catalog's allowed locations")
		}
		return nil, invalidParam("commit file %s cannot be read: %v", path, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxCommitFile+1))
	if err != nil {
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "reading the commit file: %v", err)
	}
	if size != nil && int64(len(raw)) != *size {
		return nil, invalidParam("commit file %s has %d bytes, the add-commit says %d", path, len(raw), *size)
	}
	return raw, nil
}

// eachAction calls fn for every action line of a commit file.
func eachAction(raw []byte, fn func(deltaAction) error) error {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), maxCommitFile)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var a deltaAction
		if err := json.Unmarshal(line, &a); err != nil {
			return invalidParam("commit file line %d is not a Delta action: %v", n, err)
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return invalidParam("commit file: %v", err)
	}
	return nil
}

// fileTranslator turns Delta file actions into Iceberg data files of the
// table's default spec.
type fileTranslator struct {
	m table.Metadata
}

func (t fileTranslator) dataFile(a *fileAction, add bool) (iceberg.DataFile, error) {
	if len(a.DeletionVector) > 0 && string(a.DeletionVector) != "null" {
		if add {
			return nil, untranslatable("add action with a deletion vector (%s): lakegate keeps Delta tables as Iceberg v2 tables, "+
				"which cannot reference Delta deletion vectors; write with delta.enableDeletionVectors=false", a.Path)
		}
	}
	path, err := t.resolve(a.Path)
	if err != nil {
		return nil, err
	}
	var records int64
	if add {
		if records, err = numRecords(a); err != nil {
			return nil, err
		}
	}
	part, err := t.partition(a.PartitionValues, a.Path)
	if err != nil {
		return nil, err
	}
	b, err := iceberg.NewDataFileBuilder(t.m.PartitionSpec(), iceberg.EntryContentData, path, iceberg.ParquetFile,
		part, nil, nil, records, a.Size)
	if err != nil {
		return nil, invalidParam("file %s: %v", a.Path, err)
	}
	return b.Build(), nil
}

// resolve turns a Delta path into the file's location as Iceberg spells
// it (deltalog.ResolvePath: decoded, relative to the table root unless
// absolute); for a data commit it must stay under the table.
func (t fileTranslator) resolve(p string) (string, error) {
	root := strings.TrimSuffix(t.m.Location(), "/")
	loc, err := deltalog.ResolvePath(root, p)
	if err != nil {
		return "", invalidParam("file %v", err)
	}
	if !strings.HasPrefix(loc, root+"/") || strings.Contains(loc[len(root):], "/../") || strings.HasSuffix(loc, "/..") {
		return "", invalidParam("file %q is outside the table's location %s", p, root)
	}
	return loc, nil
}

func numRecords(a *fileAction) (int64, error) {
	var st struct {
		NumRecords *int64 `json:"numRecords"`
	}
	if a.Stats != "" {
		if err := json.Unmarshal([]byte(a.Stats), &st); err != nil {
			return 0, invalidParam("file %s: stats are not JSON: %v", a.Path, err)
		}
	}
	if st.NumRecords == nil || *st.NumRecords < 0 {
		return 0, untranslatable("add action for %s without stats.numRecords: Iceberg data files need a record count; "+
			"write with Delta statistics on (the default)", a.Path)
	}
	return *st.NumRecords, nil
}

// partition reads the file's partition values for the table's spec, whose
// fields are identity transforms of top-level columns (tables made through
// the Delta API always are).
func (t fileTranslator) partition(values map[string]*string, path string) (map[int]any, error) {
	spec, sch := t.m.PartitionSpec(), t.m.CurrentSchema()
	out := map[int]any{}
	for _, pf := range spec.Fields() {
		col, ok := sch.FindFieldByID(pf.SourceIDs[0])
		if _, ident := pf.Transform.(iceberg.IdentityTransform); !ok || !ident {
			return nil, untranslatable("partition field %s is not an identity column: Delta data commits need identity partitioning", pf.Name)
		}
		raw, ok := values[col.Name]
		if !ok {
			return nil, invalidParam("file %s has no partition value for column %q", path, col.Name)
		}
		if raw == nil {
			out[pf.FieldID] = nil
			continue
		}
		v, err := partitionValue(*raw, col.Type)
		if err != nil {
			return nil, invalidParam("file %s: partition value %q of %q: %v", path, *raw, col.Name, err)
		}
		out[pf.FieldID] = v
	}
	return out, nil
}

// partitionValue parses a Delta partition value string (Delta's "Partition
// Value Serialization") as the Go value iceberg-go keeps for the type.
func partitionValue(s string, t iceberg.Type) (any, error) {
	switch t := t.(type) {
	case iceberg.StringType:
		return s, nil
	case iceberg.Int32Type:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case iceberg.Int64Type:
		return strconv.ParseInt(s, 10, 64)
	case iceberg.BooleanType:
		return strconv.ParseBool(s)
	case iceberg.Float32Type:
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case iceberg.Float64Type:
		return strconv.ParseFloat(s, 64)
	case iceberg.DateType:
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, err
		}
		return iceberg.Date(d.Unix() / 86400), nil
	case iceberg.DecimalType:
		n, err := decimal128.FromString(s, int32(t.Precision()), int32(t.Scale()))
		if err != nil {
			return nil, err
		}
		return iceberg.Decimal{Val: n, Scale: t.Scale()}, nil
	case iceberg.TimestampType:
		// timestamp_ntz: wall-clock time, no zone to apply.
		ts, err := parseDeltaTimestamp(s, false)
		return iceberg.Timestamp(ts.UnixMicro()), err
	case iceberg.TimestampTzType:
		ts, err := parseDeltaTimestamp(s, true)
		return iceberg.Timestamp(ts.UnixMicro()), err
	}
	return nil, untranslatable("partition values of type %s are not translated", t)
}

// parseDeltaTimestamp reads a timestamp partition value: "2024-01-02
// 03:04:05[.micros]", or ISO 8601 in UTC ("2024-01-02T03:04:05.123456Z").
// For a timestamp with time zone only the UTC form is taken: the space
// form is in the writing session's time zone, which the log does not
// record, and guessing would file rows under the wrong instant for every
// Iceberg reader's partition pruning.
func parseDeltaTimestamp(s string, zoned bool) (time.Time, error) {
	if strings.HasSuffix(s, "Z") && strings.Contains(s, "T") {
		return time.Parse(time.RFC3339Nano, s)
	}
	if zoned {
		return time.Time{}, untranslatable("a timestamp partition value without a zone (%q) is in the writer's session time zone, which the Delta log does not record; write it in UTC ISO 8601 (…T…Z)", s)
	}
	return time.Parse("2006-01-02 15:04:05.999999", s)
}

// commit applies the file changes as one Iceberg snapshot, after the other
// updates of the request (schema, properties, bookkeeping) in the same
// Iceberg commit, under the requirements update checked the request on:
// the Delta version is ratified exactly when the rows land.
func (dc *dataCommit) commit(ctx context.Context, c *icebergClient, ref Ref, l *loaded, ups []table.Update) (*loaded, error) {
	cat := &capture{c: c, ref: ref, reqs: commitRequirements(l.Metadata), first: ups}
	ident := append(append([]string{}, ref.Namespace...), ref.Name)
	tx := table.New(ident, l.Metadata, l.MetadataLocation, dc.fsF, cat).NewTransaction()
	props := iceberg.Properties{"delta.version": strconv.FormatInt(dc.version, 10)}
	var err error
	if len(dc.removes) == 0 {
		err = tx.AddDataFiles(ctx, dc.adds, props, table.WithoutAutoNameMapping())
	} else {
		err = tx.ReplaceDataFilesWithDataFiles(ctx, dc.removes, dc.adds, props, table.WithoutAutoNameMapping())
	}
	if err != nil {
		return nil, invalidParam("the commit's files do not apply to the table: %v", err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		if cat.err != nil {
			return nil, cat.err
		}
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "committing the data files: %v", err)
	}
	return cat.out, nil
}

// capture is the iceberg-go catalog a data commit's transaction commits
// through: it sends the request's own updates first, then the snapshot,
// as one Iceberg updateTable on the catalog's pipeline.
type capture struct {
	c     *icebergClient
	ref   Ref
	reqs  []table.Requirement
	first []table.Update
	out   *loaded
	err   error
}

func (p *capture) LoadTable(context.Context, table.Identifier) (*table.Table, error) {
	return nil, errors.New("delta: a data commit does not reload the table")
}

func (p *capture) CommitTable(ctx context.Context, _ table.Identifier, _ []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	all := append(append([]table.Update{}, p.first...), ups...)
	p.out, p.err = p.c.commit(ctx, p.ref.Namespace, p.ref.Name, p.reqs, all, UpdateRequirementConflict)
	if p.err != nil {
		return nil, "", p.err
	}
	return p.out.Metadata, p.out.MetadataLocation, nil
}

// nameMapping is the Iceberg name mapping of s: Parquet files written
// without field ids (Delta without column mapping) are read by column name.
func nameMapping(s *iceberg.Schema) (string, error) {
	b, err := json.Marshal(s.NameMapping())
	return string(b), err
}

// checkColumnIDs refuses a data commit whose Parquet field ids would not
// be the Iceberg field ids: under Delta column mapping the files carry
// delta.columnMapping.id as their field ids, and Iceberg readers match
// columns by id.
func checkColumnIDs(cols schema.StructType, s *iceberg.Schema, props map[string]string) error {
	if mode := props["delta.columnMapping.mode"]; mode != "name" && mode != "id" {
		return nil
	}
	return sameIDs(cols.Fields, s.Fields(), "")
}

func sameIDs(cols []schema.StructField, fields []iceberg.NestedField, path string) error {
	for _, c := range cols {
		f, ok := findField(fields, c.Name)
		id, _ := c.Metadata[schema.MetaColumnMappingID].(int64)
		if !ok || int64(f.ID) != id {
			return untranslatable("column %s%s has Delta column mapping id %d and Iceberg field id %d: Iceberg readers would "+
				"not find its data; lakegate translates data commits of column-mapped tables only when the ids agree", path, c.Name, id, f.ID)
		}
		switch t := c.Type.(type) {
		case schema.StructType:
			st, _ := f.Type.(*iceberg.StructType)
			if st == nil {
				return untranslatable("column %s%s: struct in Delta, not in Iceberg", path, c.Name)
			}
			if err := sameIDs(t.Fields, st.FieldList, path+c.Name+"."); err != nil {
				return err
			}
		case schema.ArrayType, schema.MapType:
			return untranslatable("column %s%s: data commits of column-mapped tables with array or map columns are not translated", path, c.Name)
		}
	}
	return nil
}

func findField(fields []iceberg.NestedField, name string) (iceberg.NestedField, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

func hasDataCommit(req *UpdateTableRequest) bool {
	for i := range req.Updates {
		if isDataCommit(&req.Updates[i]) {
			return true
		}
	}
	return false
}

// changesFiles reports a commit that adds or removes files (one that
// changes only metadata commits as any other update does).
func (dc *dataCommit) changesFiles() bool { return len(dc.adds)+len(dc.removes) > 0 }

// dataUpdates are what a data commit adds to the request's own updates:
// the name mapping of next, the schema the table has after them, so files
// written without field ids are read by name. It refuses a column-mapped
// table whose ids differ from Iceberg's.
func dataUpdates(m table.Metadata, next *iceberg.Schema, by map[string]*Update) ([]table.Update, error) {
	props := maps.Clone(map[string]string(m.Properties()))
	if u := by[ActSetProperties]; u != nil {
		maps.Copy(props, u.properties)
	}
	var cols schema.StructType
	if u := by[ActSetColumns]; u != nil {
		cols = u.columns
	} else {
		var err error
		if cols, err = toDelta(next, props); err != nil {
			return nil, Errorf(http.StatusBadRequest, UnsupportedTableFormat, "the table's Iceberg schema has no Delta equivalent: %v", err)
		}
	}
	if err := checkColumnIDs(cols, next, props); err != nil {
		return nil, err
	}
	nm, err := nameMapping(next)
	if err != nil {
		return nil, err
	}
	return []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{table.DefaultNameMappingKey: nm})}, nil
}
