package jsonscan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Documents the scanner accepts, and encoding/json with it.
var good = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `false`, `null`,
	` {"a" : [1, 2.0, -3e+4, "x", true, false, null, {}, []] } `,
	`{"a":{"a":{"a":1}},"b":{"a":2}}`, // the same key in different objects
	`"\" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`,
	`"\ud800"`,               // a lone surrogate: valid JSON, kept as U+FFFD
	`"héllo ☃ 😀"`,            // UTF-8
	`{"a\u0062":1,"ab\n":2}`, // escaped keys that differ
	"\t\r\n[1]\n",
}

// Documents the scanner refuses, and why.
var bad = map[string]string{
	"empty":                      ``,
	"only space":                 `   `,
	"trailing data":              `{} {}`,
	"trailing garbage":           `{}x`,
	"byte order mark":            "\xef\xbb\xbf{}",
	"invalid UTF-8":              "\"\xff\"",
	"truncated UTF-8":            "\"\xe2\x98\"",
	"overlong UTF-8":             "\"\xc0\xaf\"",
	"UTF-16 surrogate in UTF-8":  "\"\xed\xa0\x80\"",
	"invalid UTF-8 in a key":     "{\"\xff\":1}",
	"duplicate key":              `{"a":1,"a":2}`,
	"duplicate key, escaped":     `{"a":1,"\u0061":2}`,
	"duplicate key, nested":      `[{"x":{"b":1,"c":2,"b":3}}]`,
	"control character":          "\"a\x01b\"",
	"newline in a string":        "\"a\nb\"",
	"bad escape":                 `"\x"`,
	"short unicode escape":       `"\u12"`,
	"bad unicode escape":         `"\u12g4"`,
	"unterminated string":        `"abc`,
	"unterminated object":        `{"a":1`,
	"unterminated array":         `[1,2`,
	"trailing comma in object":   `{"a":1,}`,
	"trailing comma in array":    `[1,]`,
	"leading comma":              `[,1]`,
	"missing comma":              `[1 2]`,
	"missing colon":              `{"a" 1}`,
	"non-string key":             `{1:2}`,
	"single quotes":              `{'a':1}`,
	"leading zero":               `01`,
	"plus sign":                  `+1`,
	"bare minus":                 `-`,
	"dot without digits":         `1.`,
	"exponent without digits":    `1e`,
	"leading dot":                `.5`,
	"NaN":                        `NaN`,
	"misspelt true":              `tru`,
	"misspelt null":              `nul`,
	"misspelt false":             `fals`,
	"mismatched brackets":        `[}`,
	"closing without opening":    `}`,
	"comment":                    `{} // no`,
	"too deep":                   strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	"many keys, one repeated":    manyKeys(200, true),
	"value after a complete doc": `1 2`,
}

func manyKeys(n int, repeat bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + itoa(i) + `":1`)
	}
	if repeat {
		b.WriteString(`,"k7":2`)
	}
	b.WriteString("}")
	return b.String()
}

func TestValid(t *testing.T) {
	for _, doc := range append(good, manyKeys(200, false), strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)) {
		if !Valid([]byte(doc)) {
			var s Scanner
			s.Reset([]byte(doc))
			s.Skip()
			t.Errorf("refused %.60q: %v", doc, s.Finish())
		}
		if !json.Valid([]byte(doc)) {
			t.Errorf("encoding/json refuses %.60q: a bad test", doc)
		}
	}
	for name, doc := range bad {
		if Valid([]byte(doc)) {
			t.Errorf("%s: accepted %.60q", name, doc)
		}
	}
}

