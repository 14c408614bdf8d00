package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/lakegate/lakegate/internal/jsonscan"
)

// A SyntaxError is text that is not JSON, worded as encoding/json words
// it.
type SyntaxError struct {
	msg    string
	Offset int // the byte it was found at
}

func (e *SyntaxError) Error() string { return e.msg }

// walker reads one JSON value with internal/jsonscan (which checks the
// grammar, the text and repeated keys), checking keys and numbers against
// the shape as it goes, and builds the value when build is set. Walkers
// are pooled: their scanner's buffers are grown once.
type walker struct {
	s     jsonscan.Scanner
	data  []byte
	build bool
	// path is where the walk is, for errors (where the client looks): a
	// key, or an array index (then index >= 0).
	path []step
}

type step struct {
	key   string
	index int
}

var walkers = sync.Pool{New: func() any { return new(walker) }}

// put returns w to the pool holding nothing of the body it read: not the
// body, not its keys (a path grown by deep nesting is let go).
func (w *walker) put() {
	w.s.Reset(nil)
	w.data = nil
	if cap(w.path) > 64 {
		w.path = nil
	} else {
		clear(w.path[:cap(w.path)])
		w.path = w.path[:0]
	}
	walkers.Put(w)
}

func walk(data []byte, sh Shape, build bool) (any, error) {
	w := walkers.Get().(*walker)
	defer w.put()
	w.data, w.build = data, build
	w.s.ResetMode(data, jsonscan.StrictEscapes)
	if w.s.Peek() == jsonscan.None && w.s.Offset() == len(data) {
		return nil, ErrEmpty
	}
	v, err := w.value(sh)
	if err != nil {
		return nil, err
	}
	if err := w.s.Finish(); err != nil {
		return nil, w.err()
	}
	return v, nil
}

func (w *walker) value(sh Shape) (any, error) {
	s := &w.s
	switch s.Peek() {
	case jsonscan.Object:
		return w.object(sh)
	case jsonscan.Array:
		return w.array(sh)
	case jsonscan.String:
		v, ok := s.Str()
		if !ok {
			return nil, w.err()
		}
		if !w.build {
			return nil, nil
		}
		return string(v), nil
	case jsonscan.Number:
		raw, ok := s.Num()
		if !ok {
			return nil, w.err()
		}
		if sh == nil && !w.build {
			return nil, nil
		}
		lit := string(raw)
		if sh != nil {
			if err := sh.Number(lit); err != nil {
				return nil, fmt.Errorf("%s: %v", w.at(), err)
			}
		}
		return json.Number(lit), nil
	case jsonscan.Bool:
		v, ok := s.Bool()
		if !ok {
			return nil, w.err()
		}
		return v, nil
	case jsonscan.Null:
		if !s.Null() {
			return nil, w.err()
		}
		return nil, nil
	}
	s.Skip() // no value starts here: the scanner says what is wrong
	return nil, w.err()
}

func (w *walker) object(sh Shape) (any, error) {
	s := &w.s
	if !s.BeginObject() {
		return nil, w.err()
	}
	var m map[string]any
	if w.build {
		m = map[string]any{}
	}
	for s.More() {
		raw := s.Key()
		if s.Failed() {
			return nil, w.err()
		}
		key := string(raw)
		var child Shape
		if sh != nil {
			var variant string
			if child, variant = sh.Field(key); variant != "" {
				return nil, fmt.Errorf("%s: key %q is a case variant of the field %q", w.at(), key, variant)
			}
		}
		w.path = append(w.path, step{key: key, index: -1})
		v, err := w.value(child)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return nil, err
		}
		if w.build {
			m[key] = v
		}
	}
	if s.Failed() {
		return nil, w.err()
	}
	return m, nil
}

func (w *walker) array(sh Shape) (any, error) {
	s := &w.s
	if !s.BeginArray() {
		return nil, w.err()
	}
	var item Shape
	if sh != nil {
		item = sh.Item()
	}
	var a []any
	if w.build {
		a = []any{}
	}
	for i := 0; s.More(); i++ {
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
	if s.Failed() {
		return nil, w.err()
	}
	return a, nil
}

// err words the scanner's error for the client: a repeated key where the
// walk is, a syntax error as encoding/json words it (syntaxError).
func (w *walker) err() error {
	e, _ := w.s.Err().(*jsonscan.Error)
	if e == nil { // not met: err follows a failed read
		return w.syntaxError(len(w.data), "")
	}
	switch e.Reason {
	case jsonscan.RepeatedKey:
		return fmt.Errorf("%s: duplicate key %q", w.at(), e.Key)
	case jsonscan.TooDeep:
		return &SyntaxError{msg: "exceeded max depth", Offset: e.Offset}
	case jsonscan.BadUTF8:
		return errors.New("not valid UTF-8")
	case jsonscan.BadEscape:
		return errors.New(e.What)
	case jsonscan.Trailing:
		return errTrailing
	}
	return w.syntaxError(e.Offset, e.What)
}

// syntaxError is the scanner's refusal of the text at offset as a
// SyntaxError in encoding/json's words, which clients know ("invalid
// character 'x' looking for beginning of value"): both read the same
// grammar byte by byte, so the first byte encoding/json refuses is the one
// the scanner refused, and asking it costs a second read only of a body
// that is refused anyway.
func (w *walker) syntaxError(offset int, what string) error {
	var syntax *json.SyntaxError
	if errors.As(json.Unmarshal(w.data, &struct{}{}), &syntax) {
		return &SyntaxError{msg: syntax.Error(), Offset: offset}
	}
	if offset >= len(w.data) { // not met (FuzzDecodeAgrees)
		return &SyntaxError{msg: "unexpected end of JSON input", Offset: offset}
	}
	return &SyntaxError{msg: "invalid character " + strconv.QuoteRune(rune(w.data[offset])) + " " + what, Offset: offset}
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
