package strictjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: deeper is refused there too.
const maxDepth = 10000

// A SyntaxError is text that is not JSON, worded as encoding/json words
// it.
type SyntaxError struct {
	msg    string
	Offset int // the byte it was found at
}

func (e *SyntaxError) Error() string { return e.msg }

// scanner reads one JSON value from data (CheckText passed it: valid
// UTF-8, no NUL or lone surrogate escape), checking keys against the
// shape as it goes. It accepts exactly the grammar encoding/json accepts
// (FuzzDecodeAgrees); being its own, it reads each byte once and
// allocates only the values it returns.
type scanner struct {
	data  []byte
	pos   int
	depth int
	build bool
	// path is where the scan is, for errors (where the client looks): a
	// key, or an array index (then index >= 0).
	path []step
}

type step struct {
	key   string
	index int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// fail is a syntax error at the current byte, "invalid character 'x'
// <context>", or the end of input.
func (s *scanner) fail(context string) error {
	if s.pos >= len(s.data) {
		return &SyntaxError{msg: "unexpected end of JSON input", Offset: s.pos}
	}
	return &SyntaxError{msg: "invalid character " + quoteChar(s.data[s.pos]) + " " + context, Offset: s.pos}
}

// quoteChar is encoding/json's quoting of a byte in its errors.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

func (s *scanner) value(sh Shape) (any, error) {
	s.space()
	if s.pos >= len(s.data) {
		return nil, s.fail("")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(sh)
	case c == '[':
		return s.array(sh)
	case c == '"':
		str, err := s.str()
		if err != nil || !s.build {
			return nil, err
		}
		return str, nil
	case c == '-' || '0' <= c && c <= '9':
		return s.number(sh)
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	}
	return nil, s.fail("looking for beginning of value")
}

func (s *scanner) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if s.pos >= len(s.data) || s.data[s.pos] != word[i] {
			return s.fail(fmt.Sprintf("in literal %s (expecting %s)", word, quoteChar(word[i])))
		}
		s.pos++
	}
	return nil
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as a
// json.Number and checks it against the field's type.
func (s *scanner) number(sh Shape) (any, error) {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.digits() == 0:
		return nil, s.fail("in numeric literal")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return nil, s.fail("after decimal point in numeric literal")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return nil, s.fail("in exponent of numeric literal")
		}
	}
	lit := string(s.data[start:s.pos])
	if sh != nil {
		if err := sh.Number(lit); err != nil {
			return nil, fmt.Errorf("%s: %v", s.at(), err)
		}
	}
	return json.Number(lit), nil
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

// str reads a string at s.pos (a '"'), unescaped.
func (s *scanner) str() (string, error) {
	s.pos++ // '"'
	start := s.pos
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return string(s.data[start : s.pos-1]), nil
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", s.fail("in string literal")
		}
		s.pos++
	}
	return "", s.fail("")
}

// escaped finishes a string that holds escapes, from its start.
func (s *scanner) escaped(start int) (string, error) {
	var b strings.Builder
	b.Write(s.data[start:s.pos])
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return b.String(), nil
		case c < 0x20:
			return "", s.fail("in string literal")
		case c != '\\':
			b.WriteByte(c)
			s.pos++
			continue
		}
		s.pos++ // the backslash
		if s.pos >= len(s.data) {
			break
		}
		switch e := s.data[s.pos]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := s.unicode()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			continue
		default:
			return "", s.fail("in string escape code")
		}
		s.pos++
	}
	return "", s.fail("")
}

// unicode reads the \uXXXX at s.pos (the 'u'), and its low half when it
// is a high surrogate (CheckText made sure there is one).
func (s *scanner) unicode() (rune, error) {
	r, err := s.hex()
	if err != nil || !utf16.IsSurrogate(r) {
		return r, err
	}
	if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
		s.pos++
		lo, err := s.hex()
		if err != nil {
			return 0, err
		}
		if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
			return d, nil
		}
	}
	return utf8.RuneError, nil
}

// hex reads the four hex digits after the 'u' at s.pos.
func (s *scanner) hex() (rune, error) {
	s.pos++ // 'u'
	var r rune
	for i := 0; i < 4; i++ {
		if s.pos >= len(s.data) {
			return 0, s.fail("")
		}
		c := s.data[s.pos]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, s.fail("in \\u hexadecimal character escape")
		}
		r = r*16 + rune(c)
		s.pos++
	}
	return r, nil
}

func (s *scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return &SyntaxError{msg: "exceeded max depth", Offset: s.pos}
	}
	s.pos++ // '{' or '['
	return nil
}

func (s *scanner) object(sh Shape) (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	m := map[string]any{} // also the set of keys seen
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.depth--
		return m, nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return nil, s.fail("looking for beginning of object key string")
		}
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("%s: duplicate key %q", s.at(), key)
		}
		var child Shape
		if sh != nil {
			var variant string
			if child, variant = sh.Field(key); variant != "" {
				return nil, fmt.Errorf("%s: key %q is a case variant of the field %q", s.at(), key, variant)
			}
		}
		if s.space(); s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return nil, s.fail("after object key")
		}
		s.pos++
		s.path = append(s.path, step{key: key, index: -1})
		v, err := s.value(child)
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return nil, err
		}
		m[key] = v
		if s.space(); s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			s.depth--
			return m, nil
		}
		return nil, s.fail("after object key:value pair")
	}
}

func (s *scanner) array(sh Shape) (any, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	var item Shape
	if sh != nil {
		item = sh.Item()
	}
	a := []any{}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		return a, nil
	}
	for i := 0; ; i++ {
		s.path = append(s.path, step{index: i})
		v, err := s.value(item)
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return nil, err
		}
		if s.build {
			a = append(a, v)
		}
		if s.space(); s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			s.depth--
			return a, nil
		}
		return nil, s.fail("after array element")
	}
}

// at says where the scan is: "at table-changes[0].identifier".
func (s *scanner) at() string {
	if len(s.path) == 0 {
		return "at the top level"
	}
	var b strings.Builder
	b.WriteString("at ")
	for i, st := range s.path {
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
