package actions

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
)

// Stats layouts: Delta writes timestamp stats at millisecond precision as
// ISO-8601, with a zone for timestamp and without for timestamp_ntz.
const (
	statsTimestampLayout    = "2006-01-02T15:04:05.000Z07:00"
	statsTimestampNtzLayout = "2006-01-02T15:04:05.000"
)

// fileStats is Delta's per-file statistics struct.
type fileStats struct {
	NumRecords int64          `json:"numRecords"`
	MinValues  map[string]any `json:"minValues,omitempty"`
	MaxValues  map[string]any `json:"maxValues,omitempty"`
	NullCount  map[string]any `json:"nullCount,omitempty"`
}

// Stats returns the stats JSON string of a data file, built from its Iceberg
// column metrics. Columns are keyed by name (= physical name under id-mode
// column mapping) and nested structs become nested objects. A missing or
// undecodable metric only drops that one key: stats are an optional hint,
// and a missing key makes a reader keep the file, never skip it wrongly.
func Stats(df iceberg.DataFile, s *iceberg.Schema) (string, error) {
	if df == nil {
		return "", fmt.Errorf("actions: stats of a nil data file")
	}
	st := fileStats{NumRecords: df.Count()}
	if s != nil {
		src := metrics{
			lower: df.LowerBoundValues(),
			upper: df.UpperBoundValues(),
			nulls: df.NullValueCounts(),
			nans:  df.NaNValueCounts(),
		}
		st.MinValues, st.MaxValues, st.NullCount = src.collect(s.Fields())
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("actions: encoding stats of %s: %w", df.FilePath(), err)
	}
	return string(b), nil
}

// metrics holds one file's Iceberg column metrics, keyed by field id.
type metrics struct {
	lower, upper map[int][]byte
	nulls, nans  map[int]int64
}

// collect walks a struct's fields. Fields inside lists and maps are
// skipped: Delta keeps no statistics for array elements or map entries.
// Empty maps come back nil so the JSON omits them.
func (m metrics) collect(fields []iceberg.NestedField) (mins, maxs, nulls map[string]any) {
	mins, maxs, nulls = map[string]any{}, map[string]any{}, map[string]any{}
	for _, f := range fields {
		switch t := f.Type.(type) {
		case *iceberg.StructType:
			mn, mx, nc := m.collect(t.FieldList)
			putNonEmpty(mins, f.Name, mn)
			putNonEmpty(maxs, f.Name, mx)
			putNonEmpty(nulls, f.Name, nc)
		case *iceberg.ListType, *iceberg.MapType:
			continue
		default:
			m.leaf(f, mins, maxs, nulls)
		}
	}
	return nilIfEmpty(mins), nilIfEmpty(maxs), nilIfEmpty(nulls)
}

func (m metrics) leaf(f iceberg.NestedField, mins, maxs, nulls map[string]any) {
	if n, ok := m.nulls[f.ID]; ok {
		nulls[f.Name] = n
	}
	if v, ok := boundValue(f.Type, m.lower[f.ID], false); ok {
		mins[f.Name] = v
	}
	if !m.maxIsSafe(f) {
		return
	}
	if v, ok := boundValue(f.Type, m.upper[f.ID], true); ok {
		maxs[f.Name] = v
	}
}

// maxIsSafe guards float maxima. Iceberg bounds exclude NaN, but Spark
// orders NaN above every number, so a file holding NaN could be skipped
// wrongly for a predicate like x > 1 if its NaN-free max were published.
// Only a NaN count known to be zero makes the max safe. (The min stays
// valid either way: NaN is never below it.)
func (m metrics) maxIsSafe(f iceberg.NestedField) bool {
	switch f.Type.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		n, ok := m.nans[f.ID]
		return ok && n == 0
	}
	return true
}

func putNonEmpty(dst map[string]any, key string, v map[string]any) {
	if len(v) > 0 {
		dst[key] = v
	}
}

func nilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// boundValue decodes an Iceberg single-value serialized bound into the
// JSON value Delta expects for the column type; ok is false for types
// Delta keeps no bounds for (binary, fixed, uuid, ...) and for values
// that cannot be represented faithfully.
func boundValue(t iceberg.Type, raw []byte, upper bool) (any, bool) {
	if raw == nil {
		return nil, false
	}
	lit, err := decodeBound(t, slices.Clone(raw))
	if err != nil {
		return nil, false
	}
	switch v := lit.(type) {
	case iceberg.BoolLiteral:
		return bool(v), true
	case iceberg.Int32Literal:
		return int32(v), true
	case iceberg.Int64Literal:
		return int64(v), true
	case iceberg.Float32Literal:
		return float32(v), isFinite(float64(v))
	case iceberg.Float64Literal:
		return float64(v), isFinite(float64(v))
	case iceberg.StringLiteral:
		// Invalid UTF-8 would be replaced during JSON encoding, which could
		// move a lower bound above real values.
		return string(v), utf8.ValidString(string(v))
	case iceberg.DateLiteral:
		return iceberg.Date(v).ToTime().Format(dateLayout), true
	case iceberg.TimestampLiteral:
		return statsTimestamp(int64(v), upper, isTimestampTz(t)), true
	case iceberg.DecimalLiteral:
		// A JSON number, as Delta writes decimal stats; json.Number keeps
		// every digit where a float64 would round.
		return json.Number(v.String()), true
	}
	return nil, false
}

// decodeBound wraps iceberg.LiteralFromBytes, adding the width changes of
// Iceberg type promotion: files written before int→long, float→double or
// date→timestamp promotion keep their narrower bound encoding.
func decodeBound(t iceberg.Type, raw []byte) (iceberg.Literal, error) {
	if len(raw) == 4 {
		switch t.(type) {
		case iceberg.Int64Type:
			return iceberg.Int64Literal(int32(binary.LittleEndian.Uint32(raw))), nil
		case iceberg.Float64Type:
			return iceberg.Float64Literal(math.Float32frombits(binary.LittleEndian.Uint32(raw))), nil
		case iceberg.TimestampType, iceberg.TimestampTzType:
			days := int64(int32(binary.LittleEndian.Uint32(raw)))
			return iceberg.TimestampLiteral(days * 86_400_000_000), nil
		}
	}
	switch t.(type) {
	case iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
		// Delta has no min/max for binary, and uuid is a Delta string whose
		// bounds Iceberg does not keep in string form.
		return nil, fmt.Errorf("no Delta bounds for %s", t)
	}
	return iceberg.LiteralFromBytes(t, raw)
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func isTimestampTz(t iceberg.Type) bool {
	_, ok := t.(iceberg.TimestampTzType)
	return ok
}

// statsTimestamp renders a microsecond bound at Delta's millisecond
// precision. The lower bound rounds down and the upper bound rounds up so
// both stay true bounds; Delta itself truncates maxima down and has its
// readers compensate, which readers not doing so would get wrong.
func statsTimestamp(micros int64, upper, withZone bool) string {
	ms := micros / 1000
	if micros%1000 < 0 {
		ms-- // floor before the epoch
	}
	if upper && ms*1000 != micros {
		ms++
	}
	t := time.UnixMilli(ms).UTC()
	if withZone {
		return t.Format(statsTimestampLayout)
	}
	return t.Format(statsTimestampNtzLayout)
}
