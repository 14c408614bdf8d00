package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/internal/jsonenc"
)

// Encoder writes file lines: the bytes FileLine, Add and Remove return,
// appended to the caller's buffer. It keeps what the files of one answer
// share from one file to the next: the stats layout of the schema, the
// partition columns of each spec, scratch space. A line then costs no
// reflection and no map building. Keys come out as encoding/json writes
// them (struct fields in order, map keys sorted), so the lines are
// byte-identical to marshaling the protocol's objects.
//
// The zero value is ready to use. An Encoder is not safe for concurrent
// use; it holds on to the schemas and specs it was given.
type Encoder struct {
	schema  *iceberg.Schema
	stats   []statsNode // schema's stats layout
	specs   []partitionPlan
	scratch []byte // the stats object, before it is quoted into the line
	path    []byte // the file path being hashed into its id
	values  []partitionText
}

// AppendFileLine appends the query endpoint's `file` line (FileLine).
// On error dst comes back as it was given.
func (e *Encoder) AppendFileLine(dst []byte, f Format, file File, withVersion bool) ([]byte, error) {
	return e.appendFile(dst, f, file, kindFile, withVersion)
}

// AppendAdd appends a changes-endpoint `add` line (Add).
func (e *Encoder) AppendAdd(dst []byte, f Format, file File) ([]byte, error) {
	return e.appendFile(dst, f, file, kindAdd, true)
}

// AppendRemove appends a changes-endpoint `remove` line (Remove).
func (e *Encoder) AppendRemove(dst []byte, f Format, file File) ([]byte, error) {
	return e.appendFile(dst, f, file, kindRemove, true)
}

// appendFile writes the parquet-format `file`, `add` or `remove` object,
// or the delta-format `file` wrapping a Delta add or remove, in the field
// order of the protocol's structs.
func (e *Encoder) appendFile(dst []byte, f Format, file File, kind fileKind, withVersion bool) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return dst, err
	}
	if file.Data == nil && file.Log == nil {
		return dst, fmt.Errorf("actions: file %q has no data file", file.URL)
	}
	path, size := file.path(), file.size()
	start := len(dst)
	fail := func(err error) ([]byte, error) { return dst[:start], err }
	var err error
	if f == Parquet {
		dst = append(dst, `{"`...)
		dst = append(dst, parquetKey(kind)...)
		dst = append(dst, `":{"url":`...)
		dst = jsonenc.AppendString(dst, file.URL)
		dst = append(dst, `,"id":"`...)
		dst = e.appendFileID(dst, path)
		dst = append(dst, `","partitionValues":`...)
		if dst, err = e.appendFilePartitionValues(dst, file); err != nil {
			return fail(err)
		}
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, size, 10)
		if kind != kindRemove {
			if dst, err = e.appendFileStats(dst, file); err != nil {
				return fail(err)
			}
		}
		dst = appendVersion(dst, file, withVersion)
		return append(dst, "}}"...), nil
	}
	dst = append(dst, `{"file":{"id":"`...)
	dst = e.appendFileID(dst, path)
	dst = append(dst, '"')
	dst = appendVersion(dst, file, withVersion)
	if kind == kindRemove {
		dst = append(dst, `,"deltaSingleAction":{"remove":{"path":`...)
		dst = jsonenc.AppendString(dst, file.URL)
		dst = append(dst, `,"deletionTimestamp":`...)
		dst = strconv.AppendInt(dst, file.Timestamp, 10)
		dst = append(dst, `,"dataChange":true,"extendedFileMetadata":true,"partitionValues":`...)
		if dst, err = e.appendFilePartitionValues(dst, file); err != nil {
			return fail(err)
		}
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, size, 10)
		return append(dst, "}}}}"...), nil
	}
	dst = append(dst, `,"deltaSingleAction":{"add":{"path":`...)
	dst = jsonenc.AppendString(dst, file.URL)
	dst = append(dst, `,"partitionValues":`...)
	if dst, err = e.appendFilePartitionValues(dst, file); err != nil {
		return fail(err)
	}
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, size, 10)
	dst = append(dst, `,"modificationTime":`...)
	dst = strconv.AppendInt(dst, file.modificationTime(), 10)
	dst = append(dst, `,"dataChange":true`...)
	if dst, err = e.appendFileStats(dst, file); err != nil {
		return fail(err)
	}
	return append(dst, "}}}}"...), nil
}

