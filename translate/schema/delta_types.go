// Package schema maps table schemas between Iceberg and Delta.
//
// It is shared by the Delta Sharing server and the Unity Catalog Delta API
// front door, so both speak exactly the same Delta types for one Iceberg table.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lakegate/lakegate/internal/strictjson"
)

// DataType is one Delta (Spark SQL JSON) data type. The set is closed: it is
// one of PrimitiveType, DecimalType, ArrayType, MapType or StructType, so a
// switch over it is exhaustive.
type DataType interface {
	json.Marshaler
	isDataType()
}

// PrimitiveType is a Delta primitive type other than decimal, named as it is
// on the wire ("long", "integer", "timestamp_ntz", ...).
type PrimitiveType string

// The Delta primitive type names. Void and Variant parse (they are legal in a
// Delta log) but have no Iceberg counterpart that FromDelta can create.
const (
	String       PrimitiveType = "string"
	Long         PrimitiveType = "long"
	Integer      PrimitiveType = "integer"
	Short        PrimitiveType = "short"
	Byte         PrimitiveType = "byte"
	Float        PrimitiveType = "float"
	Double       PrimitiveType = "double"
	Boolean      PrimitiveType = "boolean"
	Binary       PrimitiveType = "binary"
	Date         PrimitiveType = "date"
	Timestamp    PrimitiveType = "timestamp"
	TimestampNtz PrimitiveType = "timestamp_ntz"
	Void         PrimitiveType = "void"
	Variant      PrimitiveType = "variant"
)

var knownPrimitives = map[PrimitiveType]bool{
	String: true, Long: true, Integer: true, Short: true, Byte: true,
	Float: true, Double: true, Boolean: true, Binary: true, Date: true,
	Timestamp: true, TimestampNtz: true, Void: true, Variant: true,
}

// DecimalType is Delta's decimal(p,s); it is a separate type because Delta
// encodes the parameters inside the type string.
type DecimalType struct {
	Precision int
	Scale     int
}

// ArrayType is {"type":"array","elementType":...,"containsNull":...}.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

// MapType is {"type":"map","keyType":...,"valueType":...,"valueContainsNull":...}.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

// StructType is both a table schema and a nested struct column.
type StructType struct {
	Fields []StructField
}

// StructField is one (possibly nested) column. Metadata is never nil after
// ParseStructType or ToDelta, and it always marshals as an object, because
// Spark writes "metadata":{} even when there is nothing in it.
//
// Parsed metadata numbers are int64 when they are integers that fit, and
// json.Number otherwise, so that ToDelta output (which uses int64 for column
// mapping ids) compares equal to its own parsed serialization.
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata map[string]any
}

func (PrimitiveType) isDataType() {}
func (DecimalType) isDataType()   {}
func (ArrayType) isDataType()     {}
func (MapType) isDataType()       {}
func (StructType) isDataType()    {}

// String renders the type as Delta names it in a schema string.
func (d DecimalType) String() string { return fmt.Sprintf("decimal(%d,%d)", d.Precision, d.Scale) }

func (p PrimitiveType) MarshalJSON() ([]byte, error) { return json.Marshal(string(p)) }
func (d DecimalType) MarshalJSON() ([]byte, error)   { return json.Marshal(d.String()) }

func (a ArrayType) MarshalJSON() ([]byte, error) {
	if a.ElementType == nil {
		return nil, fmt.Errorf("schema: array has no elementType")
	}
	return json.Marshal(struct {
		Type         string   `json:"type"`
		ElementType  DataType `json:"elementType"`
		ContainsNull bool     `json:"containsNull"`
	}{"array", a.ElementType, a.ContainsNull})
}

func (m MapType) MarshalJSON() ([]byte, error) {
	if m.KeyType == nil || m.ValueType == nil {
		return nil, fmt.Errorf("schema: map has no keyType or valueType")
	}
	return json.Marshal(struct {
		Type              string   `json:"type"`
		KeyType           DataType `json:"keyType"`
		ValueType         DataType `json:"valueType"`
		ValueContainsNull bool     `json:"valueContainsNull"`
	}{"map", m.KeyType, m.ValueType, m.ValueContainsNull})
}

func (s StructType) MarshalJSON() ([]byte, error) {
	fields := s.Fields
	if fields == nil {
		// Spark rejects "fields":null; an empty struct is [].
		fields = []StructField{}
	}
	return json.Marshal(struct {
		Type   string        `json:"type"`
		Fields []StructField `json:"fields"`
	}{"struct", fields})
}

