package schema_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/translate/schema"
)

func one(t iceberg.Type, required bool) *iceberg.Schema {
	return iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: t, Required: required})
}

func TestToDeltaPrimitives(t *testing.T) {
	cases := []struct {
		ice  iceberg.Type
		want string
	}{
		{iceberg.PrimitiveTypes.Int64, `"long"`},
		{iceberg.PrimitiveTypes.Int32, `"integer"`},
		{iceberg.PrimitiveTypes.Float32, `"float"`},
		{iceberg.PrimitiveTypes.Float64, `"double"`},
		{iceberg.PrimitiveTypes.Bool, `"boolean"`},
		{iceberg.PrimitiveTypes.String, `"string"`},
		{iceberg.PrimitiveTypes.Date, `"date"`},
		{iceberg.PrimitiveTypes.Binary, `"binary"`},
		{iceberg.DecimalTypeOf(10, 2), `"decimal(10,2)"`},
		{iceberg.DecimalTypeOf(38, 0), `"decimal(38,0)"`},
		{iceberg.PrimitiveTypes.UUID, `"string"`},
		{iceberg.FixedTypeOf(16), `"binary"`},
		{iceberg.PrimitiveTypes.TimestampTz, `"timestamp"`},
	}
	for _, tc := range cases {
		t.Run(tc.ice.String(), func(t *testing.T) {
			for _, req := range []bool{true, false} {
				got, err := schema.ToDeltaJSON(one(tc.ice, req), schema.ToDeltaOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want := `{"type":"struct","fields":[{"name":"c","type":` + tc.want + `,"nullable":` +
					map[bool]string{true: "false", false: "true"}[req] + `,"metadata":{}}]}`
				if got != want {
					t.Fatalf("got  %s\nwant %s", got, want)
				}
			}
		})
	}
}

func TestToDeltaTimestampNtz(t *testing.T) {
	s := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "outer", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		}}})
	_, err := schema.ToDelta(s, schema.ToDeltaOptions{})
	if err == nil || !strings.Contains(err.Error(), `column "outer.ts"`) || !strings.Contains(err.Error(), "timestamp_ntz") {
		t.Fatalf("want error naming outer.ts, got %v", err)
	}
	got, err := schema.ToDelta(s, schema.ToDeltaOptions{AllowTimestampNtz: true})
	if err != nil {
		t.Fatal(err)
	}
	if typ := got.Fields[0].Type.(schema.StructType).Fields[0].Type; typ != schema.TimestampNtz {
		t.Fatalf("got %v", typ)
	}
}

func TestToDeltaUnsupported(t *testing.T) {
	cases := []struct {
		name string
		typ  iceberg.Type
		want string
	}{
		{"time", iceberg.PrimitiveTypes.Time, `column "c": Iceberg time has no Delta equivalent`},
		{"variant", iceberg.VariantType{}, `column "c": Iceberg type variant is not supported`},
		{"unknown", iceberg.PrimitiveTypes.Unknown, `column "c": Iceberg type unknown is not supported`},
		{"geometry", iceberg.GeometryType{}, `column "c": Iceberg type geometry`},
		{"timestamp_ns", iceberg.PrimitiveTypes.TimestampNs, `column "c": Iceberg type timestamp_ns`},
		{"list of time", &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Time}, `column "c.element": Iceberg time`},
		{"map to time", &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Time}, `column "c.value": Iceberg time`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schema.ToDelta(one(tc.typ, false), schema.ToDeltaOptions{AllowTimestampNtz: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestToDeltaCaseCollision(t *testing.T) {
	s := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "A", Type: iceberg.PrimitiveTypes.Int32})
	if _, err := schema.ToDelta(s, schema.ToDeltaOptions{}); err == nil || !strings.Contains(err.Error(), `column "A"`) {
		t.Fatalf("got %v", err)
	}
}

// nested is an Iceberg schema exercising struct/list/map nullability.
func nested() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true, Doc: "primary key"},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: 6, Name: "y", Type: iceberg.PrimitiveTypes.String, Doc: "why"},
		}}},
		iceberg.NestedField{ID: 3, Name: "l", Required: true, Type: &iceberg.ListType{ElementID: 7, ElementRequired: false,
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 8, Name: "z", Type: iceberg.DecimalTypeOf(9, 3), Required: true},
			}}}},
		iceberg.NestedField{ID: 4, Name: "m", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 10, ValueRequired: true, ValueType: &iceberg.ListType{ElementID: 11, Element: iceberg.PrimitiveTypes.Date, ElementRequired: true}}},
	)
}

