// Package jsonscan is a strict, allocation-free pull scanner of JSON
// documents (RFC 8259): the caller walks the values it cares about and
// skips the rest, and every byte is validated on the way, once.
//
// It is stricter than encoding/json where leniency makes a document mean
// different things to different readers: strings must be valid UTF-8, an
// object must not repeat a key, and nothing but whitespace may follow the
// document (a byte order mark is not whitespace). Keys are compared as
// written (encoding/json matches struct fields case-insensitively; the
// Iceberg clients do not). Repeated keys are found exactly: keys are
// compared by a seeded hash, and a hash met twice by the keys themselves,
// so neither a collision nor an escaped spelling of a key decides alone.
// In StrictEscapes mode (for a client's request) the escapes of NUL and
// of lone UTF-16 surrogates are refused as well.
//
// A Scanner is reused across documents (Reset): its buffers are grown
// once and kept, so scanning allocates nothing in a steady state.
package jsonscan

import (
	"hash/maphash"
	"unicode/utf8"
)

// Kind is the kind of a JSON value, named by its first byte.
type Kind byte

// The kinds of values; None is what Peek says at the end of the input or
// after an error.
const (
	None   Kind = 0
	Object Kind = '{'
	Array  Kind = '['
	String Kind = '"'
	Number Kind = '0'
	Bool   Kind = 't'
	Null   Kind = 'n'
)

// MaxDepth bounds nesting, as encoding/json does: a document cannot make
// the scanner (or its caller) recurse without end.
const MaxDepth = 10000

// bigObject is the number of keys past which an object's duplicates are
// looked up in a map rather than by a linear scan of its key hashes.
const bigObject = 64

// Mode is what a scan refuses beyond the default, set by ResetMode.
type Mode uint8

// StrictEscapes refuses a \u0000 escape (NUL ends a C string in some
// backends' storage) and the escape of a lone UTF-16 surrogate (decoders
// read it as U+FFFD, not as what was sent): text a lenient reader would
// store otherwise than a strict one reads it.
const StrictEscapes Mode = 1

// Reason is the kind of fault an Error is.
type Reason uint8

// The reasons a document is refused.
const (
	NotJSON     Reason = iota // the grammar: what no JSON reader accepts
	BadUTF8                   // invalid UTF-8 in a string
	BadEscape                 // a NUL or lone surrogate escape (StrictEscapes)
	RepeatedKey               // an object repeats a key (Error.Key names it)
	TooDeep                   // nesting beyond MaxDepth
	Trailing                  // data after the document
	Refused                   // the caller's Fail
)

// Error is a document the scanner refused: what is wrong, and the offset
// of the byte where it was found (len of the input when it ended early).
type Error struct {
	Offset int
	What   string
	Reason Reason
	Key    string // the repeated key, unescaped (RepeatedKey)
}

func (e *Error) Error() string { return "invalid JSON at offset " + itoa(e.Offset) + ": " + e.What }

// frame is one open container. Keys of an object are remembered in
// Scanner.keys from start on, as hashes (seeded per process, so a
// document cannot be made to collide on purpose) and where they are in
// the document; a big object indexes its keys by hash in set.
type frame struct {
	kind  Kind
	first bool // no member or element read yet
	start int
	set   map[uint64]int // hash → the last of its keys (index from start)
}

// keyRef is a key of an open object: its hash, the offset of its opening
// quote (to read it again when another key has its hash), and in a big
// object the previous key with the same hash (-1 for none).
type keyRef struct {
	hash uint64
	at   int
	next int
}

// Scanner reads one JSON document at a time. The zero value is ready
// for Reset.
type Scanner struct {
	data   []byte
	pos    int
	mode   Mode
	err    *Error
	frames []frame
	keys   []keyRef
	kbuf   []byte // the last key, unescaped, when it had escapes
	vbuf   []byte // the last string value, unescaped, when it had escapes
	pbuf   []byte // an earlier key, read again to compare
}

var seed = maphash.MakeSeed()

// hashMask is all ones; a test narrows it to make keys collide.
var hashMask = ^uint64(0)

// keptBuffer is the largest scratch buffer a Reset keeps: one grown by a
// huge document is let go rather than held by an idle scanner.
const keptBuffer = 64 << 10

// Reset starts scanning data; Reset(nil) lets go of the last document, for
// a scanner put aside (in a pool) not to keep it alive.
func (s *Scanner) Reset(data []byte) { s.ResetMode(data, 0) }