func (f StructField) MarshalJSON() ([]byte, error) {
	if f.Type == nil {
		return nil, fmt.Errorf("schema: field %q has no type", f.Name)
	}
	md := f.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return json.Marshal(struct {
		Name     string         `json:"name"`
		Type     DataType       `json:"type"`
		Nullable bool           `json:"nullable"`
		Metadata map[string]any `json:"metadata"`
	}{f.Name, f.Type, f.Nullable, md})
}

// UnmarshalJSON lets StructType be embedded in request/response structs; it
// applies the same strict rules as ParseStructType.
func (s *StructType) UnmarshalJSON(b []byte) error {
	st, err := ParseStructType(b)
	if err != nil {
		return err
	}
	*s = st
	return nil
}

// dialect names the keys of nested types. The Delta log uses camelCase; the
// UC Delta API (uc-delta-api.yaml) uses kebab-case for array and map keys but
// is otherwise the same shape, so one parser serves both.
type dialect struct {
	elementType, containsNull, keyType, valueType, valueContainsNull string
	// request is set for what clients send to create or change a table
	// (the UC Delta API): every field has "metadata" (DeltaStructField
	// requires it) and a name that is not blank, as UC requires. The log's
	// schema string is read as Spark reads it, which tolerates both.
	request bool
	// client is set for a schema a client sent (checkKeys): a case
	// variant of a key is refused, not ignored. What lakegate stored or a
	// Delta log holds is read as it is.
	client bool
}

var (
	deltaDialect = dialect{"elementType", "containsNull", "keyType", "valueType", "valueContainsNull", false, false}
	ucDialect    = dialect{"element-type", "contains-null", "key-type", "value-type", "value-contains-null", true, false}
)

// ParseClientStructType is ParseStructType for a schema a client sent
// (the UC catalogs API's type_json): a key that is only a case variant of
// one the parser reads ("Type", "Nullable") is an error, since a decoder
// that folds case (Go's) would read it as that key.
func ParseClientStructType(b []byte) (StructType, error) {
	d := deltaDialect
	d.client = true
	return parseClient(b, d)
}

// ParseClientColumns is ParseColumns for columns a client sent, refusing
// case variants of keys as ParseClientStructType does.
func ParseClientColumns(b []byte) (StructType, error) {
	d := ucDialect
	d.client = true
	return parseClient(b, d)
}

// parseClient refuses repeated keys (a JSON text inside a string, as
// type_json is, was not checked with its request) before parsing.
func parseClient(b []byte, d dialect) (StructType, error) {
	if err := strictjson.Check(b, nil); err != nil {
		return StructType{}, fmt.Errorf("schema: %v", err)
	}
	return parseTop(b, d)
}

// checkKeys refuses, in a client's schema, a key that is only a case
// variant of one the parser reads.
func (d dialect) checkKeys(obj map[string]json.RawMessage, path string) error {
	if !d.client {
		return nil
	}
	known := []string{"name", "type", "nullable", "metadata", "fields", d.elementType, d.containsNull, d.keyType, d.valueType, d.valueContainsNull,
		"precision", "scale"}
	for key := range obj {
		if slices.Contains(known, key) {
			continue
		}
		for _, k := range known {
			if strictjson.Fold(k) == strictjson.Fold(key) {
				return fmt.Errorf("schema: %s: key %q is a case variant of %q", path, key, k)
			}
		}
	}
	return nil
}

// ParseStructType parses a Delta schema in the metaData.schemaString form.
// It is strict about shapes (wrong JSON kinds, unknown type names, invalid
// decimals, missing or duplicate names are errors naming the column path)
// because the result is used to create tables; unknown extra keys are
// ignored so that newer writers' additions do not break reads.
func ParseStructType(b []byte) (StructType, error) {
	return parseTop(b, deltaDialect)
}

// ParseColumns parses the UC Delta API "columns" value (DeltaStructType in
// uc-delta-api.yaml), which differs from the schema string only in using
// element-type, contains-null, key-type, value-type and value-contains-null.
func ParseColumns(b []byte) (StructType, error) {
	return parseTop(b, ucDialect)
}

func parseTop(b []byte, d dialect) (StructType, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return StructType{}, fmt.Errorf("schema: malformed JSON: %w", err)
	}
	obj, err := asObject(raw, "schema")
	if err == nil {
		err = d.checkKeys(obj, "schema")
	}
	if err != nil {
		return StructType{}, err
	}
	typ, err := typeName(obj, "schema")
	if err != nil {
		return StructType{}, err
	}
	if typ != "struct" {
		return StructType{}, fmt.Errorf("schema: schema: top-level type must be \"struct\", got %q", typ)
	}
	return parseStruct(obj, "", d)
}

