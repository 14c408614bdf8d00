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
//
// The text is read by internal/jsonscan (the scanner of backend answers,
// in its StrictEscapes mode), which checks the grammar, the text and
// repeated keys; this package walks it against the shape.
package strictjson

import (
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/lakegate/lakegate/internal/jsonscan"
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

var errTrailing = errors.New("trailing data after the JSON value")

// CheckText refuses text encoding/json would decode quietly into
// something else than was sent: invalid UTF-8 and lone surrogate escapes
// (both become U+FFFD), and a NUL escape (which ends a C string in some
// backends' storage) — the text rules of Check, alone. It is for text a
// lenient decoder accepted: its strings are read with Check's scanner,
// as far as that one reads (not past a repeated key or what is not JSON).
// A raw NUL or control byte is not JSON at all; the decoder refuses
// those, and a BOM too.
func CheckText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("not valid UTF-8")
	}
	w := walkers.Get().(*walker)
	defer w.put()
	w.s.ResetMode(raw, jsonscan.StrictEscapes)
	w.s.Skip()
	if e, ok := w.s.Err().(*jsonscan.Error); ok && e.Reason == jsonscan.BadEscape {
		return errors.New(e.What)
	}
	return nil
}
