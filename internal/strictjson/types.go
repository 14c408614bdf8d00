package strictjson

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// ShapeOf is the shape of what json.Unmarshal(data, v) decodes into: a
// struct's fields by their json names (as encoding/json names them,
// embedded structs' fields promoted), a map's values, a slice's items,
// numbers within their Go type. A json.RawMessage, an any, or a type
// that decodes itself is any value.
func ShapeOf(v any) Shape { return TypeShape(reflect.TypeOf(v)) }

// TypeShape is ShapeOf for a reflect.Type.
func TypeShape(t reflect.Type) Shape {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || decodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return structShape(t)
	case reflect.Map:
		return typeShape{elem: t.Elem(), kind: reflect.Map}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64 text
		}
		return typeShape{elem: t.Elem(), kind: reflect.Slice}
	case reflect.Interface:
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return typeShape{kind: t.Kind(), bits: t.Bits()}
	}
	return nil // strings, bools: no keys, no range
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself: json.RawMessage and types with their own UnmarshalJSON
// (or UnmarshalText) read what they like; only repeated keys are checked
// under them.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshaler) || p.Implements(textUnmarshaler)
}

// typeShape is a map, slice or scalar type.
type typeShape struct {
	elem reflect.Type
	kind reflect.Kind
	bits int
}

func (s typeShape) Field(string) (Shape, string) {
	if s.kind == reflect.Map {
		return TypeShape(s.elem), "" // map keys are data
	}
	return nil, ""
}

func (s typeShape) Item() Shape {
	if s.kind == reflect.Slice {
		return TypeShape(s.elem)
	}
	return nil
}

// Number refuses what encoding/json would refuse or round: out of the
// integer type's range, a fraction for an integer, an infinite float.
func (s typeShape) Number(lit string) error {
	var err error
	switch s.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(lit, 10, s.bits)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(lit, 10, s.bits)
	case reflect.Float32, reflect.Float64:
		var f float64
		f, err = strconv.ParseFloat(lit, s.bits)
		if err == nil && math.IsInf(f, 0) {
			err = errors.New("infinite")
		}
	default:
		return nil // not a number field: the decoder says so
	}
	if err != nil {
		return fmt.Errorf("number %s does not fit %s", lit, s.kind)
	}
	return nil
}

// fields is a struct type's shape: its fields by json name.
type fields struct {
	byName map[string]reflect.Type
	folds  map[string]string
}

func (f *fields) Field(key string) (Shape, string) {
	if t, ok := f.byName[key]; ok {
		return TypeShape(t), ""
	}
	return nil, f.folds[Fold(key)]
}

func (f *fields) Item() Shape         { return nil }
func (f *fields) Number(string) error { return nil }

var structShapes sync.Map // reflect.Type → *fields

func structShape(t reflect.Type) *fields {
	if s, ok := structShapes.Load(t); ok {
		return s.(*fields)
	}
	f := &fields{byName: map[string]reflect.Type{}}
	collect(t, f.byName, map[reflect.Type]bool{})
	names := make([]string, 0, len(f.byName))
	for n := range f.byName {
		names = append(names, n)
	}
	f.folds = Folds(names)
	structShapes.Store(t, f)
	return f
}

// collect adds t's fields as encoding/json names them: the tag's name or
// the Go name, "-" skipped, unexported skipped, an untagged embedded
// struct's fields promoted (the outer field wins a clash).
func collect(t reflect.Type, out map[string]reflect.Type, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	for _, e := range embedded {
		inner := map[string]reflect.Type{}
		collect(e, inner, seen)
		for n, ft := range inner {
			if _, ok := out[n]; !ok {
				out[n] = ft
			}
		}
	}
}
