package delta

import (
	"bytes"
	"net/http"
	"testing"
)

// TestBodiesRefuseRepairedText: invalid UTF-8, lone surrogate escapes and
// NUL, which encoding/json would turn into U+FFFD (or keep, for NUL) in
// names, locations, properties and comments, are a 400 in the UC Delta
// API's error model, before anything is translated.
func TestBodiesRefuseRepairedText(t *testing.T) {
	// with puts raw text where the create body says PLACE.
	with := func(mut func(m map[string]any), raw string) []byte {
		return bytes.ReplaceAll(createReq(mut), []byte("PLACE"), []byte(raw))
	}
	for _, tc := range []struct {
		name, message string
		body          []byte
	}{
		{"surrogate in name", "lone surrogate escape in a string", with(func(m map[string]any) { m["name"] = "PLACE" }, `\ud800`)},
		{"surrogate in location", "lone surrogate escape in a string", with(func(m map[string]any) { m["location"] = "file:///tmp/PLACE" }, `\udfff`)},
		{"surrogate in property key", "lone surrogate escape in a string", with(func(m map[string]any) { m["properties"] = map[string]string{"PLACE": "v"} }, `\ud83d`)},
		{"surrogate in property value", "lone surrogate escape in a string", with(func(m map[string]any) { m["properties"] = map[string]string{"k": "PLACE"} }, `\ud800x`)},
		{"surrogate in comment", "lone surrogate escape in a string", with(func(m map[string]any) { m["comment"] = "PLACE" }, `\ud800`)},
		{"NUL in property value", `NUL (\u0000) in a string`, with(func(m map[string]any) { m["properties"] = map[string]string{"k": "PLACE"} }, `\u0000`)},
		{"invalid UTF-8 in name", "not valid UTF-8", with(func(m map[string]any) { m["name"] = "PLACE" }, "\xff")},
		{"invalid UTF-8 in comment", "not valid UTF-8", with(func(m map[string]any) { m["comment"] = "PLACE" }, "a\xc3")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCreate(tc.body)
			requireError(t, err, http.StatusBadRequest, BadRequest, "malformed request body: "+tc.message)
		})
	}
	for _, parse := range []func([]byte) error{
		func(b []byte) error { _, err := parseUpdate(b); return err },
		func(b []byte) error { _, err := parseRename(b); return err },
		func(b []byte) error { _, err := parseStaging(b); return err },
	} {
		err := parse([]byte(`{"new-name":"\ud800","name":"\ud800","comment":"\udc00"}`))
		requireError(t, err, http.StatusBadRequest, BadRequest, "malformed request body: lone surrogate escape in a string")
	}
	// A pair is one character: it passes this check.
	if _, err := ParseCreate(with(func(m map[string]any) { m["comment"] = "PLACE" }, `\ud83d\ude00`)); err != nil {
		t.Errorf("a surrogate pair: %v", err)
	}
}