// appendVersion writes the optional version, timestamp and
// expirationTimestamp fields.
func appendVersion(dst []byte, file File, withVersion bool) []byte {
	if withVersion {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, file.Version, 10)
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, file.Timestamp, 10)
	}
	if file.Expiration > 0 {
		dst = append(dst, `,"expirationTimestamp":`...)
		dst = strconv.AppendInt(dst, file.Expiration, 10)
	}
	return dst
}

// appendFileID writes FileID(path), which needs no JSON escaping.
func (e *Encoder) appendFileID(dst []byte, path string) []byte {
	e.path = append(e.path[:0], path...) // hashed without a copy per file
	sum := sha256.Sum256(e.path)
	return hex.AppendEncode(dst, sum[:])
}

// appendQuotedStats writes key and the stats JSON as a JSON string.
func (e *Encoder) appendQuotedStats(dst []byte, key string, df iceberg.DataFile, s *iceberg.Schema) ([]byte, error) {
	var err error
	if e.scratch, err = e.appendStats(e.scratch[:0], df, s); err != nil {
		return dst, err
	}
	dst = append(dst, key...)
	return jsonenc.AppendString(dst, e.scratch), nil
}

// statsSection is one of the stats objects keyed by column.
type statsSection int

const (
	sectionMin statsSection = iota
	sectionMax
	sectionNulls
)

var statsSections = [...]struct {
	key     string
	section statsSection
}{{`,"minValues":`, sectionMin}, {`,"maxValues":`, sectionMax}, {`,"nullCount":`, sectionNulls}}

// appendStats writes the stats object Stats returns: numRecords, then the
// minValues, maxValues and nullCount objects that have any key.
func (e *Encoder) appendStats(dst []byte, df iceberg.DataFile, s *iceberg.Schema) ([]byte, error) {
	dst = append(dst, `{"numRecords":`...)
	dst = strconv.AppendInt(dst, df.Count(), 10)
	if s != nil {
		layout := e.statsLayout(s)
		m := metrics{
			lower: df.LowerBoundValues(),
			upper: df.UpperBoundValues(),
			nulls: df.NullValueCounts(),
			nans:  df.NaNValueCounts(),
		}
		for _, sec := range statsSections {
			mark := len(dst)
			dst = append(dst, sec.key...)
			var ok bool
			var err error
			if dst, ok, err = appendSection(dst, layout, &m, sec.section); err != nil {
				return dst, fmt.Errorf("actions: encoding stats of %s: %w", df.FilePath(), err)
			}
			if !ok {
				dst = dst[:mark]
			}
		}
	}
	return append(dst, '}'), nil
}

// metrics holds one file's Iceberg column metrics, keyed by field id.
type metrics struct {
	lower, upper map[int][]byte
	nulls, nans  map[int]int64
}

// statsNode is a column of the stats layout: a leaf or a struct of them.
// Fields inside lists and maps have none: Delta keeps no statistics for
// array elements or map entries.
type statsNode struct {
	name string
	key  string // the name as a JSON key, with its colon
	id   int
	typ  iceberg.Type
	// floatMax: a float column, whose max is published only when its NaN
	// count is known to be zero. Iceberg bounds exclude NaN, but Spark
	// orders NaN above every number, so a file holding NaN could be
	// skipped wrongly for a predicate like x > 1 if its NaN-free max were
	// published. (The min stays valid either way: NaN is never below it.)
	floatMax bool
	isStruct bool
	children []statsNode
}

// statsLayout is the schema's stats layout, built once per schema.
func (e *Encoder) statsLayout(s *iceberg.Schema) []statsNode {
	if e.schema != s {
		e.schema, e.stats = s, layoutOf(s.Fields())
	}
	return e.stats
}

