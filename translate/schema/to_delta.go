package schema

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// Column mapping metadata keys (Delta protocol, "Column Mapping").
const (
	MetaColumnMappingID           = "delta.columnMapping.id"
	MetaColumnMappingPhysicalName = "delta.columnMapping.physicalName"
	MetaComment                   = "comment"
)

// ToDeltaOptions controls what ToDelta may emit.
type ToDeltaOptions struct {
	// AllowTimestampNtz permits Iceberg timestamp (without zone) columns,
	// emitted as timestamp_ntz. Only set it when the reader is known to
	// support the timestampNtz reader feature (e.g. the Delta Sharing
	// "delta" response format); mapping them to "timestamp" instead would
	// silently shift values by the reader's zone.
	AllowTimestampNtz bool
	// ColumnMappingID adds delta.columnMapping.id (the Iceberg field id) and
	// delta.columnMapping.physicalName (the field name) to every struct
	// field, nested ones included, as id-mode column mapping requires.
	ColumnMappingID bool
	// Hints are the narrow integer types the UC Delta API recorded
	// (HintsProperty): an Iceberg int field with a short or byte hint is
	// shown as that type, as the Delta client created it.
	Hints ColumnHints
}

// ToDelta converts an Iceberg schema to a Delta schema, following Delta's own
// Iceberg converter. Types Delta cannot represent are errors naming the
// column, never a lossy guess.
func ToDelta(s *iceberg.Schema, opts ToDeltaOptions) (StructType, error) {
	if s == nil {
		return StructType{}, fmt.Errorf("schema: nil Iceberg schema")
	}
	return structToDelta(s.Fields(), "", opts)
}

// ToDeltaJSON returns the Delta schema as the JSON string that
// metaData.schemaString carries.
func ToDeltaJSON(s *iceberg.Schema, opts ToDeltaOptions) (string, error) {
	st, err := ToDelta(s, opts)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// MaxColumnID is the value for delta.columnMapping.maxColumnId. Iceberg ids
// include list element and map key/value ids, which Delta also counts, so the
// highest id anywhere in the schema is the right bound.
func MaxColumnID(s *iceberg.Schema) int {
	if s == nil {
		return 0
	}
	return s.HighestFieldID()
}

func structToDelta(fields []iceberg.NestedField, path string, opts ToDeltaOptions) (StructType, error) {
	out := StructType{Fields: make([]StructField, 0, len(fields))}
	// Iceberg allows names differing only in case; Delta does not.
	seen := make(map[string]string, len(fields))
	for _, f := range fields {
		fpath := join(path, f.Name)
		if prev, dup := seen[strings.ToLower(f.Name)]; dup {
			return StructType{}, fmt.Errorf("schema: column %q: name differs from %q only in case, which Delta does not allow", fpath, prev)
		}
		seen[strings.ToLower(f.Name)] = f.Name
		typ, err := typeToDelta(f.Type, f.ID, fpath, opts)
		if err != nil {
			return StructType{}, err
		}
		md := map[string]any{}
		if f.Doc != "" {
			md[MetaComment] = f.Doc
		}
		if opts.ColumnMappingID {
			md[MetaColumnMappingID] = int64(f.ID)
			md[MetaColumnMappingPhysicalName] = f.Name
		}
		out.Fields = append(out.Fields, StructField{Name: f.Name, Type: typ, Nullable: !f.Required, Metadata: md})
	}
	return out, nil
}

func typeToDelta(t iceberg.Type, id int, path string, opts ToDeltaOptions) (DataType, error) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return Boolean, nil
	case iceberg.Int32Type:
		if narrow, ok := opts.Hints.Narrow(id); ok {
			return narrow, nil
		}
		return Integer, nil
	case iceberg.Int64Type:
		return Long, nil
	case iceberg.Float32Type:
		return Float, nil
	case iceberg.Float64Type:
		return Double, nil
	case iceberg.StringType:
		return String, nil
	case iceberg.UUIDType:
		// Delta has no uuid; Delta's converter reads it as string.
		return String, nil
	case iceberg.BinaryType:
		return Binary, nil
	case iceberg.FixedType:
		return Binary, nil
	case iceberg.DateType:
		return Date, nil
	case iceberg.DecimalType:
		return DecimalType{Precision: t.Precision(), Scale: t.Scale()}, nil
	case iceberg.TimestampTzType:
		return Timestamp, nil
	case iceberg.TimestampType:
		if !opts.AllowTimestampNtz {
			return nil, fmt.Errorf("schema: column %q: Iceberg timestamp (without time zone) needs Delta timestamp_ntz, which this response format does not allow", path)
		}
		return TimestampNtz, nil
	case iceberg.TimeType:
		return nil, fmt.Errorf("schema: column %q: Iceberg time has no Delta equivalent", path)
	case *iceberg.StructType:
		return structToDelta(t.FieldList, path, opts)
	case *iceberg.ListType:
		elem, err := typeToDelta(t.Element, t.ElementID, path+".element", opts)
		if err != nil {
			return nil, err
		}
		return ArrayType{ElementType: elem, ContainsNull: !t.ElementRequired}, nil
	case *iceberg.MapType:
		key, err := typeToDelta(t.KeyType, t.KeyID, path+".key", opts)
		if err != nil {
			return nil, err
		}
		val, err := typeToDelta(t.ValueType, t.ValueID, path+".value", opts)
		if err != nil {
			return nil, err
		}
		return MapType{KeyType: key, ValueType: val, ValueContainsNull: !t.ValueRequired}, nil
	default:
		// variant, geometry, geography, unknown, nanosecond timestamps, ...:
		// Delta's converter has no mapping for them either.
		name := "<nil>"
		if t != nil {
			name = t.String()
		}
		return nil, fmt.Errorf("schema: column %q: Iceberg type %s is not supported in Delta", path, name)
	}
}
