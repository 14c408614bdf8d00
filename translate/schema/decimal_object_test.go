package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// The UC Delta API's object form of a decimal (DeltaDecimalType) is the
// same type as its string form, wherever a column type is read, and is
// written back as the string form, which reads as the same type again.
func TestDecimalObjectForm(t *testing.T) {
	wrap := func(typ string) string {
		return `{"type":"struct","fields":[{"name":"amount","type":` + typ + `,"nullable":true,"metadata":{}}]}`
	}
	for _, tc := range []struct {
		name, typ string
		parse     func([]byte) (StructType, error)
	}{
		{"UC columns", `{"type":"decimal","precision":10,"scale":2}`, ParseClientColumns},
		{"UC columns, keys in another order", `{"scale":2,"precision":10,"type":"decimal"}`, ParseColumns},
		{"schema string", `{"type":"decimal","precision":10,"scale":2}`, ParseStructType},
		{"type_json", `{"type":"decimal","precision":10,"scale":2}`, ParseClientStructType},
		{"array element", `{"type":"array","element-type":{"type":"decimal","precision":10,"scale":2},"contains-null":true}`, ParseClientColumns},
	} {
		st, err := tc.parse([]byte(wrap(tc.typ)))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := st.Fields[0].Type
		if a, ok := got.(ArrayType); ok {
			got = a.ElementType
		}
		if got != (DecimalType{Precision: 10, Scale: 2}) {
			t.Errorf("%s: %#v, want decimal(10,2)", tc.name, got)
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back, err := ParseStructType(out)
		if err != nil || back.Fields[0].Type != st.Fields[0].Type {
			t.Errorf("%s: round trip %s: %v", tc.name, out, err)
		}
	}
}

func TestDecimalObjectFormBadInput(t *testing.T) {
	for _, tc := range []struct{ name, typ, want string }{
		{"no precision", `{"type":"decimal","scale":2}`, `decimal missing "precision"`},
		{"no scale", `{"type":"decimal","precision":10}`, `decimal missing "scale"`},
		{"precision a string", `{"type":"decimal","precision":"10","scale":2}`, `"precision" must be an integer`},
		{"scale fractional", `{"type":"decimal","precision":10,"scale":2.5}`, `"scale" must be an integer`},
		{"scale null", `{"type":"decimal","precision":10,"scale":null}`, `"scale" must be an integer`},
		{"precision huge", `{"type":"decimal","precision":99999999999,"scale":2}`, `"precision" must be an integer`},
		{"precision over 38", `{"type":"decimal","precision":39,"scale":2}`, "precision must be between 1 and 38"},
		{"precision 0", `{"type":"decimal","precision":0,"scale":0}`, "precision must be between 1 and 38"},
		{"scale over precision", `{"type":"decimal","precision":5,"scale":6}`, "scale must be between 0 and precision"},
		{"negative scale", `{"type":"decimal","precision":5,"scale":-1}`, "scale must be between 0 and precision"},
		{"case variant key", `{"type":"decimal","precision":10,"scale":2,"Scale":3}`, `"Scale" is a case variant of "scale"`},
		{"duplicate key", `{"type":"decimal","precision":10,"scale":2,"scale":3}`, `duplicate key "scale"`},
	} {
		_, err := ParseClientColumns([]byte(`{"type":"struct","fields":[{"name":"amount","type":` + tc.typ + `,"nullable":true,"metadata":{}}]}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