func asObject(raw json.RawMessage, path string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("schema: %s: must be a JSON object", path)
	}
	return obj, nil
}

func typeName(obj map[string]json.RawMessage, path string) (string, error) {
	raw, ok := obj["type"]
	if !ok {
		return "", fmt.Errorf("schema: %s: missing \"type\"", path)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("schema: %s: \"type\" must be a string", path)
	}
	return s, nil
}

func getBool(obj map[string]json.RawMessage, key, path string) (bool, error) {
	raw, ok := obj[key]
	if !ok {
		return false, fmt.Errorf("schema: %s: missing %q", path, key)
	}
	var v bool
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return false, fmt.Errorf("schema: %s: %q must be a boolean", path, key)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, fmt.Errorf("schema: %s: %q must be a boolean", path, key)
	}
	return v, nil
}

// join builds the dotted column path used in error messages.
func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// where names a path for error messages; the empty path is the schema root.
func where(path string) string {
	if path == "" {
		return "schema"
	}
	return fmt.Sprintf("column %q", path)
}

func parseStruct(obj map[string]json.RawMessage, path string, d dialect) (StructType, error) {
	rawFields, ok := obj["fields"]
	if !ok {
		return StructType{}, fmt.Errorf("schema: %s: struct missing \"fields\"", where(path))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawFields, &items); err != nil || items == nil {
		return StructType{}, fmt.Errorf("schema: %s: \"fields\" must be an array", where(path))
	}
	st := StructType{Fields: make([]StructField, 0, len(items))}
	seen := make(map[string]string, len(items))
	for i, item := range items {
		fo, err := asObject(item, fmt.Sprintf("%s: field %d", where(path), i))
		if err == nil {
			err = d.checkKeys(fo, fmt.Sprintf("%s: field %d", where(path), i))
		}
		if err != nil {
			return StructType{}, err
		}
		var name string
		rawName, ok := fo["name"]
		if !ok {
			return StructType{}, fmt.Errorf("schema: %s: field %d: missing \"name\"", where(path), i)
		}
		if err := json.Unmarshal(rawName, &name); err != nil || bytes.Equal(bytes.TrimSpace(rawName), []byte("null")) {
			return StructType{}, fmt.Errorf("schema: %s: field %d: \"name\" must be a string", where(path), i)
		}
		if name == "" || d.request && strings.TrimSpace(name) == "" {
			return StructType{}, fmt.Errorf("schema: %s: field %d: empty name", where(path), i)
		}
		fpath := join(path, name)
		// Delta column names are unique regardless of case.
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return StructType{}, fmt.Errorf("schema: column %q: duplicate name (conflicts with %q)", fpath, prev)
		}
		seen[strings.ToLower(name)] = name
		rawType, ok := fo["type"]
		if !ok {
			return StructType{}, fmt.Errorf("schema: column %q: missing \"type\"", fpath)
		}
		typ, err := parseType(rawType, fpath, d)
		if err != nil {
			return StructType{}, err
		}
		nullable, err := getBool(fo, "nullable", fmt.Sprintf("column %q", fpath))
		if err != nil {
			return StructType{}, err
		}
		if raw, ok := fo["metadata"]; d.request && (!ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))) {
			return StructType{}, fmt.Errorf("schema: column %q: missing \"metadata\" (an object, {} when empty)", fpath)
		}
		md, err := parseMetadata(fo["metadata"], fpath)
		if err != nil {
			return StructType{}, err
		}
		st.Fields = append(st.Fields, StructField{Name: name, Type: typ, Nullable: nullable, Metadata: md})
	}
	return st, nil
}

