package embedded_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// What Iceberg's reference server (Java) refuses with 400
// ValidationException, the embedded catalog refuses the same way: before
// issue 38 these were 500s, or stored and then unloadable by Java engines.
func TestJavaValidation(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	const schema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},` +
		`{"id":2,"name":"b","type":"boolean","required":false},{"id":3,"name":"ts","type":"timestamp","required":false}]}`
	spec := func(source int, transform string) string {
		return `{"spec-id":0,"fields":[{"source-id":` + strconv.Itoa(source) + `,"field-id":1000,"name":"p","transform":"` + transform + `"}]}`
	}
	order := func(source int, transform string) string {
		return `{"order-id":1,"fields":[{"source-id":` + strconv.Itoa(source) + `,"transform":"` + transform + `","direction":"asc","null-order":"nulls-first"}]}`
	}
	create := func(name, extra string) string { return `{"name":"` + name + `","schema":` + schema + extra + `}` }
	c.post(t, "/v1/{p}/namespaces/ns/tables", create("base", ""))
	base := c.metadataLocation(t, "base")
	addSpec := func(source int, transform string) string {
		return commitBody("", "", `{"action":"add-spec","spec":`+spec(source, transform)+`}`)
	}
	addOrder := func(source int, transform string) string {
		return commitBody("", "", `{"action":"add-sort-order","sort-order":`+order(source, transform)+`}`)
	}
	long := strings.Repeat("n", 300)
	for _, tc := range []struct{ name, path, body string }{
		{"partition source missing", "tables", create("a", `,"partition-spec":`+spec(9, "identity"))},
		{"sort source missing", "tables", create("a", `,"write-order":`+order(9, "identity"))},
		{"day of a long", "tables", create("a", `,"partition-spec":`+spec(1, "day"))},
		{"truncate of a boolean", "tables", create("a", `,"partition-spec":`+spec(2, "truncate[4]"))},
		{"bucket of a boolean in the write order", "tables", create("a", `,"write-order":`+order(2, "bucket[2]"))},
		{"staged: day of a long", "tables", create("a", `,"stage-create":true,"partition-spec":`+spec(1, "day"))},
		{"300-byte table name", "tables", create(long, "")},
		{"300-byte namespace", "", `{"namespace":["` + long + `"]}`},
		{"commit add-spec: day of a long", "tables/base", addSpec(1, "day")},
		{"commit add-spec: missing source", "tables/base", addSpec(9, "identity")},
		{"commit add-sort-order: truncate of a boolean", "tables/base", addOrder(2, "truncate[2]")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/{p}/namespaces"
			if tc.path != "" {
				path += "/ns/" + tc.path
			}
			rsp, b := c.do(t, http.MethodPost, path, strings.NewReader(tc.body))
			require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s", b)
			var e struct {
				Error struct{ Type string } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(b, &e))
			t.Logf("%s", b)
			require.Equal(t, "ValidationException", e.Error.Type, "%s", b)
			require.Equal(t, base, c.metadataLocation(t, "base"), "the table did not change")
		})
	}
	// What fits is taken: a day of a timestamp, in a create and in a commit.
	c.post(t, "/v1/{p}/namespaces/ns/tables", create("ok", `,"partition-spec":`+spec(3, "day")))
	c.post(t, "/v1/{p}/namespaces/ns/tables/base", addSpec(3, "day"))
}