// layoutOf orders a struct's columns as encoding/json orders map keys:
// by name, bytewise. Equal names (never in a valid schema) stay in field
// order, and appendSection gives the key to the last one with a value, as
// a map filled in field order would.
func layoutOf(fields []iceberg.NestedField) []statsNode {
	nodes := make([]statsNode, 0, len(fields))
	for _, f := range fields {
		n := statsNode{name: f.Name, key: string(jsonenc.AppendString(nil, f.Name)) + ":", id: f.ID, typ: f.Type}
		switch t := f.Type.(type) {
		case *iceberg.StructType:
			n.isStruct, n.children = true, layoutOf(t.FieldList)
		case *iceberg.ListType, *iceberg.MapType:
			continue
		case iceberg.Float32Type, iceberg.Float64Type:
			n.floatMax = true
		}
		nodes = append(nodes, n)
	}
	slices.SortStableFunc(nodes, func(a, b statsNode) int { return strings.Compare(a.name, b.name) })
	return nodes
}

// appendSection writes one stats object ({column: value}) of the columns
// that have a value; ok is false, and dst unchanged, when none has. A
// struct is a nested object, present when it has a key.
func appendSection(dst []byte, nodes []statsNode, m *metrics, sec statsSection) ([]byte, bool, error) {
	start := len(dst)
	dst = append(dst, '{')
	keys := 0
	for i := 0; i < len(nodes); {
		j := i + 1
		for j < len(nodes) && nodes[j].name == nodes[i].name {
			j++
		}
		for k := j - 1; k >= i; k-- {
			mark := len(dst)
			if keys > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, nodes[k].key...)
			var ok bool
			var err error
			if nodes[k].isStruct {
				dst, ok, err = appendSection(dst, nodes[k].children, m, sec)
			} else {
				dst, ok, err = appendLeaf(dst, &nodes[k], m, sec)
			}
			if err != nil {
				return dst[:start], false, err
			}
			if ok {
				keys++
				break
			}
			dst = dst[:mark]
		}
		i = j
	}
	if keys == 0 {
		return dst[:start], false, nil
	}
	return append(dst, '}'), true, nil
}

func appendLeaf(dst []byte, n *statsNode, m *metrics, sec statsSection) ([]byte, bool, error) {
	switch sec {
	case sectionNulls:
		c, ok := m.nulls[n.id]
		if !ok {
			return dst, false, nil
		}
		return strconv.AppendInt(dst, c, 10), true, nil
	case sectionMax:
		if c, ok := m.nans[n.id]; n.floatMax && (!ok || c != 0) {
			return dst, false, nil
		}
		return appendBound(dst, n.typ, m.upper[n.id], true)
	}
	return appendBound(dst, n.typ, m.lower[n.id], false)
}

// appendBound writes an Iceberg single-value serialized bound as the JSON
// value Delta expects for the column type; ok is false for types Delta
// keeps no bounds for (binary, fixed, uuid, ...) and for values that
// cannot be represented faithfully: NaN and infinities, and strings that
// are not UTF-8, whose replaced bytes could move a lower bound above real
// values.
func appendBound(dst []byte, t iceberg.Type, raw []byte, upper bool) ([]byte, bool, error) {
	if raw == nil {
		return dst, false, nil
	}
	// raw is the data file's own copy: decoding may keep it.
	lit, err := decodeBound(t, raw)
	if err != nil {
		return dst, false, nil
	}
	switch v := lit.(type) {
	case iceberg.BoolLiteral:
		return strconv.AppendBool(dst, bool(v)), true, nil
	case iceberg.Int32Literal:
		return strconv.AppendInt(dst, int64(v), 10), true, nil
	case iceberg.Int64Literal:
		return strconv.AppendInt(dst, int64(v), 10), true, nil
	case iceberg.Float32Literal:
		out, ok := jsonenc.AppendFloat(dst, float64(v), 32)
		return out, ok, nil
	case iceberg.Float64Literal:
		out, ok := jsonenc.AppendFloat(dst, float64(v), 64)
		return out, ok, nil
	case iceberg.StringLiteral:
		if !utf8.ValidString(string(v)) {
			return dst, false, nil
		}
		return jsonenc.AppendString(dst, string(v)), true, nil
	case iceberg.DateLiteral:
		// Digits and dashes only: nothing to escape.
		dst = append(dst, '"')
		dst = iceberg.Date(v).ToTime().AppendFormat(dst, dateLayout)
		return append(dst, '"'), true, nil
	case iceberg.TimestampLiteral:
		dst = append(dst, '"')
		dst = appendStatsTimestamp(dst, int64(v), upper, isTimestampTz(t))
		return append(dst, '"'), true, nil
	case iceberg.DecimalLiteral:
		// A JSON number, as Delta writes decimal stats, with every digit
		// kept where a float64 would round; checked as json.Number is.
		n := v.String()
		if !jsonenc.ValidNumber(n) {
			return dst, false, fmt.Errorf("json: invalid number literal %q", n)
		}
		return append(dst, n...), true, nil
	}
	return dst, false, nil
}