// ResetMode is Reset with a mode, for this document only.
func (s *Scanner) ResetMode(data []byte, mode Mode) {
	s.data, s.pos, s.mode, s.err = data, 0, mode, nil
	for i := range s.frames {
		s.frames[i].set = nil // let a big object's map go
	}
	s.frames, s.keys = s.frames[:0], s.keys[:0]
	if cap(s.kbuf) > keptBuffer {
		s.kbuf = nil
	}
	if cap(s.vbuf) > keptBuffer {
		s.vbuf = nil
	}
	if cap(s.pbuf) > keptBuffer {
		s.pbuf = nil
	}
	if cap(s.keys) > keptBuffer/24 {
		s.keys = nil
	}
	if cap(s.frames) > keptBuffer/32 {
		s.frames = nil
	}
}

// Err is the first error met, or nil.
func (s *Scanner) Err() error {
	if s.err == nil {
		return nil
	}
	return s.err
}

// Offset is how far the scanner has read.
func (s *Scanner) Offset() int { return s.pos }

// Failed reports whether the scanner met an error; every read then fails.
func (s *Scanner) Failed() bool { return s.err != nil }

// fail records the first error, a fault of the grammar, and ends the
// scan.
func (s *Scanner) fail(what string) { s.failFor(NotJSON, what) }

func (s *Scanner) failFor(why Reason, what string) {
	if s.err == nil {
		s.err = &Error{Offset: s.pos, What: what, Reason: why}
	}
}

// Fail lets a caller refuse the document for a reason of its own (a value
// of the wrong type), at the current offset, so every later read fails.
func (s *Scanner) Fail(what string) { s.failFor(Refused, what) }

// Finish checks that only whitespace follows the document and every
// container was closed, and returns the scan's error.
func (s *Scanner) Finish() error {
	if s.err == nil && len(s.frames) > 0 {
		s.fail("unexpected end of input")
	}
	if s.err == nil {
		s.skipSpace()
		if s.pos < len(s.data) {
			s.failFor(Trailing, "data after the document")
		}
	}
	return s.Err()
}

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek tells the kind of the next value without reading it; None at the
// end of the input, after an error, or before a byte no value starts
// with (reading it then fails).
func (s *Scanner) Peek() Kind {
	if s.err != nil {
		return None
	}
	s.skipSpace()
	if s.pos >= len(s.data) {
		return None
	}
	switch c := s.data[s.pos]; c {
	case '{', '[', '"':
		return Kind(c)
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return Number
	}
	return None
}

// open enters a container whose opening byte is next.
func (s *Scanner) open(k Kind) {
	if len(s.frames) >= MaxDepth {
		s.failFor(TooDeep, "nested too deeply")
		return
	}
	s.pos++
	s.frames = append(s.frames, frame{kind: k, first: true, start: len(s.keys)})
}

// BeginObject enters the object that is next and reports true; when the
// next value is not an object, it reads nothing and reports false.
func (s *Scanner) BeginObject() bool {
	if s.Peek() != Object {
		return false
	}
	s.open(Object)
	return s.err == nil
}

// BeginArray is BeginObject for arrays.
func (s *Scanner) BeginArray() bool {
	if s.Peek() != Array {
		return false
	}
	s.open(Array)
	return s.err == nil
}

// More reports whether the innermost open container has another member
// (then read with Key and a value) or element; at its end it closes the
// container and reports false.
func (s *Scanner) More() bool {
	if s.err != nil || len(s.frames) == 0 {
		return false
	}
	f := &s.frames[len(s.frames)-1]
	closing := byte(']')
	if f.kind == Object {
		closing = '}'
	}
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail("unexpected end of input")
		return false
	}
	c := s.data[s.pos]
	if c == closing {
		s.pos++
		s.keys = s.keys[:f.start]
		f.set = nil
		s.frames = s.frames[:len(s.frames)-1]
		return false
	}
	if f.first {
		f.first = false
		return true
	}
	if c != ',' {
		s.fail("expected ',' or the container's end")
		return false
	}
	s.pos++
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == closing {
		s.fail("a comma before the container's end")
		return false
	}
	return true
}

// Key reads a member's key and the colon after it, and refuses a key the
// object already has (the Error names it). The key, unescaped, is valid
// until the next Key.
func (s *Scanner) Key() []byte {
	if s.err != nil {
		return nil
	}
	if len(s.frames) == 0 || s.frames[len(s.frames)-1].kind != Object {
		s.fail("a key outside an object")
		return nil
	}
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		s.fail("expected a key")
		return nil
	}
	at := s.pos
	key := s.readString(&s.kbuf)
	if s.err != nil {
		return nil
	}
	s.skipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		s.fail("expected ':' after a key")
		return nil
	}
	s.pos++
	if s.seen(key, at) {
		s.failFor(RepeatedKey, "a key repeated in one object")
		s.err.Key = string(key)
		return nil
	}
	return key
}

