// Package strictjson reads a client's JSON request body the one way every
// JSON decoder reads it, or refuses it. lakegate matches keys exactly;
// Go's encoding/json (which many catalogs run) matches them
// case-insensitively and keeps the last of two equal keys, so a body with
// "properties" and "Properties" would be checked on one and acted on by
// the other. A body is refused when an object repeats a key (after
// unescaping), when a key matches a field of its shape only as a case
// variant (Go's fold, Fold), or when it is anything a strict and a
// lenient decoder would read differently: not exactly one JSON value
// (trailing data, a BOM), invalid UTF-8, a lone surrogate or NUL escape,
// a number out of range for its field. Keys no shape names pass: clients
// send vendor fields, and a map's keys are data, not field names.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Shape tells which keys of an object are field names, so that a case
// variant of one is refused. A nil Shape is any value (still without
// repeated keys).
type Shape interface {
	// Field returns the shape of key's value in an object of this shape.
	// variant is the field key is only a case variant of ("" when key
	// names a field exactly, or none).
	Field(key string) (child Shape, variant string)
	// Item is the shape of an array's elements.
	Item() Shape
	// Number checks a number literal against the field's type.
	Number(lit string) error
}

// Check reads data as exactly one JSON value of shape s.
func Check(data []byte, s Shape) error {
	_, err := walk(data, s, false)
	return err
}

// Decode is Check that also returns the value, as encoding/json's
// Decoder with UseNumber decodes it into an any: the one parse a caller
// needs.
func Decode(data []byte, s Shape) (any, error) {
	return walk(data, s, true)
}

// Unmarshal checks data against v's Go type (TypeShape) and then decodes
// it with encoding/json: the struct reads exactly the keys that were
// checked.
func Unmarshal(data []byte, v any) error {
	if err := Check(data, ShapeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// ErrEmpty is the error for a body of whitespace only.
var ErrEmpty = errors.New("empty body")

func walk(data []byte, s Shape, build bool) (any, error) {
	if err := CheckText(data); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmpty
	}
	w := walker{dec: json.NewDecoder(bytes.NewReader(data)), build: build}
	w.dec.UseNumber()
	v, err := w.value(s)
	if err != nil {
		return nil, err
	}
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

type walker struct {
	dec   *json.Decoder
	build bool
	// path is where the walk is, for errors (where the client looks):
	// a key, or an array index (then index >= 0).
	path []step
}

type step struct {
	key   string
	index int
}

// value reads one value.
func (w *walker) value(s Shape) (any, error) {
	tok, err := w.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return w.object(s)
		}
		return w.array(s)
	case json.Number:
		if s != nil {
			if err := s.Number(string(t)); err != nil {
				return nil, fmt.Errorf("%s: %v", w.at(), err)
			}
		}
	}
	return tok, nil
}

func (w *walker) object(s Shape) (any, error) {
	m := map[string]any{} // also the set of keys seen
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string) // the decoder allows only strings here
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("%s: duplicate key %q", w.at(), key)
		}
		var child Shape
		if s != nil {
			var variant string
			if child, variant = s.Field(key); variant != "" {
				return nil, fmt.Errorf("%s: key %q is a case variant of the field %q", w.at(), key, variant)
			}
		}
		w.path = append(w.path, step{key: key, index: -1})
		v, err := w.value(child)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	if _, err := w.dec.Token(); err != nil { // '}'
		return nil, syntaxError(err)
	}
	if !w.build {
		return nil, nil
	}
	return m, nil
}

func (w *walker) array(s Shape) (any, error) {
	var item Shape
	if s != nil {
		item = s.Item()
	}
	a := []any{}
	for i := 0; w.dec.More(); i++ {
		w.path = append(w.path, step{index: i})
		v, err := w.value(item)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return nil, err
		}
		if w.build {
			a = append(a, v)
		}
	}
	if _, err := w.dec.Token(); err != nil { // ']'
		return nil, syntaxError(err)
	}
	if !w.build {
		return nil, nil
	}
	return a, nil
}

// at says where the walk is: "at table-changes[0].identifier".
func (w *walker) at() string {
	if len(w.path) == 0 {
		return "at the top level"
	}
	var b strings.Builder
	b.WriteString("at ")
	for i, st := range w.path {
		switch {
		case st.index >= 0 && i > 0:
			fmt.Fprintf(&b, "[%d]", st.index)
		case st.index >= 0:
			fmt.Fprintf(&b, "item %d", st.index)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.key)
		}
	}
	return b.String()
}

// syntaxError words a decoder error as json.Unmarshal does.
func syntaxError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of JSON input")
	}
	return err
}

// CheckText refuses text encoding/json would decode quietly into
// something else than was sent: invalid UTF-8 and lone surrogate escapes
// (both become U+FFFD), and a NUL escape (which ends a C string in some
// backends' storage). A raw NUL or control byte is not JSON at all; the
// decoder refuses those, and a BOM too.
func CheckText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("not valid UTF-8")
	}
	return CheckEscapes(raw)
}

// CheckEscapes refuses the \u escapes of NUL and lone surrogates.
func CheckEscapes(raw []byte) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character: a backslash escapes the next one only
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw, i+1)
		switch {
		case !ok:
			continue // not JSON; the decoder says so
		case r == 0:
			return errors.New("NUL (\\u0000) in a string")
		case r >= 0xDC00 && r <= 0xDFFF:
			return errors.New("lone surrogate escape in a string")
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(raw, i+7); !ok || raw[i+5] != '\\' || raw[i+6] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
				return errors.New("lone surrogate escape in a string")
			}
			i += 6 // the low half is checked: skip it
		}
		i += 4
	}
	return nil
}

// hex4 reads the four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	return rune(v), err == nil
}