func parseType(raw json.RawMessage, path string, d dialect) (DataType, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("schema: column %q: bad type string", path)
		}
		return parsePrimitive(s, path)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("schema: column %q: type must be a string or an object", path)
	}
	obj, err := asObject(raw, fmt.Sprintf("column %q", path))
	if err == nil {
		err = d.checkKeys(obj, fmt.Sprintf("column %q", path))
	}
	if err != nil {
		return nil, err
	}
	name, err := typeName(obj, fmt.Sprintf("column %q", path))
	if err != nil {
		return nil, err
	}
	switch name {
	case "struct":
		return parseStruct(obj, path, d)
	case "array":
		elemRaw, ok := obj[d.elementType]
		if !ok {
			return nil, fmt.Errorf("schema: column %q: array missing %q", path, d.elementType)
		}
		elem, err := parseType(elemRaw, path+".element", d)
		if err != nil {
			return nil, err
		}
		cn, err := getBool(obj, d.containsNull, fmt.Sprintf("column %q", path))
		if err != nil {
			return nil, err
		}
		return ArrayType{ElementType: elem, ContainsNull: cn}, nil
	case "map":
		keyRaw, ok := obj[d.keyType]
		if !ok {
			return nil, fmt.Errorf("schema: column %q: map missing %q", path, d.keyType)
		}
		valRaw, ok := obj[d.valueType]
		if !ok {
			return nil, fmt.Errorf("schema: column %q: map missing %q", path, d.valueType)
		}
		key, err := parseType(keyRaw, path+".key", d)
		if err != nil {
			return nil, err
		}
		val, err := parseType(valRaw, path+".value", d)
		if err != nil {
			return nil, err
		}
		vcn, err := getBool(obj, d.valueContainsNull, fmt.Sprintf("column %q", path))
		if err != nil {
			return nil, err
		}
		return MapType{KeyType: key, ValueType: val, ValueContainsNull: vcn}, nil
	case "decimal":
		return parseDecimalObject(obj, path)
	case "variant":
		// The protocol's variant example nests {"type":"variant"} as an
		// array element; it is the same type as the bare string.
		return Variant, nil
	default:
		return nil, fmt.Errorf("schema: column %q: unknown type %q", path, name)
	}
}

// Spark accepts spaces inside the parentheses; we normalize to "decimal(p,s)".
var decimalRE = regexp.MustCompile(`^decimal\(\s*(\d{1,3})\s*,\s*(-?\d{1,3})\s*\)$`)

func parsePrimitive(s, path string) (DataType, error) {
	if p := PrimitiveType(s); knownPrimitives[p] {
		return p, nil
	}
	if s == "decimal" {
		// Spark's bare "decimal" is its system default decimal(10,0).
		return DecimalType{Precision: 10, Scale: 0}, nil
	}
	if strings.HasPrefix(s, "decimal") {
		m := decimalRE.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("schema: column %q: malformed decimal %q", path, s)
		}
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		d := DecimalType{Precision: p, Scale: sc}
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("schema: column %q: %w", path, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("schema: column %q: unknown type %q", path, s)
}

// parseDecimalObject reads the UC Delta API's object form of a decimal,
// {"type":"decimal","precision":10,"scale":2} (DeltaDecimalType in
// uc-delta-api.yaml, whose discriminator maps "decimal" to it): the same
// type as "decimal(10,2)", which is how it is written back. Both numbers
// are required integers, within the string form's limits.
func parseDecimalObject(obj map[string]json.RawMessage, path string) (DataType, error) {
	var d DecimalType
	for _, f := range []struct {
		key string
		dst *int
	}{{"precision", &d.Precision}, {"scale", &d.Scale}} {
		raw, ok := obj[f.key]
		if !ok {
			return nil, fmt.Errorf("schema: column %q: decimal missing %q", path, f.key)
		}
		n, ok := jsonInt32(raw)
		if !ok {
			return nil, fmt.Errorf("schema: column %q: decimal %q must be an integer, not %s", path, f.key, raw)
		}
		*f.dst = n
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("schema: column %q: %w", path, err)
	}
	return d, nil
}

// jsonInt32 reads a JSON number that is an integer in int32's range. It
// decodes into any, not json.Number, which would also take "10" (a
// string).
func jsonInt32(raw json.RawMessage) (int, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 32)
	return int(i), err == nil
}

// validate applies Delta's (and Iceberg's) decimal limits.
func (d DecimalType) validate() error {
	if d.Precision < 1 || d.Precision > 38 {
		return fmt.Errorf("invalid %s: precision must be between 1 and 38", d)
	}
	if d.Scale < 0 || d.Scale > d.Precision {
		return fmt.Errorf("invalid %s: scale must be between 0 and precision", d)
	}
	return nil
}

func parseMetadata(raw json.RawMessage, path string) (map[string]any, error) {
	md := map[string]any{}
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		// Spark's own parser tolerates a missing metadata object.
		return md, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: column %q: bad metadata: %w", path, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: column %q: metadata must be a JSON object", path)
	}
	for k, val := range obj {
		md[k] = normalizeNumbers(val)
	}
	return md, nil
}

// normalizeNumbers turns integral json.Numbers into int64 so callers can read
// ids without a type switch, and so parse(marshal(x)) == x for ToDelta output.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		return t
	case map[string]any:
		for k, val := range t {
			t[k] = normalizeNumbers(val)
		}
		return t
	case []any:
		for i, val := range t {
			t[i] = normalizeNumbers(val)
		}
		return t
	}
	return v
}