// A walk reads what it asks for, and an error names where it was found.
func TestWalk(t *testing.T) {
	var s Scanner
	s.Reset([]byte(` {"n": -12, "big": 9223372036854775808, "f": 1.0, "s": "a\tb", "b": false, "z": null, "a": [1, {}]}`))
	if !s.BeginObject() {
		t.Fatal("no object")
	}
	got := map[string]any{}
	for s.More() {
		key := string(s.Key())
		switch s.Peek() {
		case Number:
			v, ok := s.Int()
			got[key] = [2]any{v, ok}
		case String:
			v, _ := s.Str()
			got[key] = string(v)
		case Bool:
			v, _ := s.Bool()
			got[key] = v
		case Null:
			got[key] = s.Null()
		default:
			s.Skip()
			got[key] = "skipped"
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": [2]any{int64(-12), true}, "big": [2]any{int64(0), false}, "f": [2]any{int64(0), false},
		"s": "a\tb", "b": false, "z": true, "a": "skipped"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}

	s.Reset([]byte(`{"a":1,"a":2}`))
	s.Skip()
	err := s.Finish()
	if e, ok := err.(*Error); !ok || e.Offset != 11 {
		t.Errorf("error %v, want one at offset 11", err)
	}
}

func TestInt(t *testing.T) {
	for lit, want := range map[string]int64{"0": 0, "-0": 0, "9223372036854775807": 1<<63 - 1,
		"-9223372036854775808": -1 << 63, "42": 42} {
		if v, ok := parseInt([]byte(lit)); !ok || v != want {
			t.Errorf("%s: %d %v", lit, v, ok)
		}
	}
	for _, lit := range []string{"9223372036854775808", "-9223372036854775809", "1.0", "1e2", "99999999999999999999"} {
		if _, ok := parseInt([]byte(lit)); ok {
			t.Errorf("%s: read as an int64", lit)
		}
	}
}

// Scanning reuses the scanner's buffers: a steady state allocates nothing.
func TestScanAllocatesNothing(t *testing.T) {
	doc := []byte(`{"a":[1,2,{"b":"c\n\u00e9"}],"k\u0031":"v","big":` + manyKeys(20, false) + `}`)
	var s Scanner
	allocs := testing.AllocsPerRun(100, func() {
		s.Reset(doc)
		s.Skip()
		if s.Finish() != nil {
			t.Fatal(s.Err())
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per scan", allocs)
	}
}

// FuzzValid: the scanner accepts exactly what encoding/json accepts, less
// what it refuses on purpose (invalid UTF-8, repeated keys, nesting past
// MaxDepth); and a walk that reads values never panics.
func FuzzValid(f *testing.F) {
	for _, doc := range good {
		f.Add([]byte(doc))
	}
	for _, doc := range bad {
		if len(doc) < 1000 {
			f.Add([]byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, theirs := Valid(data), json.Valid(data)
		if ours && !theirs {
			t.Fatalf("accepted what encoding/json refuses: %q", data)
		}
		if theirs && !ours && utf8.Valid(data) && !repeatsKey(data) {
			var s Scanner
			s.Reset(data)
			s.Skip()
			t.Fatalf("refused valid JSON %q: %v", data, s.Finish())
		}
		walk(data)
	})
}

// repeatsKey tells whether some object in a valid document repeats a
// key, by encoding/json's decoder.
func repeatsKey(data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var repeats func() bool
	repeats = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				key, _ := k.(string)
				if seen[key] || repeats() {
					return true
				}
				seen[key] = true
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if repeats() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return repeats()
}

// walk reads data as a caller would, typed reads first.
func walk(data []byte) {
	var s Scanner
	s.Reset(data)
	var value func()
	value = func() {
		switch {
		case s.BeginObject():
			for s.More() {
				s.Key()
				value()
			}
		case s.BeginArray():
			for s.More() {
				value()
			}
		default:
			if _, ok := s.Str(); ok {
				return
			}
			if _, ok := s.Int(); ok {
				return
			}
			if s.Null() {
				return
			}
			s.Skip()
		}
	}
	value()
	_ = s.Finish()
}

// BenchmarkSkip: validating a table-metadata-like document.
func BenchmarkSkip(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`{"metadata":{"snapshots":[`)
	for i := range 1000 {
		if i > 0 {
			doc.WriteString(",")
		}
		doc.WriteString(`{"snapshot-id":` + itoa(i) + `,"timestamp-ms":1796173688714,"manifest-list":"s3://bucket/warehouse/ns.db/t/metadata/snap-1.avro","summary":{"operation":"append","added-records":"100"}}`)
	}
	doc.WriteString(`]}}`)
	data := []byte(doc.String())
	var s Scanner
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s.Reset(data)
		s.Skip()
		if s.Finish() != nil {
			b.Fatal(s.Err())
		}
	}
}

// Repeated keys are found by the keys, not by their hashes alone: with
// every hash narrowed to two bits, distinct keys collide all the time and
// are kept, and a repeated one (however escaped) is still refused, in
// small objects and in big ones (indexed by hash).
func TestRepeatedKeysExact(t *testing.T) {
	defer func(m uint64) { hashMask = m }(hashMask)
	hashMask = 3
	for _, n := range []int{3, bigObject - 1, bigObject, bigObject + 1, 200} {
		if doc := manyKeys(n, false); !Valid([]byte(doc)) {
			t.Errorf("%d distinct keys with colliding hashes refused", n)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			doc := manyKeys(n, false)
			doc = doc[:len(doc)-1] + `,"k` + itoa(at) + `":2}`
			if Valid([]byte(doc)) {
				t.Errorf("%d keys: k%d repeated at the end passed", n, at)
			}
			escaped := doc[:len(doc)-len(`"k`+itoa(at)+`":2}`)] + `"\u006b` + itoa(at) + `":2}`
			if Valid([]byte(escaped)) {
				t.Errorf("%d keys: k%d repeated, escaped, passed", n, at)
			}
		}
	}
	var s Scanner
	s.Reset([]byte(`{"x":{"a":1},"b\u0061d":1,"y":[{"bad":1}],"bad":2}`))
	s.Skip()
	var e *Error
	if err := s.Finish(); !errors.As(err, &e) || e.Reason != RepeatedKey || e.Key != "bad" {
		t.Errorf("got %v (%+v), want the repeated key named", err, e)
	}
}

// StrictEscapes refuses what a lenient reader stores otherwise than sent;
// by default those are read (a lone surrogate as U+FFFD).
func TestStrictEscapes(t *testing.T) {
	for doc, refused := range map[string]bool{
		`"a\u0000"`:            true,
		`{"k\u0000":1}`:        true,
		`"\ud800"`:             true,
		`"\udc00"`:             true,
		`"\ud800\u0041"`:       true,
		`"\ud800\ud800\udc00"`: true,
		`"\ud800x"`:            true,
		`"\ud83d\ude00"`:       false,
		`"\u0001 \\u0000"`:     false,
		`"\u00e9\uffff"`:       false,
	} {
		e := refusal(doc, StrictEscapes)
		if got := e != nil && e.Reason == BadEscape; got != refused {
			t.Errorf("%s: refused %v (%v), want %v", doc, got, e, refused)
		}
		if !Valid([]byte(doc)) {
			t.Errorf("%s: refused by default", doc)
		}
	}
}

// refusal is the error of a scan of doc, nil when it passes.
func refusal(doc string, mode Mode) *Error {
	var s Scanner
	s.ResetMode([]byte(doc), mode)
	s.Skip()
	var e *Error
	errors.As(s.Finish(), &e)
	return e
}

// Errors say why, for a caller to word them its own way.
func TestReasons(t *testing.T) {
	for doc, want := range map[string]Reason{
		`{"a" 1}`:                  NotJSON,
		`tru`:                      NotJSON,
		"\"\xff\"":                 BadUTF8,
		`{"a":1,"a":1}`:            RepeatedKey,
		strings.Repeat("[", 10001): TooDeep,
		`{} {}`:                    Trailing,
	} {
		if e := refusal(doc, 0); e == nil || e.Reason != want {
			t.Errorf("%.20s: %v, want reason %d", doc, e, want)
		}
	}
	var s Scanner
	s.Reset([]byte(`1`))
	s.Fail("not a string")
	var e *Error
	if !errors.As(s.Finish(), &e) || e.Reason != Refused {
		t.Errorf("Fail: %+v", e)
	}
}

// An error is found at the byte that is wrong, or at the end of the
// input when it ended early.
func TestErrorOffsets(t *testing.T) {
	for doc, want := range map[string]int{
		`trux`:       3,
		`tr`:         2,
		`"\x"`:       2,
		`"\u12g4"`:   5,
		`"\u12`:      5,
		`"ab`:        3,
		`[1 2]`:      3,
		`{"a":1,"a"`: 10,
	} {
		if e := refusal(doc, 0); e == nil || e.Offset != want {
			t.Errorf("%s: %v, want an error at offset %d", doc, e, want)
		}
	}
}

// Num reads a number's literal as written.
func TestNum(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`[-1.5e+3, 0, "x"]`))
	s.BeginArray()
	var got []string
	for s.More() {
		if lit, ok := s.Num(); ok {
			got = append(got, string(lit))
		} else {
			s.Skip()
		}
	}
	if err := s.Finish(); err != nil || strings.Join(got, " ") != "-1.5e+3 0" {
		t.Errorf("%q, %v", got, err)
	}
}

// Comparing keys whose hashes collide reads the earlier key again into a
// buffer kept like the others: still nothing allocated.
func TestCollidingKeysAllocateNothing(t *testing.T) {
	defer func(m uint64) { hashMask = m }(hashMask)
	hashMask = 1
	doc := []byte(`{"a\u0031":1,"a2":2,"a\u0033":3,"k":` + manyKeys(20, false) + `}`)
	var s Scanner
	allocs := testing.AllocsPerRun(100, func() {
		s.ResetMode(doc, StrictEscapes)
		s.Skip()
		if s.Finish() != nil {
			t.Fatal(s.Err())
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per scan", allocs)
	}
}
