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

// extras collects, for a Delta schema and the Iceberg schema made from it
// (same shape), what Iceberg cannot hold itself (schema.ColumnHints as
// JSON); "" when there is nothing.
func extras(st schema.StructType, s *iceberg.Schema) (string, error) {
	out := schema.ColumnHints{}
	collectStruct(st, s.Fields(), out)
	if len(out) == 0 {
		return "", nil
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func collectStruct(st schema.StructType, fields []iceberg.NestedField, out schema.ColumnHints) {
	for i, f := range st.Fields {
		if i >= len(fields) {
			return
		}
		nf := fields[i]
		ex := schema.ColumnHint{}
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
func collectType(dt schema.DataType, it iceberg.Type, id int, ex schema.ColumnHint, out schema.ColumnHints) {
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
			collectType(dt.ElementType, lt.Element, lt.ElementID, schema.ColumnHint{}, out)
		}
	case schema.MapType:
		if mt, ok := it.(*iceberg.MapType); ok {
			collectType(dt.KeyType, mt.KeyType, mt.KeyID, schema.ColumnHint{}, out)
			collectType(dt.ValueType, mt.ValueType, mt.ValueID, schema.ColumnHint{}, out)
		}
	}
}

// toDelta is the Delta schema of an Iceberg schema, with what PropColumns
// recorded put back: narrow types (a record for a field that is no longer
// an int is ignored rather than trusted) and field metadata.
func toDelta(s *iceberg.Schema, props map[string]string) (schema.StructType, error) {
	hints := schema.ParseHints(props[PropColumns])
	st, err := schema.ToDelta(s, schema.ToDeltaOptions{AllowTimestampNtz: true, Hints: hints})
	if err != nil || len(hints) == 0 {
		return st, err
	}
	return applyMetadata(st, s.Fields(), hints), nil
}

func applyMetadata(st schema.StructType, fields []iceberg.NestedField, hints schema.ColumnHints) schema.StructType {
	out := schema.StructType{Fields: make([]schema.StructField, len(st.Fields))}
	for i, f := range st.Fields {
		nf := fields[i]
		if e := hints[strconv.Itoa(nf.ID)]; len(e.Metadata) > 0 {
			md := maps.Clone(f.Metadata)
			for k, v := range e.Metadata {
				if _, ok := md[k]; !ok {
					md[k] = v
				}
			}
			f.Metadata = md
		}
		f.Type = metadataInType(f.Type, nf.Type, hints)
		out.Fields[i] = f
	}
	return out
}

// metadataInType descends to the structs nested in arrays and maps.
func metadataInType(dt schema.DataType, it iceberg.Type, hints schema.ColumnHints) schema.DataType {
	switch dt := dt.(type) {
	case schema.StructType:
		return applyMetadata(dt, it.(*iceberg.StructType).FieldList, hints)
	case schema.ArrayType:
		dt.ElementType = metadataInType(dt.ElementType, it.(*iceberg.ListType).Element, hints)
		return dt
	case schema.MapType:
		mt := it.(*iceberg.MapType)
		dt.KeyType = metadataInType(dt.KeyType, mt.KeyType, hints)
		dt.ValueType = metadataInType(dt.ValueType, mt.ValueType, hints)
		return dt
	}
	return dt
}

// evolver builds the Iceberg schema for set-columns. A column keeps its
// field id, so data written before stays readable, when it is the same
// column: the same Delta column-mapping id or physical name as recorded for
// that field (a rename), or else the same name (case-insensitively, at the
// same path). New columns get ids above the table's last column id.
// Changes Iceberg cannot make are errors.
type evolver struct {
	next     int
	hasData  bool
	freshKey map[int][]string // fresh field id → its column-mapping keys
	oldByKey map[string]int   // column-mapping key → existing field id
}

func evolve(cur *iceberg.Schema, lastColumnID int, cols schema.StructType, props map[string]string, hasData bool) (*iceberg.Schema, error) {
	fresh, err := schema.FromDelta(cols)
	if err != nil {
		return nil, err
	}
	e := &evolver{next: lastColumnID, hasData: hasData, freshKey: map[int][]string{}, oldByKey: map[string]int{}}
	e.keyFresh(cols, fresh.Fields())
	e.keyOld(props)
	fields, err := e.matchFields(fresh.Fields(), cur.Fields(), true, "")
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

// mappingKeys are the Delta column-mapping identities in field metadata.
func mappingKeys(md map[string]any) []string {
	var keys []string
	switch n := md[schema.MetaColumnMappingID].(type) {
	case float64:
		keys = append(keys, "id:"+strconv.FormatFloat(n, 'f', -1, 64))
	case json.Number:
		keys = append(keys, "id:"+n.String())
	case int64:
		keys = append(keys, "id:"+strconv.FormatInt(n, 10))
	}
	if p, ok := md[schema.MetaColumnMappingPhysicalName].(string); ok && p != "" {
		keys = append(keys, "physical:"+p)
	}
	return keys
}

// keyFresh walks the Delta columns beside the Iceberg fields made from them.
func (e *evolver) keyFresh(st schema.StructType, fields []iceberg.NestedField) {
	for i, f := range st.Fields {
		if i >= len(fields) {
			return
		}
		if k := mappingKeys(f.Metadata); len(k) > 0 {
			e.freshKey[fields[i].ID] = k
		}
		if inner, ok := f.Type.(schema.StructType); ok {
			if is, ok := fields[i].Type.(*iceberg.StructType); ok {
				e.keyFresh(inner, is.FieldList)
			}
		}
	}
}

// keyOld reads the column-mapping identities PropColumns recorded.
func (e *evolver) keyOld(props map[string]string) {
	for id, x := range schema.ParseHints(props[PropColumns]) {
		n, err := strconv.Atoi(id)
		if err != nil {
			continue
		}
		for _, k := range mappingKeys(x.Metadata) {
			e.oldByKey[k] = n
		}
	}
}

// match finds the existing field a fresh one is: by column-mapping identity
// first, then by name among fields nothing else claimed.
func (e *evolver) match(f iceberg.NestedField, old []iceberg.NestedField, claimed map[int]bool) (iceberg.NestedField, bool) {
	for _, k := range e.freshKey[f.ID] {
		if id, ok := e.oldByKey[k]; ok {
			for _, o := range old {
				if o.ID == id && !claimed[o.ID] {
					return o, true
				}
			}
		}
	}
	for _, o := range old {
		if strings.EqualFold(o.Name, f.Name) && !claimed[o.ID] && !e.claimedByKey(o.ID) {
			return o, true
		}
	}
	return iceberg.NestedField{}, false
}

// claimedByKey reports an existing field whose recorded identity some
// fresh field carries: that one is the rename target, not a name match.
func (e *evolver) claimedByKey(id int) bool {
	for _, keys := range e.freshKey {
		for _, k := range keys {
			if e.oldByKey[k] == id {
				return true
			}
		}
	}
	return false
}

// matchFields matches one struct level; parentExists is false inside a
// column that is itself new (its required children hold no old rows).
func (e *evolver) matchFields(fresh, old []iceberg.NestedField, parentExists bool, path string) ([]iceberg.NestedField, error) {
	claimed := map[int]bool{}
	// Identity matches first, so a renamed column is not taken by name.
	out := make([]iceberg.NestedField, len(fresh))
	for i, f := range fresh {
		fpath := join(path, f.Name)
		o, ok := e.match(f, old, claimed)
		if !ok {
			if f.Required && parentExists && e.hasData {
				return nil, fmt.Errorf("column %q: a non-nullable column cannot be added to a table with data (its existing rows have no value)", fpath)
			}
			f.ID = e.newID()
			typ, err := e.renumber(f.Type, nil, fpath)
			if err != nil {
				return nil, err
			}
			f.Type = typ
			out[i] = f
			continue
		}
		claimed[o.ID] = true
		if f.Required && !o.Required {
			return nil, fmt.Errorf("column %q: an existing nullable column cannot become non-nullable", fpath)
		}
		typ, err := e.renumber(f.Type, o.Type, fpath)
		if err != nil {
			return nil, err
		}
		f.ID, f.Type = o.ID, typ
		out[i] = f
	}
	return out, nil
}

func (e *evolver) newID() int {
	e.next++
	return e.next
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// renumber gives a fresh type the ids of old (nil: a new column) and checks
// the change is one Iceberg allows.
func (e *evolver) renumber(t, old iceberg.Type, path string) (iceberg.Type, error) {
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
		fields, err := e.matchFields(t.FieldList, oldFields, old != nil, path)
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
			id = e.newID()
		}
		elem, err := e.renumber(t.Element, oe, path+".element")
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: t.ElementRequired}, err
	case *iceberg.MapType:
		return e.renumberMap(t, old, path)
	}
	if old != nil && !promotable(old, t) {
		return nil, changed(path, old, t)
	}
	return t, nil
}

func (e *evolver) renumberMap(t *iceberg.MapType, old iceberg.Type, path string) (iceberg.Type, error) {
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
		kid = e.newID()
	}
	if vid == 0 {
		vid = e.newID()
	}
	key, err := e.renumber(t.KeyType, ok, path+".key")
	if err != nil {
		return nil, err
	}
	val, err := e.renumber(t.ValueType, ov, path+".value")
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
