package actions

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Partition value layouts (Delta "Partition Value Serialization"). The
// space-separated form is the one both the Delta Sharing and Delta specs
// list for timestamps; values are rendered in UTC.
const (
	dateLayout           = "2006-01-02"
	timestampLayout      = "2006-01-02 15:04:05"
	timestampMicroLayout = "2006-01-02 15:04:05.000000"
)

// PartitionValues returns the file's partitionValues: one entry per
// partition column (identity transform of a top-level column, the same rule
// schema.PartitionColumns uses), keyed by column name, which is also the
// physical name under id-mode column mapping. Null partition values are nil
// (JSON null).
func PartitionValues(df iceberg.DataFile, spec iceberg.PartitionSpec, s *iceberg.Schema) (map[string]*string, error) {
	out := map[string]*string{}
	if df == nil || s == nil {
		return out, nil
	}
	data := df.Partition()
	for _, pc := range identityColumns(spec, s) {
		col := pc.col
		v, err := partitionString(data[pc.fieldID], col.Type)
		if err != nil {
			return nil, fmt.Errorf("actions: partition column %q of %s: %w", col.Name, df.FilePath(), err)
		}
		out[col.Name] = v
	}
	return out, nil
}

// identityColumn is a partition field that is a partition column: its
// field id in the data file's partition tuple, and the column.
type identityColumn struct {
	fieldID int
	col     iceberg.NestedField
}

// identityColumns are spec's partition columns under s, in spec order:
// identity transforms of a top-level column (the rule
// schema.PartitionColumns uses).
func identityColumns(spec iceberg.PartitionSpec, s *iceberg.Schema) []identityColumn {
	top := make(map[int]iceberg.NestedField, s.NumFields())
	for _, f := range s.Fields() {
		top[f.ID] = f
	}
	var out []identityColumn
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok || len(pf.SourceIDs) != 1 {
			continue
		}
		if col, ok := top[pf.SourceIDs[0]]; ok {
			out = append(out, identityColumn{fieldID: pf.FieldID, col: col})
		}
	}
	return out
}

// partitionString serializes one partition value. Partition values come
// from manifests as iceberg-go's Go types (iceberg.Date, iceberg.Timestamp,
// iceberg.DecimalLiteral, ...), but raw Avro primitives and Literals appear
// too, so the column type decides and the value is read leniently.
func partitionString(v any, t iceberg.Type) (*string, error) {
	s, null, err := partitionValue(v, t)
	if err != nil || null {
		return nil, err
	}
	return &s, nil
}

// partitionValue is partitionString without the pointer: null says the
// value is null.
func partitionValue(v any, t iceberg.Type) (s string, null bool, err error) {
	if lit, ok := v.(iceberg.Literal); ok {
		v = lit.Any()
	}
	if v == nil {
		return "", true, nil
	}
	s, err = formatPartition(v, t)
	return s, false, err
}

func formatPartition(v any, t iceberg.Type) (string, error) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
	case iceberg.Int32Type, iceberg.Int64Type:
		if n, ok := asInt64(v); ok {
			return strconv.FormatInt(n, 10), nil
		}
	case iceberg.Float32Type:
		if f, ok := v.(float32); ok {
			return formatFloat(float64(f), 32), nil
		}
	case iceberg.Float64Type:
		if f, ok := asFloat64(v); ok {
			return formatFloat(f, 64), nil
		}
	case iceberg.StringType:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case iceberg.UUIDType:
		return formatUUID(v)
	case iceberg.BinaryType, iceberg.FixedType:
		return formatBinary(v)
	case iceberg.DateType:
		if d, ok := asDate(v); ok {
			return d.ToTime().Format(dateLayout), nil
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if ts, ok := asTimestamp(v); ok {
			return formatTimestamp(ts), nil
		}
	case iceberg.DecimalType:
		return formatDecimal(v, t.Scale())
	default:
		return "", fmt.Errorf("type %s cannot be a Delta partition value", t)
	}
	return "", fmt.Errorf("value %v (%T) does not match column type %s", v, v, t)
}

// formatTimestamp writes whole seconds bare and anything finer with all six
// fraction digits, the two shapes the Delta spec lists.
func formatTimestamp(ts iceberg.Timestamp) string {
	t := ts.ToTime()
	if t.Nanosecond() == 0 {
		return t.Format(timestampLayout)
	}
	return t.Format(timestampMicroLayout)
}

// formatFloat spells non-finite values the way Spark's string-to-double cast
// reads them (Java's Double.toString).
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

func formatUUID(v any) (string, error) {
	switch u := v.(type) {
	case uuid.UUID:
		return u.String(), nil
	case [16]byte:
		return uuid.UUID(u).String(), nil
	case []byte:
		id, err := uuid.FromBytes(u)
		if err != nil {
			return "", err
		}
		return id.String(), nil
	case string:
		return u, nil
	}
	return "", fmt.Errorf("value %v (%T) is not a uuid", v, v)
}

// formatBinary follows the Delta spec: the bytes themselves as the string
// (readers cast it back with the string's UTF-8 bytes). Bytes that are not
// valid UTF-8 cannot survive JSON encoding, so they are an error rather
// than a silently different value.
func formatBinary(v any) (string, error) {
	b, ok := v.([]byte)
	if !ok {
		return "", fmt.Errorf("value %v (%T) is not binary", v, v)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("binary value is not valid UTF-8 and has no lossless Delta partition value encoding")
	}
	return string(b), nil
}

func formatDecimal(v any, scale int) (string, error) {
	switch d := v.(type) {
	case iceberg.Decimal:
		return d.Val.ToString(int32(d.Scale)), nil
	case iceberg.DecimalLiteral:
		return d.Val.ToString(int32(d.Scale)), nil
	case string:
		return d, nil
	}
	if n, ok := asInt64(v); ok {
		// A raw unscaled integer; the column's scale places the point.
		return iceberg.Decimal{Val: decimal128.FromI64(n), Scale: scale}.String(), nil
	}
	return "", fmt.Errorf("value %v (%T) is not a decimal", v, v)
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func asFloat64(v any) (float64, bool) {
	switch f := v.(type) {
	case float64:
		return f, true
	case float32:
		// A float column promoted to double keeps old partition values.
		return float64(f), true
	}
	return 0, false
}

func asDate(v any) (iceberg.Date, bool) {
	switch d := v.(type) {
	case iceberg.Date:
		return d, true
	case time.Time:
		secs := d.Unix()
		days := secs / 86400
		if secs%86400 < 0 { // floor, not truncate, before the epoch
			days--
		}
		return iceberg.Date(days), true
	}
	if n, ok := asInt64(v); ok {
		return iceberg.Date(n), true
	}
	return 0, false
}

func asTimestamp(v any) (iceberg.Timestamp, bool) {
	switch ts := v.(type) {
	case iceberg.Timestamp:
		return ts, true
	case time.Time:
		return iceberg.Timestamp(ts.UnixMicro()), true
	}
	if n, ok := asInt64(v); ok {
		return iceberg.Timestamp(n), true
	}
	return 0, false
}
