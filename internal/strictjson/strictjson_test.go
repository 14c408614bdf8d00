package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Location string `json:"location"`
}

type Embedded struct {
	Owner string `json:"owner"`
}

type request struct {
	Embedded
	Name       string            `json:"name"`
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
	Inner      *inner            `json:"inner"`
	Items      []inner           `json:"items"`
	Raw        json.RawMessage   `json:"raw"`
	Any        any               `json:"any"`
	Version    *int64            `json:"version"`
	Small      int32             `json:"small"`
	Ratio      float64           `json:"ratio"`
	Skipped    string            `json:"-"`
	Untagged   string
	Kind       string `json:"kind"`
}

// TestUnmarshalBad: every input a Go decoder would read differently from
// lakegate's exact reading is refused, naming what is wrong.
func TestUnmarshalBad(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"case variant at the top", `{"name":"a","Name":"b"}`, `"Name" is a case variant of the field "name"`},
		{"case variant alone", `{"NAME":"b"}`, `case variant of the field "name"`},
		{"Kelvin sign", "{\"\u212Aind\":\"x\"}", `variant of the field "kind"`},
		{"long s", "{\"name\":\"a\",\"\u017Fmall\":1}", `case variant of the field "small"`},
		{"case variant nested", `{"inner":{"Location":"x"}}`, `at inner: key "Location"`},
		{"case variant in an array item", `{"items":[{"location":"a"},{"LOCATION":"b"}]}`, `at items[1]`},
		{"case variant of a promoted field", `{"Owner":"x"}`, `variant of the field "owner"`},
		{"case variant of an untagged field", `{"untagged":"x"}`, `variant of the field "Untagged"`},
		{"duplicate at the top", `{"name":"a","name":"b"}`, `duplicate key "name"`},
		{"duplicate nested", `{"inner":{"location":"a","location":"b"}}`, `at inner: duplicate key "location"`},
		{"duplicate in a map", `{"properties":{"k":"a","k":"b"}}`, `duplicate key "k"`},
		{"duplicate under raw", `{"raw":{"a":1,"a":2}}`, `duplicate key "a"`},
		{"duplicate under any", `{"any":[{"a":1,"a":2}]}`, `duplicate key "a"`},
		{"escaped duplicate", `{"name":"a","n\u0061me":"b"}`, `duplicate key "name"`},
		{"BOM", "\xef\xbb\xbf{\"name\":\"a\"}", "invalid character"},
		{"trailing data", `{"name":"a"}x`, "trailing data"},
		{"two values", `{"name":"a"}{"name":"b"}`, "trailing data"},
		{"invalid UTF-8", "{\"name\":\"\xff\"}", "UTF-8"},
		{"invalid UTF-8 in a key", "{\"n\xffame\":\"a\"}", "UTF-8"},
		{"lone surrogate", `{"name":"\ud800"}`, "surrogate"},
		{"NUL escape", `{"name":"a\u0000"}`, "NUL"},
		{"int64 out of range", `{"version":9223372036854775808}`, "does not fit"},
		{"int32 out of range", `{"small":2147483648}`, "does not fit"},
		{"fraction for an int", `{"version":1.5}`, "does not fit"},
		{"float infinite", `{"ratio":1e999}`, "does not fit"},
		{"empty", "  ", "empty body"},
		{"truncated", `{"name":`, "unexpected end"},
	} {
		var r request
		err := Unmarshal([]byte(tc.body), &r)
		if err == nil {
			t.Errorf("%s: %s passed", tc.name, tc.body)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestUnmarshalGood: unknown keys, map keys in any case and values under
// raw fields pass, and decode as encoding/json decodes them.
func TestUnmarshalGood(t *testing.T) {
	for _, body := range []string{
		`{"name":"a","vendor-field":1,"VENDOR":{"x":1,"X":2}}`,
		`{"properties":{"Location":"a","location":"b","LOCATION":"c"}}`,
		`{"raw":{"Name":1,"name":2},"any":{"A":1,"a":2}}`,
		`{"namespace":["a","b"],"inner":null,"items":[],"version":-9223372036854775808,"small":-2147483648,"ratio":1e308}`,
		`{"Skipped":"x","-":"y"}`,
		" \n{\"name\":\"\u212A\"} \n",
	} {
		var got, want request
		if err := Unmarshal([]byte(body), &got); err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		_ = json.Unmarshal([]byte(body), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", body, got, want)
		}
	}
}

// TestDecodeAsEncodingJSON: Decode's value is what a Decoder with
// UseNumber gives.
func TestDecodeAsEncodingJSON(t *testing.T) {
	body := `{"a":[1,"x",true,null,{"b":1.5e3}],"c":{},"d":[]}`
	got, err := Decode([]byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var want any
	_ = dec.Decode(&want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// TestFold: the names a Go decoder takes for one another.
func TestFold(t *testing.T) {
	for _, pair := range [][2]string{{"name", "NAME"}, {"kind", "\u212Aind"}, {"small", "\u017Fmall"}, {"metadata-location", "Metadata-Location"}} {
		if Fold(pair[0]) != Fold(pair[1]) {
			t.Errorf("%q and %q fold apart", pair[0], pair[1])
		}
	}
	if Fold("a-b") == Fold("a_b") {
		t.Error("a-b and a_b fold together")
	}
}

// FuzzUnmarshal: what passes decodes as encoding/json decodes it, and
// encoding/json sees the same keys (no two keys of an object fold to one
// field).
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"name":"a","Name":"b"}`, `{"properties":{"K":"v"}}`, `{"items":[{"location":"x"}]}`, `{"version":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got request
		if Unmarshal(body, &got) != nil {
			return
		}
		var want request
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("passed, but encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v != %+v", got, want)
		}
	})
}

// FuzzDecodeAgrees: the scanner accepts exactly what encoding/json
// accepts (after CheckText), reads the same value, and refuses beyond it
// only repeated keys.
func FuzzDecodeAgrees(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0.5e+3,"x\n\u00e9\ud83d\ude00",true,false,null,{}]}`, `[]`, `"s"`, `1`, ` {"a":1,"a":2} `,
		`{"a":1,}`, `[1,]`, `01`, `-`, `1.`, `1e`, `"\x"`, `"\u12"`, `tru`, `nul`, "\"a\tb\"", `{"a" 1}`, `[1 2]`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Decode(data, nil)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		jerr := dec.Decode(&want)
		if jerr == nil && dec.InputOffset() < int64(len(bytes.TrimRight(data, " \t\r\n"))) {
			jerr = errors.New("trailing data")
		}
		if jerr == nil {
			jerr = CheckText(data)
		}
		switch {
		case err == nil && jerr != nil:
			t.Fatalf("accepted what encoding/json refuses (%v)", jerr)
		case err == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("read %#v, encoding/json %#v", got, want)
		case err != nil && jerr == nil && !strings.Contains(err.Error(), "duplicate key") && !strings.Contains(err.Error(), "max depth"):
			t.Fatalf("refused what encoding/json accepts: %v", err)
		}
	})
}
