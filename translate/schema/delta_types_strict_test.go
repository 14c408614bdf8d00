package schema

import (
	"strings"
	"testing"
)

// TestParseClientSchemasStrict: in a schema a client sent, a case
// variant of a key the parser reads, or a repeated key, is an error (a Go
// decoder would read the variant, or the other duplicate); unknown keys
// and what lakegate stored are read as before.
func TestParseClientSchemasStrict(t *testing.T) {
	const field = `{"name":"a","type":"long","nullable":true,"metadata":{}}`
	for _, tc := range []struct{ name, body, want string }{
		{"Type at the top", `{"type":"struct","Fields":[]}`, `key "Fields" is a case variant of "fields"`},
		{"Nullable in a field", `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"Nullable":false,"metadata":{}}]}`, `"Nullable"`},
		{"nested type", `{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"long","containsNull":true,"ContainsNull":false},"nullable":true,"metadata":{}}]}`, `"ContainsNull"`},
		{"duplicate type", `{"type":"struct","fields":[{"name":"a","type":"long","type":"string","nullable":true,"metadata":{}}]}`, `duplicate key "type"`},
		{"escaped duplicate name", `{"type":"struct","fields":[{"name":"a","n\u0061me":"b","type":"long","nullable":true,"metadata":{}}]}`, `duplicate key "name"`},
	} {
		_, err := ParseClientStructType([]byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseClientColumns([]byte(`{"type":"struct","fields":[{"name":"a","type":{"type":"map","key-type":"string","value-type":"long","value-contains-null":true,"Value-Type":"x"},"nullable":true,"metadata":{}}]}`)); err == nil || !strings.Contains(err.Error(), `"Value-Type"`) {
		t.Errorf("UC columns: %v", err)
	}
	for _, ok := range []string{
		`{"type":"struct","fields":[` + field + `],"x-vendor":1}`,
		`{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{"Comment":"c","comment":"d"}}]}`,
	} {
		if _, err := ParseClientStructType([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// A stored schema is read as it is.
	if _, err := ParseStructType([]byte(`{"type":"struct","fields":[` + field + `],"Fields":[]}`)); err != nil {
		t.Errorf("stored schema: %v", err)
	}
}
