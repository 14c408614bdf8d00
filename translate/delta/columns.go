package delta

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/translate/schema"
)

// ucField and ucStruct give UC column JSON a fixed key order.
type ucField struct {
	Name     string         `json:"name"`
	Type     any            `json:"type"`
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

type ucStruct struct {
	Type   string    `json:"type"`
	Fields []ucField `json:"fields"`
}

type ucArray struct {
	Type         string `json:"type"`
	ElementType  any    `json:"element-type"`
	ContainsNull bool   `json:"contains-null"`
}

type ucMap struct {
	Type              string `json:"type"`
	KeyType           any    `json:"key-type"`
	ValueType         any    `json:"value-type"`
	ValueContainsNull bool   `json:"value-contains-null"`
}

// MarshalColumns writes a Delta schema as UC Delta API columns
// (DeltaStructType: kebab-case keys for arrays and maps), the inverse of
// schema.ParseColumns.
func MarshalColumns(st schema.StructType) (json.RawMessage, error) {
	return json.Marshal(ucStructOf(st))
}

func ucStructOf(st schema.StructType) ucStruct {
	out := ucStruct{Type: "struct", Fields: make([]ucField, 0, len(st.Fields))}
	for _, f := range st.Fields {
		md := f.Metadata
		if md == nil {
			md = map[string]any{}
		}
		out.Fields = append(out.Fields, ucField{Name: f.Name, Type: ucTypeOf(f.Type), Nullable: f.Nullable, Metadata: md})
	}
	return out
}

func ucTypeOf(t schema.DataType) any {
	switch t := t.(type) {
	case schema.PrimitiveType:
		return string(t)
	case schema.DecimalType:
		return t.String()
	case schema.ArrayType:
		return ucArray{"array", ucTypeOf(t.ElementType), t.ContainsNull}
	case schema.MapType:
		return ucMap{"map", ucTypeOf(t.KeyType), ucTypeOf(t.ValueType), t.ValueContainsNull}
	case schema.StructType:
		return ucStructOf(t)
	}
	return nil
}

// columnExtra is what PropColumns records for one Iceberg field id.
type columnExtra struct {
	Type     string         `json:"type,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// extras collects, for a Delta schema and the Iceberg schema made from it
// (same shape), what Iceberg cannot hold itself; "" when there is nothing.
func extras(st schema.StructType, s *iceberg.Schema) (string, error) {
	out := map[string]columnExtra{}
	collectStruct(st, s.Fields(), out)
	if len(out) == 0 {
		return "", nil
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func collectStruct(st schema.StructType, fields []iceberg.NestedField, out map[string]columnExtra) {
	for i, f := range st.Fields {
		if i >= len(fields) {
			return
		}
		nf := fields[i]
		ex := columnExtra{}
		md := maps.Clone(f.Metadata)
		delete(md, schema.MetaComment)
		if len(md) > 0 {
			ex.Metadata = md
		}
		collectType(f.Type, nf.Type, nf.ID, ex, out)
	}
}

// collectType records a narrow integer type for id (and keeps ex, the
// field's metadata), then descends into nested types.
func collectType(dt schema.DataType, it iceberg.Type, id int, ex columnExtra, out map[string]columnExtra) {
	if p, ok := dt.(schema.PrimitiveType); ok && (p == schema.Short || p == schema.Byte) {
		ex.Type = string(p)
	}
	if ex.Type != "" || ex.Metadata != nil {
		out[strconv.Itoa(id)] = ex
	}
	switch dt := dt.(type) {
	case schema.StructType:
		if st, ok := it.(*iceberg.StructType); ok {
			collectStruct(dt, st.FieldList, out)
		}
	case schema.ArrayType:
		if lt, ok := it.(*iceberg.ListType); ok {
			collectType(dt.ElementType, lt.Element, lt.ElementID, columnExtra{}, out)
		}
	case schema.MapType:
		if mt, ok := it.(*iceberg.MapType); ok {
			collectType(dt.KeyType, mt.KeyType, mt.KeyID, columnExtra{}, out)
			collectType(dt.ValueType, mt.ValueType, mt.ValueID, columnExtra{}, out)
		}
	}
}

// toDelta is the Delta schema of an Iceberg schema, with what PropColumns
// recorded put back. A record whose field changed type on the Iceberg side
// (no longer an int) is ignored rather than trusted.
func toDelta(s *iceberg.Schema, props map[string]string) (schema.StructType, error) {
	st, err := schema.ToDelta(s, schema.ToDeltaOptions{AllowTimestampNtz: true})
	if err != nil {
		return st, err
	}
	var ex map[string]columnExtra
	if raw := props[PropColumns]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &ex) // a damaged record only loses the extras
	}
	if len(ex) > 0 {
		st = applyStruct(st, s.Fields(), ex)
	}
	return st, nil
}

func applyStruct(st schema.StructType, fields []iceberg.NestedField, ex map[string]columnExtra) schema.StructType {
	out := schema.StructType{Fields: make([]schema.StructField, len(st.Fields))}
	for i, f := range st.Fields {
		nf := fields[i]
		e := ex[strconv.Itoa(nf.ID)]
		if len(e.Metadata) > 0 {
			md := maps.Clone(f.Metadata)
			for k, v := range e.Metadata {
				if _, ok := md[k]; !ok {
					md[k] = v
				}
			}
			f.Metadata = md
		}
		f.Type = applyType(f.Type, nf.Type, nf.ID, ex)
		out.Fields[i] = f
	}
	return out
}

func applyType(dt schema.DataType, it iceberg.Type, id int, ex map[string]columnExtra) schema.DataType {
	if e := ex[strconv.Itoa(id)]; e.Type != "" && dt == schema.Integer {
		return schema.PrimitiveType(e.Type)
	}
	switch dt := dt.(type) {
	case schema.StructType:
		return applyStruct(dt, it.(*iceberg.StructType).FieldList, ex)
	case schema.ArrayType:
		lt := it.(*iceberg.ListType)
		dt.ElementType = applyType(dt.ElementType, lt.Element, lt.ElementID, ex)
		return dt
	case schema.MapType:
		mt := it.(*iceberg.MapType)
		dt.KeyType = applyType(dt.KeyType, mt.KeyType, mt.KeyID, ex)
		dt.ValueType = applyType(dt.ValueType, mt.ValueType, mt.ValueID, ex)
		return dt
	}
	return dt
}

// evolve builds the Iceberg schema for set-columns: columns matched by
// name (case-insensitively, at the same path) keep their field ids, so
// data written before stays readable; new columns get ids above the
// table's last column id. Changes Iceberg cannot make are errors.
func evolve(cur *iceberg.Schema, lastColumnID int, cols schema.StructType) (*iceberg.Schema, error) {
	fresh, err := schema.FromDelta(cols)
	if err != nil {
		return nil, err
	}
	next := lastColumnID
	fields, err := matchFields(fresh.Fields(), cur.Fields(), &next, "")
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, id := range cur.IdentifierFieldIDs {
		if _, ok := findID(fields, id); ok {
			ids = append(ids, id)
		}
	}
	return iceberg.NewSchemaWithIdentifiers(0, ids, fields...), nil
}

func matchFields(fresh, old []iceberg.NestedField, next *int, path string) ([]iceberg.NestedField, error) {
	byName := make(map[string]iceberg.NestedField, len(old))
	for _, f := range old {
		byName[strings.ToLower(f.Name)] = f
	}
	out := make([]iceberg.NestedField, 0, len(fresh))
	for _, f := range fresh {
		fpath := join(path, f.Name)
		o, ok := byName[strings.ToLower(f.Name)]
		if !ok {
			f.ID = newID(next)
			typ, err := renumber(f.Type, nil, next, fpath)
			if err != nil {
				return nil, err
			}
			f.Type = typ
			out = append(out, f)
			continue
		}
		if f.Required && !o.Required {
			return nil, fmt.Errorf("column %q: an existing nullable column cannot become non-nullable", fpath)
		}
		typ, err := renumber(f.Type, o.Type, next, fpath)
		if err != nil {
			return nil, err
		}
		f.ID, f.Type = o.ID, typ
		out = append(out, f)
	}
	return out, nil
}

func newID(next *int) int {
	*next++
	return *next
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// renumber gives a fresh type the ids of old (nil: a new column) and checks
// the change is one Iceberg allows.
func renumber(t, old iceberg.Type, next *int, path string) (iceberg.Type, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		var oldFields []iceberg.NestedField
		if old != nil {
			os, ok := old.(*iceberg.StructType)
			if !ok {
				return nil, changed(path, old, t)
			}
			oldFields = os.FieldList
		}
		fields, err := matchFields(t.FieldList, oldFields, next, path)
		return &iceberg.StructType{FieldList: fields}, err
	case *iceberg.ListType:
		var oe iceberg.Type
		id := 0
		if old != nil {
			ol, ok := old.(*iceberg.ListType)
			if !ok {
				return nil, changed(path, old, t)
			}
			oe, id = ol.Element, ol.ElementID
		}
		if id == 0 {
			id = newID(next)
		}
		elem, err := renumber(t.Element, oe, next, path+".element")
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: t.ElementRequired}, err
	case *iceberg.MapType:
		return renumberMap(t, old, next, path)
	}
	if old != nil && !promotable(old, t) {
		return nil, changed(path, old, t)
	}
	return t, nil
}

func renumberMap(t *iceberg.MapType, old iceberg.Type, next *int, path string) (iceberg.Type, error) {
	var ok, ov iceberg.Type
	kid, vid := 0, 0
	if old != nil {
		om, isMap := old.(*iceberg.MapType)
		if !isMap {
			return nil, changed(path, old, t)
		}
		ok, ov, kid, vid = om.KeyType, om.ValueType, om.KeyID, om.ValueID
	}
	if kid == 0 {
		kid = newID(next)
	}
	if vid == 0 {
		vid = newID(next)
	}
	key, err := renumber(t.KeyType, ok, next, path+".key")
	if err != nil {
		return nil, err
	}
	val, err := renumber(t.ValueType, ov, next, path+".value")
	return &iceberg.MapType{KeyID: kid, KeyType: key, ValueID: vid, ValueType: val, ValueRequired: t.ValueRequired}, err
}

// promotable is Iceberg's type promotion rule (same type, int→long,
// float→double, decimal precision widening at the same scale).
func promotable(from, to iceberg.Type) bool {
	if from.Equals(to) {
		return true
	}
	switch f := from.(type) {
	case iceberg.Int32Type:
		_, ok := to.(iceberg.Int64Type)
		return ok
	case iceberg.Float32Type:
		_, ok := to.(iceberg.Float64Type)
		return ok
	case iceberg.DecimalType:
		d, ok := to.(iceberg.DecimalType)
		return ok && d.Scale() == f.Scale() && d.Precision() >= f.Precision()
	}
	return false
}

func changed(path string, from, to iceberg.Type) error {
	return fmt.Errorf("column %q: Iceberg cannot change type %s to %s", path, from, to)
}

// findID looks a field id up anywhere in fields.
func findID(fields []iceberg.NestedField, id int) (iceberg.NestedField, bool) {
	s := iceberg.NewSchema(0, fields...)
	return s.FindFieldByID(id)
}