// seen records a key (its opening quote at offset at) in the innermost
// object and reports whether the object already had it. Hashes narrow the
// search; a key whose hash was met is compared with the key met.
func (s *Scanner) seen(key []byte, at int) bool {
	h := maphash.Bytes(seed, key) & hashMask
	f := &s.frames[len(s.frames)-1]
	own := s.keys[f.start:]
	if f.set != nil {
		last, met := f.set[h]
		for i := last; met && i >= 0; i = own[i].next {
			if s.same(own[i].at, key) {
				return true
			}
		}
		if !met {
			last = -1
		}
		f.set[h] = len(own)
		s.keys = append(s.keys, keyRef{hash: h, at: at, next: last})
		return false
	}
	for i := range own {
		if own[i].hash == h && s.same(own[i].at, key) {
			return true
		}
	}
	s.keys = append(s.keys, keyRef{hash: h, at: at, next: -1})
	if len(own) < bigObject {
		return false
	}
	own = s.keys[f.start:]
	f.set = make(map[uint64]int, 2*bigObject)
	for i := range own {
		if last, met := f.set[own[i].hash]; met {
			own[i].next = last
		}
		f.set[own[i].hash] = i
	}
	return false
}

// same reports whether the key whose opening quote is at offset at (read
// before, so valid) is key.
func (s *Scanner) same(at int, key []byte) bool {
	earlier, _, _ := scanString(s.data, at+1, at+1, &s.pbuf, s.mode)
	return string(earlier) == string(key)
}

// Str reads a string value and returns it unescaped, valid until the
// next Str; when the next value is not a string it reads nothing and
// reports false.
func (s *Scanner) Str() ([]byte, bool) {
	if s.Peek() != String {
		return nil, false
	}
	v := s.readString(&s.vbuf)
	return v, s.err == nil
}

// Null reads a null when it is next.
func (s *Scanner) Null() bool {
	if s.Peek() != Null {
		return false
	}
	return s.literal("null")
}

// Num reads the number that is next and returns its literal, a slice of
// the document; when the next value is not a number it reads nothing and
// reports false.
func (s *Scanner) Num() ([]byte, bool) {
	if s.Peek() != Number {
		return nil, false
	}
	start := s.pos
	s.readNumber()
	if s.err != nil {
		return nil, false
	}
	return s.data[start:s.pos], true
}

// Int reads the number that is next; ok is false when it is not an
// integer that fits an int64 (it is read all the same), or when the next
// value is not a number (nothing is read).
func (s *Scanner) Int() (v int64, ok bool) {
	if s.Peek() != Number {
		return 0, false
	}
	start := s.pos
	s.readNumber()
	if s.err != nil {
		return 0, false
	}
	return parseInt(s.data[start:s.pos])
}

// Skip reads and validates the next value, whatever it is.
func (s *Scanner) Skip() {
	switch s.Peek() {
	case Object:
		s.open(Object)
		for s.More() {
			s.Key()
			s.Skip()
		}
	case Array:
		s.open(Array)
		for s.More() {
			s.Skip()
		}
	case String:
		s.readString(nil)
	case Number:
		s.readNumber()
	case Bool:
		s.readBool()
	case Null:
		s.literal("null")
	default:
		if s.err == nil {
			if s.pos >= len(s.data) {
				s.fail("unexpected end of input")
			} else {
				s.fail("expected a value")
			}
		}
	}
}

// Bool reads a true or false when it is next; ok is false when the next
// value is no boolean (nothing is read).
func (s *Scanner) Bool() (v, ok bool) {
	if s.Peek() != Bool {
		return false, false
	}
	return s.readBool(), s.err == nil
}

func (s *Scanner) readBool() bool {
	if s.data[s.pos] == 't' {
		return s.literal("true")
	}
	s.literal("false")
	return false
}

// literal reads word (true, false, null); a misspelling is refused at
// its first wrong byte.
func (s *Scanner) literal(word string) bool {
	if len(s.data)-s.pos >= len(word) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	for s.pos < len(s.data) && s.data[s.pos] == word[0] {
		s.pos++
		word = word[1:]
	}
	s.fail("a misspelt true, false or null")
	return false
}

