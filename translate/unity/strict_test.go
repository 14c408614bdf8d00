package unity

import (
	"net/http"
	"strings"
	"testing"
)

// TestParseStrict: a UC catalogs API body a Go decoder would read
// otherwise than lakegate checked it is a 400 INVALID_ARGUMENT naming the
// key; unknown keys and property keys in any case still pass.
func TestParseStrict(t *testing.T) {
	const table = `"name":"t","catalog_name":"c","schema_name":"s","table_type":"EXTERNAL","storage_location":"file:///in/t"`
	for _, tc := range []struct{ name, body, want string }{
		{"case variant at the top", `{` + table + `,"Storage_Location":"file:///outside/t"}`,
			`malformed CreateTable: at the top level: key "Storage_Location" is a case variant of the field "storage_location"`},
		{"case variant nested", `{` + table + `,"columns":[{"name":"a","Name":"b","type_json":"{}"}]}`,
			`malformed CreateTable: at columns[0]: key "Name" is a case variant of the field "name"`},
		{"duplicate at the top", `{` + table + `,"name":"u"}`, `malformed CreateTable: at the top level: duplicate key "name"`},
		{"duplicate in a map", `{` + table + `,"properties":{"k":"a","k":"b"}}`, `malformed CreateTable: at properties: duplicate key "k"`},
		{"escaped duplicate", `{` + table + `,"n\u0061me":"u"}`, `malformed CreateTable: at the top level: duplicate key "name"`},
		{"BOM", "\xef\xbb\xbf{" + table + "}", `malformed CreateTable: invalid character 'ï' looking for beginning of value`},
		{"trailing data", `{` + table + `}x`, `malformed CreateTable: trailing data after the JSON value`},
		{"invalid UTF-8", "{" + table + ",\"comment\":\"\xff\"}", `malformed CreateTable: not valid UTF-8`},
		{"int out of range", `{` + table + `,"columns":[{"name":"a","type_json":"{}","partition_index":9223372036854775808}]}`, "does not fit"},
	} {
		_, err := ParseCreateTable([]byte(tc.body))
		if err == nil {
			t.Errorf("%s: passed", tc.name)
			continue
		}
		e := AsError(err)
		if e.Status != http.StatusBadRequest || e.Code != InvalidArgument || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: %d %s %q, want 400 %s containing %q", tc.name, e.Status, e.Code, e.Message, InvalidArgument, tc.want)
		}
	}
	for _, tc := range []struct{ name, body, want string }{
		{"schema case variant", `{"name":"s","catalog_name":"c","Catalog_Name":"other"}`, `key "Catalog_Name" is a case variant of the field "catalog_name"`},
		{"schema duplicate", `{"name":"s","name":"t","catalog_name":"c"}`, `duplicate key "name"`},
	} {
		_, err := ParseCreateSchema([]byte(tc.body))
		if e := AsError(err); err == nil || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: %v, want a 400 containing %q", tc.name, err, tc.want)
		}
	}
	for _, body := range []string{
		`{` + table + `,"x-vendor":{"A":1,"a":2},"properties":{"Owner":"a","owner":"b"}}`,
	} {
		if _, err := ParseCreateTable([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
