package strictjson

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestSyntaxErrorsAsEncodingJSON: text that is not JSON is refused in
// encoding/json's words, which clients know.
func TestSyntaxErrorsAsEncodingJSON(t *testing.T) {
	for _, body := range []string{`{"a":1,}`, `[1,]`, `[01]`, `-`, `1.`, `1e`, `"\x"`, `"\u12"`, `"\u12g4"`, `tru`, `trux`, `nul`,
		"\"a\tb\"", `{"a" 1}`, `[1 2]`, `{1:2}`, `}`, `{"a":1`, "\xef\xbb\xbf{}", `{"a":[1,{"b":nulx}]}`} {
		_, err := Decode([]byte(body), nil)
		var ours *SyntaxError
		var theirs *json.SyntaxError
		if !errors.As(err, &ours) || !errors.As(json.Unmarshal([]byte(body), new(any)), &theirs) || ours.Error() != theirs.Error() {
			t.Errorf("%s: %v, encoding/json: %v", body, err, theirs)
		}
	}
}

// TestRefusalsName: what is not a syntax error says what is wrong, and a
// repeated key where it is.
func TestRefusalsName(t *testing.T) {
	for body, want := range map[string]string{
		`{"a":[{"b":1,"c":{},"b":2}]}`: `at a[0]: duplicate key "b"`,
		`[{"x":1,"\u0078":2}]`:         `at item 0: duplicate key "x"`,
		`{"a":1} {}`:                   "trailing data after the JSON value",
		`{"a":["\u0000"]}`:             `NUL (\u0000) in a string`,
		`{"a":"\udfff"}`:               "lone surrogate escape in a string",
		"{\"a\":\"\xc0\"}":             "not valid UTF-8",
		" \t\n":                        "empty body",
	} {
		if _, err := Decode([]byte(body), nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", body, err, want)
		}
	}
}
