package schema

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// FromDelta converts a Delta schema to a new Iceberg schema with fresh field
// ids assigned depth-first from 1 (iceberg.AssignFreshSchemaIDs), as a table
// being created has no ids yet; any delta.columnMapping.id in the input is
// ignored for that reason. Metadata "comment" becomes the Iceberg doc.
func FromDelta(st StructType) (*iceberg.Schema, error) {
	fields, err := structFromDelta(st, "")
	if err != nil {
		return nil, err
	}
	// -1 is iceberg-go's "unassigned" id, so the placeholder schema passes
	// its duplicate-id check before AssignFreshSchemaIDs replaces them.
	return iceberg.AssignFreshSchemaIDs(iceberg.NewSchema(0, fields...), nil)
}

func structFromDelta(st StructType, path string) ([]iceberg.NestedField, error) {
	out := make([]iceberg.NestedField, 0, len(st.Fields))
	seen := make(map[string]string, len(st.Fields))
	for i, f := range st.Fields {
		if f.Name == "" {
			return nil, fmt.Errorf("schema: %s: field %d: empty name", where(path), i)
		}
		fpath := join(path, f.Name)
		if prev, dup := seen[strings.ToLower(f.Name)]; dup {
			return nil, fmt.Errorf("schema: column %q: duplicate name (conflicts with %q)", fpath, prev)
		}
		seen[strings.ToLower(f.Name)] = f.Name
		typ, err := typeFromDelta(f.Type, fpath)
		if err != nil {
			return nil, err
		}
		doc, _ := f.Metadata[MetaComment].(string)
		out = append(out, iceberg.NestedField{ID: -1, Name: f.Name, Type: typ, Required: !f.Nullable, Doc: doc})
	}
	return out, nil
}

func typeFromDelta(t DataType, path string) (iceberg.Type, error) {
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case String:
			return iceberg.PrimitiveTypes.String, nil
		case Long:
			return iceberg.PrimitiveTypes.Int64, nil
		case Integer, Short, Byte:
			// Iceberg's narrowest integer is int; widening is lossless.
			return iceberg.PrimitiveTypes.Int32, nil
		case Float:
			return iceberg.PrimitiveTypes.Float32, nil
		case Double:
			return iceberg.PrimitiveTypes.Float64, nil
		case Boolean:
			return iceberg.PrimitiveTypes.Bool, nil
		case Binary:
			return iceberg.PrimitiveTypes.Binary, nil
		case Date:
			return iceberg.PrimitiveTypes.Date, nil
		case Timestamp:
			return iceberg.PrimitiveTypes.TimestampTz, nil
		case TimestampNtz:
			return iceberg.PrimitiveTypes.Timestamp, nil
		case Void, Variant:
			return nil, fmt.Errorf("schema: column %q: Delta type %q is not supported for Iceberg tables", path, string(t))
		}
		return nil, fmt.Errorf("schema: column %q: unknown type %q", path, string(t))
	case DecimalType:
		if err := t.validate(); err != nil {
			return nil, fmt.Errorf("schema: column %q: %w", path, err)
		}
		return iceberg.DecimalTypeOf(t.Precision, t.Scale), nil
	case StructType:
		fields, err := structFromDelta(t, path)
		if err != nil {
			return nil, err
		}
		return &iceberg.StructType{FieldList: fields}, nil
	case ArrayType:
		elem, err := typeFromDelta(t.ElementType, path+".element")
		if err != nil {
			return nil, err
		}
		return &iceberg.ListType{ElementID: -1, Element: elem, ElementRequired: !t.ContainsNull}, nil
	case MapType:
		key, err := typeFromDelta(t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		val, err := typeFromDelta(t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		return &iceberg.MapType{KeyID: -1, KeyType: key, ValueID: -1, ValueType: val, ValueRequired: !t.ValueContainsNull}, nil
	case nil:
		return nil, fmt.Errorf("schema: column %q: missing type", path)
	}
	return nil, fmt.Errorf("schema: column %q: unknown type %T", path, t)
}