// partitionPlan is a spec's partition columns for one schema: what
// PartitionValues works out for every file, worked out once.
type partitionPlan struct {
	spec   iceberg.PartitionSpec
	schema *iceberg.Schema
	cols   []partitionColumn // in spec order, as values are read (and fail)
	order  []int             // cols indexes in key order, one per name
}

type partitionColumn struct {
	fieldID int
	name    string
	key     string // the name as a JSON key, with its colon
	typ     iceberg.Type
}

type partitionText struct {
	s    string
	null bool
}

// partitionPlan finds or builds the plan of spec under s.
func (e *Encoder) partitionPlan(spec iceberg.PartitionSpec, s *iceberg.Schema) *partitionPlan {
	if len(e.specs) > 0 && e.specs[0].schema != s {
		// Another schema (a changes answer's next version): the plans of
		// the last one are done with.
		clear(e.specs)
		e.specs = e.specs[:0]
	}
	for i := range e.specs {
		if p := &e.specs[i]; p.schema == s && p.spec.Equals(spec) {
			return p
		}
	}
	p := partitionPlan{spec: spec, schema: s}
	// The same columns, in the same order, as PartitionValues.
	for _, pc := range identityColumns(spec, s) {
		p.cols = append(p.cols, partitionColumn{fieldID: pc.fieldID, name: pc.col.Name,
			key: string(jsonenc.AppendString(nil, pc.col.Name)) + ":", typ: pc.col.Type})
	}
	// Sorted keys, and of a name given twice the later value, as a map
	// filled in spec order and marshaled.
	order := make([]int, len(p.cols))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(p.cols[a].name, p.cols[b].name) })
	for i, c := range order {
		if i+1 < len(order) && p.cols[order[i+1]].name == p.cols[c].name {
			continue
		}
		p.order = append(p.order, c)
	}
	e.specs = append(e.specs, p)
	return &e.specs[len(e.specs)-1]
}

// appendPartitionValues writes the partitionValues object of
// PartitionValues(df, spec, s).
func (e *Encoder) appendPartitionValues(dst []byte, df iceberg.DataFile, spec iceberg.PartitionSpec, s *iceberg.Schema) ([]byte, error) {
	if s == nil {
		return append(dst, "{}"...), nil
	}
	p := e.partitionPlan(spec, s)
	if len(p.cols) == 0 {
		return append(dst, "{}"...), nil
	}
	data := df.Partition()
	vals := e.values[:0]
	for _, c := range p.cols {
		v, null, err := partitionValue(data[c.fieldID], c.typ)
		if err != nil {
			return dst, fmt.Errorf("actions: partition column %q of %s: %w", c.name, df.FilePath(), err)
		}
		vals = append(vals, partitionText{v, null})
	}
	e.values = vals
	dst = append(dst, '{')
	for i, c := range p.order {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, p.cols[c].key...)
		if vals[c].null {
			dst = append(dst, "null"...)
		} else {
			dst = jsonenc.AppendString(dst, vals[c].s)
		}
	}
	return append(dst, '}'), nil
}
