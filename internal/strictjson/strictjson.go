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
	"encoding/json"
	"errors"
	"strconv"
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
	sc := scanner{data: data, build: build}
	sc.space()
	if sc.pos == len(data) {
		return nil, ErrEmpty
	}
	v, err := sc.value(s)
	if err != nil {
		return nil, err
	}
	if sc.space(); sc.pos < len(data) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
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