func TestToDeltaNested(t *testing.T) {
	got, err := schema.ToDeltaJSON(nested(), schema.ToDeltaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[` +
		`{"name":"id","type":"long","nullable":false,"metadata":{"comment":"primary key"}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":false,"metadata":{}},{"name":"y","type":"string","nullable":true,"metadata":{"comment":"why"}}]},"nullable":true,"metadata":{}},` +
		`{"name":"l","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"z","type":"decimal(9,3)","nullable":false,"metadata":{}}]},"containsNull":true},"nullable":false,"metadata":{}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"date","containsNull":false},"valueContainsNull":false},"nullable":true,"metadata":{}}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestToDeltaColumnMapping(t *testing.T) {
	st, err := schema.ToDelta(nested(), schema.ToDeltaOptions{ColumnMappingID: true})
	if err != nil {
		t.Fatal(err)
	}
	check := func(f schema.StructField, id int64) {
		t.Helper()
		if f.Metadata[schema.MetaColumnMappingID] != id || f.Metadata[schema.MetaColumnMappingPhysicalName] != f.Name {
			t.Fatalf("field %s metadata %v, want id %d", f.Name, f.Metadata, id)
		}
	}
	check(st.Fields[0], 1)
	if st.Fields[0].Metadata[schema.MetaComment] != "primary key" {
		t.Fatalf("comment lost: %v", st.Fields[0].Metadata)
	}
	check(st.Fields[1], 2)
	check(st.Fields[1].Type.(schema.StructType).Fields[0], 5)
	check(st.Fields[1].Type.(schema.StructType).Fields[1], 6)
	check(st.Fields[2], 3)
	check(st.Fields[2].Type.(schema.ArrayType).ElementType.(schema.StructType).Fields[0], 8) // struct inside list
	check(st.Fields[3], 4)
	if got := schema.MaxColumnID(nested()); got != 11 {
		t.Fatalf("MaxColumnID = %d", got)
	}
	// The serialized form must parse back to exactly the same value.
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := schema.ParseStructType(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip changed value:\n%#v\n%#v", back, st)
	}
}

func TestFromDeltaPrimitives(t *testing.T) {
	cases := []struct {
		delta string
		want  iceberg.Type
	}{
		{`"string"`, iceberg.PrimitiveTypes.String},
		{`"long"`, iceberg.PrimitiveTypes.Int64},
		{`"integer"`, iceberg.PrimitiveTypes.Int32},
		{`"short"`, iceberg.PrimitiveTypes.Int32},
		{`"byte"`, iceberg.PrimitiveTypes.Int32},
		{`"float"`, iceberg.PrimitiveTypes.Float32},
		{`"double"`, iceberg.PrimitiveTypes.Float64},
		{`"boolean"`, iceberg.PrimitiveTypes.Bool},
		{`"binary"`, iceberg.PrimitiveTypes.Binary},
		{`"date"`, iceberg.PrimitiveTypes.Date},
		{`"timestamp"`, iceberg.PrimitiveTypes.TimestampTz},
		{`"timestamp_ntz"`, iceberg.PrimitiveTypes.Timestamp},
		{`"decimal(10,2)"`, iceberg.DecimalTypeOf(10, 2)},
		{`"decimal( 38 , 38 )"`, iceberg.DecimalTypeOf(38, 38)},
		{`"decimal(1,0)"`, iceberg.DecimalTypeOf(1, 0)},
		{`"decimal"`, iceberg.DecimalTypeOf(10, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.delta, func(t *testing.T) {
			for _, nullable := range []bool{true, false} {
				js := `{"type":"struct","fields":[{"name":"c","type":` + tc.delta + `,"nullable":` +
					map[bool]string{true: "true", false: "false"}[nullable] + `,"metadata":{"comment":"doc"}}]}`
				st, err := schema.ParseStructType([]byte(js))
				if err != nil {
					t.Fatal(err)
				}
				s, err := schema.FromDelta(st)
				if err != nil {
					t.Fatal(err)
				}
				want := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: tc.want, Required: !nullable, Doc: "doc"})
				if !s.Equals(want) {
					t.Fatalf("got %s want %s", s, want)
				}
			}
		})
	}
}

func TestFromDeltaNestedFreshIDs(t *testing.T) {
	// Ids in the input (column mapping) are ignored: a created table gets
	// fresh depth-first ids.
	st, err := schema.ToDelta(nested(), schema.ToDeltaOptions{ColumnMappingID: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := schema.FromDelta(st)
	if err != nil {
		t.Fatal(err)
	}
	want := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true, Doc: "primary key"},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32, Required: true},
			{ID: 4, Name: "y", Type: iceberg.PrimitiveTypes.String, Doc: "why"},
		}}},
		iceberg.NestedField{ID: 5, Name: "l", Required: true, Type: &iceberg.ListType{ElementID: 6, ElementRequired: false,
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: 7, Name: "z", Type: iceberg.DecimalTypeOf(9, 3), Required: true},
			}}}},
		iceberg.NestedField{ID: 8, Name: "m", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 10, ValueRequired: true, ValueType: &iceberg.ListType{ElementID: 11, Element: iceberg.PrimitiveTypes.Date, ElementRequired: true}}},
	)
	if !got.Equals(want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRoundTripIcebergDeltaIceberg checks types, nullability and docs survive
// Iceberg -> Delta JSON -> Iceberg, with ids re-assigned.
func TestRoundTripIcebergDeltaIceberg(t *testing.T) {
	in := nested()
	js, err := schema.ToDeltaJSON(in, schema.ToDeltaOptions{ColumnMappingID: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := schema.ParseStructType([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	out, err := schema.FromDelta(st)
	if err != nil {
		t.Fatal(err)
	}
	// Strip ids from both sides by re-assigning them the same way.
	inFresh, err := iceberg.AssignFreshSchemaIDs(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Equals(inFresh) {
		t.Fatalf("got\n%s\nwant\n%s", out, inFresh)
	}
	// And the Delta side is a fixed point.
	js2, err := schema.ToDeltaJSON(out, schema.ToDeltaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js1, _ := schema.ToDeltaJSON(in, schema.ToDeltaOptions{})
	if js1 != js2 {
		t.Fatalf("delta json changed:\n%s\n%s", js1, js2)
	}
}

func TestFromDeltaErrors(t *testing.T) {
	f := func(name string, typ schema.DataType) schema.StructField {
		return schema.StructField{Name: name, Type: typ, Nullable: true}
	}
	cases := []struct {
		name string
		st   schema.StructType
		want string
	}{
		{"unknown primitive", schema.StructType{Fields: []schema.StructField{f("a", schema.PrimitiveType("interval"))}}, `column "a": unknown type "interval"`},
		{"void", schema.StructType{Fields: []schema.StructField{f("a", schema.Void)}}, `column "a": Delta type "void" is not supported`},
		{"variant in array", schema.StructType{Fields: []schema.StructField{f("a", schema.ArrayType{ElementType: schema.Variant})}}, `column "a.element": Delta type "variant"`},
		{"bad decimal", schema.StructType{Fields: []schema.StructField{f("a", schema.DecimalType{Precision: 40, Scale: 2})}}, `column "a": invalid decimal(40,2)`},
		{"negative scale", schema.StructType{Fields: []schema.StructField{f("a", schema.DecimalType{Precision: 4, Scale: -1})}}, `column "a": invalid decimal(4,-1)`},
		{"empty name", schema.StructType{Fields: []schema.StructField{f("", schema.Long)}}, `schema: field 0: empty name`},
		{"nested empty name", schema.StructType{Fields: []schema.StructField{f("s", schema.StructType{Fields: []schema.StructField{f("", schema.Long)}})}}, `column "s": field 0: empty name`},
		{"duplicate", schema.StructType{Fields: []schema.StructField{f("a", schema.Long), f("A", schema.Long)}}, `column "A": duplicate name`},
		{"nested duplicate in map value", schema.StructType{Fields: []schema.StructField{f("m", schema.MapType{KeyType: schema.String,
			ValueType: schema.StructType{Fields: []schema.StructField{f("x", schema.Long), f("x", schema.Long)}}})}}, `column "m.value.x": duplicate name`},
		{"nil type", schema.StructType{Fields: []schema.StructField{f("a", nil)}}, `column "a": missing type`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schema.FromDelta(tc.st)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestParseStructTypeErrors(t *testing.T) {
	field := func(s string) string { return `{"type":"struct","fields":[` + s + `]}` }
	cases := []struct {
		name, in, want string
	}{
		{"malformed JSON", `{"type":"struct",`, "schema: malformed JSON"},
		{"trailing garbage", `{"type":"struct","fields":[]} x`, "schema: malformed JSON"},
		{"top-level array", `[]`, "schema: schema: must be a JSON object"},
		{"top-level null", `null`, "schema: schema: must be a JSON object"},
		{"top-level not struct", `{"type":"array"}`, `top-level type must be "struct"`},
		{"missing type", `{"fields":[]}`, `schema: schema: missing "type"`},
		{"type not string", `{"type":1,"fields":[]}`, `schema: schema: "type" must be a string`},
		{"missing fields", `{"type":"struct"}`, `schema: schema: struct missing "fields"`},
		{"fields not array", `{"type":"struct","fields":{}}`, `schema: schema: "fields" must be an array`},
		{"fields null", `{"type":"struct","fields":null}`, `schema: schema: "fields" must be an array`},
		{"field not object", field(`"a"`), "schema: schema: field 0: must be a JSON object"},
		{"missing name", field(`{"type":"long","nullable":true,"metadata":{}}`), `schema: schema: field 0: missing "name"`},
		{"name not string", field(`{"name":3,"type":"long","nullable":true,"metadata":{}}`), `field 0: "name" must be a string`},
		{"empty name", field(`{"name":"","type":"long","nullable":true,"metadata":{}}`), `field 0: empty name`},
		{"duplicate names", field(`{"name":"a","type":"long","nullable":true},{"name":"a","type":"long","nullable":true}`), `column "a": duplicate name (conflicts with "a")`},
		{"duplicate names case", field(`{"name":"a","type":"long","nullable":true},{"name":"A","type":"long","nullable":true}`), `column "A": duplicate name (conflicts with "a")`},
		{"missing field type", field(`{"name":"a","nullable":true}`), `column "a": missing "type"`},
		{"unknown type", field(`{"name":"a","type":"interval","nullable":true}`), `column "a": unknown type "interval"`},
		{"unknown object type", field(`{"name":"a","type":{"type":"long"},"nullable":true}`), `column "a": unknown type "long"`},
		{"type number", field(`{"name":"a","type":5,"nullable":true}`), `column "a": type must be a string or an object`},
		{"type array", field(`{"name":"a","type":["long"],"nullable":true}`), `column "a": type must be a string or an object`},
		{"type null", field(`{"name":"a","type":null,"nullable":true}`), `column "a": type must be a string or an object`},
		{"decimal(40,2)", field(`{"name":"a","type":"decimal(40,2)","nullable":true}`), `column "a": invalid decimal(40,2): precision must be between 1 and 38`},
		{"decimal(0,0)", field(`{"name":"a","type":"decimal(0,0)","nullable":true}`), `invalid decimal(0,0): precision`},
		{"decimal(2,3)", field(`{"name":"a","type":"decimal(2,3)","nullable":true}`), `column "a": invalid decimal(2,3): scale must be between 0 and precision`},
		{"decimal(2,-1)", field(`{"name":"a","type":"decimal(2,-1)","nullable":true}`), `invalid decimal(2,-1): scale`},
		{"decimal malformed", field(`{"name":"a","type":"decimal(10)","nullable":true}`), `column "a": malformed decimal "decimal(10)"`},
		{"missing nullable", field(`{"name":"a","type":"long"}`), `column "a": missing "nullable"`},
		{"nullable string", field(`{"name":"a","type":"long","nullable":"yes"}`), `column "a": "nullable" must be a boolean`},
		{"nullable null", field(`{"name":"a","type":"long","nullable":null}`), `column "a": "nullable" must be a boolean`},
		{"metadata array", field(`{"name":"a","type":"long","nullable":true,"metadata":[]}`), `column "a": metadata must be a JSON object`},
		{"array missing elementType", field(`{"name":"a","type":{"type":"array","containsNull":true},"nullable":true}`), `column "a": array missing "elementType"`},
		{"array missing containsNull", field(`{"name":"a","type":{"type":"array","elementType":"long"},"nullable":true}`), `column "a": missing "containsNull"`},
		{"array bad element", field(`{"name":"a","type":{"type":"array","elementType":"nope","containsNull":true},"nullable":true}`), `column "a.element": unknown type "nope"`},
		{"map missing keyType", field(`{"name":"m","type":{"type":"map","valueType":"long","valueContainsNull":true},"nullable":true}`), `column "m": map missing "keyType"`},
		{"map missing valueType", field(`{"name":"m","type":{"type":"map","keyType":"long","valueContainsNull":true},"nullable":true}`), `column "m": map missing "valueType"`},
		{"map bad value", field(`{"name":"m","type":{"type":"map","keyType":"string","valueType":"decimal(2,3)","valueContainsNull":true},"nullable":true}`), `column "m.value": invalid decimal(2,3)`},
		{"map valueContainsNull kind", field(`{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":1},"nullable":true}`), `column "m": "valueContainsNull" must be a boolean`},
		{"nested duplicate", field(`{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true},{"name":"X","type":"long","nullable":true}]},"nullable":true}`), `column "s.X": duplicate name`},
		{"nested missing name", field(`{"name":"s","type":{"type":"struct","fields":[{"type":"long","nullable":true}]},"nullable":true}`), `column "s": field 0: missing "name"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schema.ParseStructType([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

// protocolExample is the example schema from the Delta protocol's "Schema
// Serialization Format" section, plus the variant example's object form.
const protocolExample = `{
  "type" : "struct",
  "fields" : [ {"name" : "a", "type" : "integer", "nullable" : false, "metadata" : { }},
  {"name" : "b", "type" : {"type" : "struct", "fields" : [ {"name" : "d", "type" : "integer", "nullable" : false, "metadata" : { }} ]}, "nullable" : true, "metadata" : { }},
  {"name" : "c", "type" : {"type" : "array", "elementType" : "integer", "containsNull" : false}, "nullable" : true, "metadata" : { }},
  {"name" : "e", "type" : {"type" : "array", "elementType" : {"type" : "struct", "fields" : [ {"name" : "d", "type" : "integer", "nullable" : false, "metadata" : { }} ]}, "containsNull" : true}, "nullable" : true, "metadata" : { }},
  {"name" : "f", "type" : {"type" : "map", "keyType" : "string", "valueType" : "string", "valueContainsNull" : true}, "nullable" : true, "metadata" : { }},
  {"name" : "v", "type" : {"type" : "array", "elementType" : {"type" : "variant"}, "containsNull" : false}, "nullable" : false, "metadata" : { "k": [1, 2.5, {"n": -3}], "delta.columnMapping.id": 7 }}
  ]
}`

func TestParseStructTypeProtocolExample(t *testing.T) {
	st, err := schema.ParseStructType([]byte(protocolExample))
	if err != nil {
		t.Fatal(err)
	}
	want := schema.StructType{Fields: []schema.StructField{
		{Name: "a", Type: schema.Integer, Metadata: map[string]any{}},
		{Name: "b", Type: schema.StructType{Fields: []schema.StructField{{Name: "d", Type: schema.Integer, Metadata: map[string]any{}}}}, Nullable: true, Metadata: map[string]any{}},
		{Name: "c", Type: schema.ArrayType{ElementType: schema.Integer}, Nullable: true, Metadata: map[string]any{}},
		{Name: "e", Type: schema.ArrayType{ElementType: schema.StructType{Fields: []schema.StructField{{Name: "d", Type: schema.Integer, Metadata: map[string]any{}}}}, ContainsNull: true}, Nullable: true, Metadata: map[string]any{}},
		{Name: "f", Type: schema.MapType{KeyType: schema.String, ValueType: schema.String, ValueContainsNull: true}, Nullable: true, Metadata: map[string]any{}},
		{Name: "v", Type: schema.ArrayType{ElementType: schema.Variant}, Metadata: map[string]any{
			"k": []any{int64(1), json.Number("2.5"), map[string]any{"n": int64(-3)}}, "delta.columnMapping.id": int64(7)}},
	}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got  %#v\nwant %#v", st, want)
	}
	assertRoundTrip(t, st)
}

func TestParseColumnsUC(t *testing.T) {
	in := `{"type":"struct","fields":[
	  {"name":"id","type":"long","nullable":false,"metadata":{}},
	  {"name":"amount","type":"decimal(10,2)","nullable":true,"metadata":{}},
	  {"name":"tags","type":{"type":"array","element-type":"string","contains-null":true},"nullable":true,"metadata":{}},
	  {"name":"attrs","type":{"type":"map","key-type":"string","value-type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"value-contains-null":false},"nullable":true,"metadata":{"comment":"c"}}]}`
	st, err := schema.ParseColumns([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Fields[2].Type.(schema.ArrayType); !ok {
		t.Fatalf("tags: %#v", st.Fields[2].Type)
	}
	if m := st.Fields[3].Type.(schema.MapType); m.ValueContainsNull || m.KeyType != schema.String {
		t.Fatalf("attrs: %#v", m)
	}
	// The Delta (camelCase) spelling is not the UC one.
	if _, err := schema.ParseColumns([]byte(`{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true}]}`)); err == nil ||
		!strings.Contains(err.Error(), `array missing "element-type"`) {
		t.Fatalf("got %v", err)
	}
}

// What clients send is held to DeltaStructField: "metadata" is required
// and a name is not blank; the log's schema string (ParseStructType) is
// read as Spark reads it, which tolerates both.
func TestParseColumnsRequestRules(t *testing.T) {
	for _, tc := range []struct{ name, fields, want string }{
		{"no metadata", `{"name":"a","type":"long","nullable":true}`, `column "a": missing "metadata"`},
		{"null metadata", `{"name":"a","type":"long","nullable":true,"metadata":null}`, `column "a": missing "metadata"`},
		{"nested no metadata", `{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true}]},"nullable":true,"metadata":{}}`, `column "s.x": missing "metadata"`},
		{"blank name", `{"name":"   ","type":"long","nullable":true,"metadata":{}}`, `field 0: empty name`},
	} {
		in := []byte(`{"type":"struct","fields":[` + tc.fields + `]}`)
		_, err := schema.ParseColumns(in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseColumns: got %v, want %q", tc.name, err, tc.want)
		}
		log := strings.NewReplacer("element-type", "elementType").Replace(string(in))
		if _, err := schema.ParseStructType([]byte(log)); err != nil {
			t.Errorf("%s: ParseStructType refused what Spark reads: %v", tc.name, err)
		}
	}
}

func TestStructTypeEmbeddedUnmarshal(t *testing.T) {
	var req struct {
		Columns schema.StructType `json:"columns"`
	}
	if err := json.Unmarshal([]byte(`{"columns":{"type":"struct","fields":[{"name":"a","type":"bogus","nullable":true}]}}`), &req); err == nil ||
		!strings.Contains(err.Error(), `unknown type "bogus"`) {
		t.Fatalf("got %v", err)
	}
}

func TestPartitions(t *testing.T) {
	s := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "Region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "inner", Type: iceberg.PrimitiveTypes.String},
		}}})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "Region", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
		iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1003, Name: "inner", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1004, Name: "id", Transform: iceberg.IdentityTransform{}},
	)
	if got := schema.PartitionColumns(spec, s); !reflect.DeepEqual(got, []string{"Region", "id"}) {
		t.Fatalf("PartitionColumns = %q", got)
	}
	if got := schema.PartitionColumns(*iceberg.UnpartitionedSpec, s); len(got) != 0 {
		t.Fatalf("unpartitioned = %q", got)
	}

	created, err := schema.IdentitySpec(s, []string{"region", "id"})
	if err != nil {
		t.Fatal(err)
	}
	if created.NumFields() != 2 || created.Field(0).SourceID() != 2 || created.Field(0).FieldID != 1000 ||
		created.Field(1).SourceID() != 1 || created.Field(1).FieldID != 1001 {
		t.Fatalf("spec = %s", created.String())
	}
	if got := schema.PartitionColumns(created, s); !reflect.DeepEqual(got, []string{"Region", "id"}) {
		t.Fatalf("round trip = %q", got)
	}
	if empty, err := schema.IdentitySpec(s, nil); err != nil || empty.NumFields() != 0 {
		t.Fatalf("empty: %v %v", empty, err)
	}
	for _, bad := range [][]string{{"nope"}, {"s.inner"}} {
		if _, err := schema.IdentitySpec(s, bad); err == nil || !strings.Contains(err.Error(), `partition column "`+bad[0]+`": no such top-level column`) {
			t.Fatalf("%q: got %v", bad, err)
		}
	}
}

// assertRoundTrip checks marshal -> parse gives back exactly st and that
// marshalling is then a fixed point.
func assertRoundTrip(t testing.TB, st schema.StructType) {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	back, err := schema.ParseStructType(b)
	if err != nil {
		t.Fatalf("reparse %s: %v", b, err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip changed value:\n%#v\n%#v", back, st)
	}
	b2, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Fatalf("marshal not stable:\n%s\n%s", b, b2)
	}
}

func FuzzParseStructType(f *testing.F) {
	f.Add([]byte(protocolExample))
	f.Add([]byte(`{"type":"struct","fields":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := schema.ParseStructType(b)
		if err != nil {
			return
		}
		assertRoundTrip(t, st)
		// Conversion must not panic, and whatever it accepts must convert back.
		if s, err := schema.FromDelta(st); err == nil {
			if _, err := schema.ToDelta(s, schema.ToDeltaOptions{AllowTimestampNtz: true, ColumnMappingID: true}); err != nil {
				t.Fatalf("ToDelta(FromDelta(x)) failed: %v", err)
			}
		}
	})
}