// readNumber reads -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?.
func (s *Scanner) readNumber() {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		s.pos = i
		s.fail("a number without digits")
		return
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			s.pos = j
			s.fail("a number without digits after '.'")
			return
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			s.pos = j
			s.fail("a number without exponent digits")
			return
		}
		i = j
	}
	s.pos = i
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// parseInt reads a JSON number literal as an int64: no fraction, no
// exponent, in range.
func parseInt(lit []byte) (int64, bool) {
	neg := len(lit) > 0 && lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var u uint64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// plain marks the bytes a string may hold as they are: printable ASCII
// other than the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// readString reads the string at pos (its opening quote). Its content is
// returned as a slice of the input when it has no escapes, else unescaped
// into *buf; with buf nil (Skip) it is only validated.
func (s *Scanner) readString(buf *[]byte) []byte {
	d, start := s.data, s.pos+1
	i := plainEnd(d, start)
	if i < len(d) && d[i] == '"' { // the common case: nothing to decode
		s.pos = i + 1
		return d[start:i]
	}
	str, end, bad := scanString(d, start, i, buf, s.mode)
	s.pos = end
	if bad != noFault {
		s.failFor(faults[bad].why, faults[bad].what)
		return nil
	}
	return str
}

// plainEnd is the end of the run of plain bytes from i.
func plainEnd(d []byte, i int) int {
	for i < len(d) && plain[d[i]] {
		i++
	}
	return i
}

// fault is what is wrong with a string, an index in faults (0: nothing).
type fault uint8

const (
	noFault fault = iota
	unclosed
	badEscape
	control
	badUTF8
	nulEscape
	loneSurrogate
)

var faults = [...]struct {
	why  Reason
	what string
}{
	unclosed:      {NotJSON, "a string without its closing quote"},
	badEscape:     {NotJSON, "an invalid escape in a string"},
	control:       {NotJSON, "a control character in a string"},
	badUTF8:       {BadUTF8, "invalid UTF-8 in a string"},
	nulEscape:     {BadEscape, "NUL (\\u0000) in a string"},
	loneSurrogate: {BadEscape, "lone surrogate escape in a string"},
}

// scanString reads the rest of the string whose content starts at
// d[start] from d[i] on (what lies between is plain): its content
// unescaped into *buf (with buf nil only validated) and the offset after
// its closing quote; or, at a fault, the fault and its offset.
func scanString(d []byte, start, i int, buf *[]byte, mode Mode) ([]byte, int, fault) {
	var out []byte
	if buf != nil {
		out = append((*buf)[:0], d[start:i]...)
	}
	for {
		if i >= len(d) {
			return nil, i, unclosed
		}
		c := d[i]
		switch {
		case plain[c]:
			j := plainEnd(d, i+1)
			if buf != nil {
				out = append(out, d[i:j]...)
			}
			i = j
		case c == '"':
			if buf != nil {
				*buf = out
			}
			return out, i + 1, noFault
		case c == '\\':
			var bad fault
			if i, out, bad = unescape(d, i, out, buf != nil, mode); bad != noFault {
				return nil, i, bad
			}
		case c < 0x20:
			return nil, i, control
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, i, badUTF8
			}
			if buf != nil {
				out = append(out, d[i:i+n]...)
			}
			i += n
		}
	}
}

// unescape decodes the escape at d[i] (a backslash) onto out when keep,
// and returns the offset after it; or the offset of a fault in it.
func unescape(d []byte, i int, out []byte, keep bool, mode Mode) (int, []byte, fault) {
	if i+1 >= len(d) {
		return len(d), out, unclosed
	}
	var b byte
	switch d[i+1] {
	case '"', '\\', '/':
		b = d[i+1]
	case 'b':
		b = '\b'
	case 'f':
		b = '\f'
	case 'n':
		b = '\n'
	case 'r':
		b = '\r'
	case 't':
		b = '\t'
	case 'u':
		r, bad := hex4(d, i+2)
		if bad >= 0 {
			return bad, out, badEscape
		}
		if r == 0 && mode&StrictEscapes != 0 {
			return i, out, nulEscape
		}
		at := i
		i += 6
		if utf16IsSurrogate(r) {
			// A pair is one character; a lone half is kept as U+FFFD, as
			// encoding/json does (it is valid JSON, if not valid text).
			if r < 0xdc00 && i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
				if lo, bad := hex4(d, i+2); bad < 0 && lo >= 0xdc00 && lo <= 0xdfff {
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
					i += 6
				} else {
					r = utf8.RuneError
				}
			} else {
				r = utf8.RuneError
			}
			if r == utf8.RuneError && mode&StrictEscapes != 0 {
				return at, out, loneSurrogate
			}
		}
		if keep {
			out = utf8.AppendRune(out, r)
		}
		return i, out, noFault
	default:
		return i + 1, out, badEscape
	}
	if keep {
		out = append(out, b)
	}
	return i + 2, out, noFault
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r <= 0xdfff }

// hex4 reads four hex digits at d[i:]; bad is the offset of the first
// byte that is not one (len(d) when they are cut short), -1 when all are.
func hex4(d []byte, i int) (r rune, bad int) {
	for j := i; j < i+4; j++ {
		if j >= len(d) {
			return 0, len(d)
		}
		c := d[j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, j
		}
		r = r<<4 | rune(c)
	}
	return r, -1
}

// itoa avoids strconv for an error message.
func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// Valid reports whether data is one JSON document the scanner accepts.
func Valid(data []byte) bool {
	var s Scanner
	s.Reset(data)
	s.Skip()
	return s.Finish() == nil
}
