package delta

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeStrict: a Delta API body a Go decoder would read otherwise
// than lakegate checked it (a case variant of a field, a repeated key,
// text encoding/json repairs) is a 400 BadRequest naming the key; unknown
// keys and property keys in any case still pass.
func TestDecodeStrict(t *testing.T) {
	create := func(extra string) []byte {
		return []byte(strings.Replace(string(createReq(func(map[string]any) {})), "{", "{"+extra, 1))
	}
	update := func(updates string) []byte {
		return []byte(`{"requirements":[` + okUUID + `],"updates":[` + updates + `]}`)
	}
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		body  []byte
		want  string
	}{
		{"case variant at the top", parseCreateErr, create(`"Location":"file:///outside/t",`), `at the top level: key "Location" is a case variant of the field "location"`},
		{"case variant nested", parseCreateErr, create(`"protocol":{"min-reader-version":1,"min-writer-version":2,"Min-Reader-Version":3},`), `at protocol: key "Min-Reader-Version"`},
		{"case variant in an update", parseUpdateErr, update(`{"action":"set-table-comment","comment":"a","Comment":"b"}`), `at updates[0]: key "Comment"`},
		{"long s (U+017F) folds to s", parseCreateErr, create(`"column\u017f":{"type":"struct","fields":[]},`), `key "columnſ" is a case variant of the field "columns"`},
		{"duplicate at the top", parseRenameErr, []byte(`{"new-name":"a","new-name":"b"}`), `duplicate key "new-name"`},
		{"duplicate nested", parseCreateErr, create(`"protocol":{"min-reader-version":1,"min-reader-version":3,"min-writer-version":2},`), `at protocol: duplicate key "min-reader-version"`},
		{"duplicate in a map", parseCreateErr, create(`"properties":{"k":"a","k":"b"},`), `at properties: duplicate key "k"`},
		{"duplicate under columns", parseCreateErr, create(`"columns":{"type":"struct","type":"map","fields":[]},`), `at columns: duplicate key "type"`},
		{"duplicate in set-properties", parseUpdateErr, update(`{"action":"set-properties","updates":{"k":"a","k":"b"}}`), `duplicate key "k"`},
		{"escaped duplicate", parseRenameErr, []byte(`{"new-name":"a","new-n\u0061me":"b"}`), `duplicate key "new-name"`},
		{"BOM", parseRenameErr, []byte("\xef\xbb\xbf{\"new-name\":\"a\"}"), "invalid character"},
		{"trailing data", parseRenameErr, []byte(`{"new-name":"a"} {}`), "trailing data"},
		{"invalid UTF-8", parseRenameErr, []byte("{\"new-name\":\"a\xff\"}"), "not valid UTF-8"},
		{"int out of range", parseCreateErr, create(`"last-commit-timestamp-ms":9223372036854775808,`), "does not fit int64"},
	} {
		err := tc.parse(tc.body)
		require.Error(t, err, tc.name)
		e := AsError(err)
		assert.Equal(t, http.StatusBadRequest, e.Code, tc.name)
		assert.Equal(t, BadRequest, e.Type, tc.name)
		assert.Contains(t, e.Message, tc.want, tc.name)
	}
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		body  []byte
	}{
		{"unknown keys", parseRenameErr, []byte(`{"new-name":"a","x-vendor":{"A":1,"a":2}}`)},
		{"property keys in any case", parseCreateErr, createReq(func(m map[string]any) { m["properties"] = map[string]string{"Owner": "a", "owner": "b"} })},
		{"set-properties keys in any case", parseUpdateErr, update(`{"action":"set-properties","updates":{"K":"a","k":"b"}}`)},
	} {
		assert.NoError(t, tc.parse(tc.body), tc.name)
	}
}

func parseCreateErr(b []byte) error { _, err := ParseCreate(b); return err }
func parseUpdateErr(b []byte) error { _, err := parseUpdate(b); return err }
func parseRenameErr(b []byte) error { _, err := parseRename(b); return err }
