package delta

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/schema"
)

// every supported Delta type, nested ones included, with field metadata
const allTypes = `{"type":"struct","fields":[
 {"name":"s","type":"string","nullable":true,"metadata":{"comment":"a string"}},
 {"name":"l","type":"long","nullable":false,"metadata":{}},
 {"name":"i","type":"integer","nullable":true,"metadata":{}},
 {"name":"sh","type":"short","nullable":true,"metadata":{"custom":"kept","n":3}},
 {"name":"by","type":"byte","nullable":true,"metadata":{}},
 {"name":"f","type":"float","nullable":true,"metadata":{}},
 {"name":"d","type":"double","nullable":true,"metadata":{}},
 {"name":"b","type":"boolean","nullable":true,"metadata":{}},
 {"name":"bin","type":"binary","nullable":true,"metadata":{}},
 {"name":"dt","type":"date","nullable":true,"metadata":{}},
 {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
 {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
 {"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},
 {"name":"arr","type":{"type":"array","element-type":"short","contains-null":false},"nullable":true,"metadata":{}},
 {"name":"m","type":{"type":"map","key-type":"string","value-type":{"type":"array","element-type":"byte","contains-null":true},"value-contains-null":true},"nullable":true,"metadata":{}},
 {"name":"st","type":{"type":"struct","fields":[
   {"name":"x","type":"integer","nullable":false,"metadata":{"comment":"nested"}},
   {"name":"y","type":{"type":"struct","fields":[{"name":"z","type":"short","nullable":true,"metadata":{"k":"v"}}]},"nullable":true,"metadata":{}}
 ]},"nullable":false,"metadata":{}}
]}`

// Delta → Iceberg → Delta is the identity for every supported type: what
// Iceberg cannot say (short/byte, non-comment metadata) rides in PropColumns.
func TestRoundTripAllTypes(t *testing.T) {
	cols, err := schema.ParseColumns([]byte(allTypes))
	require.NoError(t, err)
	ice, err := schema.FromDelta(cols)
	require.NoError(t, err)
	ex, err := extras(cols, ice)
	require.NoError(t, err)
	back, err := toDelta(ice, map[string]string{PropColumns: ex})
	require.NoError(t, err)
	got, err := MarshalColumns(back)
	require.NoError(t, err)
	assert.JSONEq(t, allTypes, string(got))
}

// Each type alone, top level and nested in an array, a map and a struct.
func TestRoundTripEachTypeNested(t *testing.T) {
	for _, typ := range []string{`"string"`, `"long"`, `"integer"`, `"short"`, `"byte"`, `"float"`, `"double"`,
		`"boolean"`, `"binary"`, `"date"`, `"timestamp"`, `"timestamp_ntz"`, `"decimal(38,0)"`, `"decimal(1,1)"`} {
		for _, wrap := range []string{`%s`,
			`{"type":"array","element-type":%s,"contains-null":true}`,
			`{"type":"map","key-type":"string","value-type":%s,"value-contains-null":false}`,
			`{"type":"struct","fields":[{"name":"in","type":%s,"nullable":false,"metadata":{}}]}`} {
			in := `{"type":"struct","fields":[{"name":"c","type":` + sprintf(wrap, typ) + `,"nullable":true,"metadata":{}}]}`
			cols, err := schema.ParseColumns([]byte(in))
			require.NoError(t, err, in)
			ice, err := schema.FromDelta(cols)
			require.NoError(t, err, in)
			ex, err := extras(cols, ice)
			require.NoError(t, err)
			back, err := toDelta(ice, map[string]string{PropColumns: ex})
			require.NoError(t, err)
			got, err := MarshalColumns(back)
			require.NoError(t, err)
			assert.JSONEq(t, in, string(got))
		}
	}
}

func sprintf(wrap, typ string) string {
	out := []byte{}
	for i := 0; i < len(wrap); i++ {
		if wrap[i] == '%' && i+1 < len(wrap) && wrap[i+1] == 's' {
			out = append(out, typ...)
			i++
			continue
		}
		out = append(out, wrap[i])
	}
	return string(out)
}

func createReq(mut func(m map[string]any)) []byte {
	m := map[string]any{
		"name": "t", "location": "file:///tmp/t", "table-type": "MANAGED",
		"columns":                  json.RawMessage(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`),
		"protocol":                 map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties":               map[string]string{},
		"last-commit-timestamp-ms": 1,
	}
	mut(m)
	b, _ := json.Marshal(m)
	return b
}

func cols(fields string) json.RawMessage {
	return json.RawMessage(`{"type":"struct","fields":[` + fields + `]}`)
}

// delta.feature.<f>=supported for a feature the protocol lists is how Delta
// writers declare it: accepted, and not stored (it is derived).
func TestParseCreateDeclaredFeature(t *testing.T) {
	req, err := ParseCreate(createReq(func(m map[string]any) {
		m["protocol"] = map[string]any{"min-reader-version": 3, "min-writer-version": 7,
			"reader-features": []string{"catalogManaged"}, "writer-features": []string{"catalogManaged"}}
		m["properties"] = map[string]string{"delta.feature.catalogManaged": "supported", "k": "v"}
	}))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, req.Properties)
}

// Bad input for createTable: what comes in and the exact error out.
func TestParseCreateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    []byte
		typ     string
		message string
	}{
		{"empty body", nil, BadRequest, "request body is required"},
		{"not json", []byte(`{`), BadRequest, "malformed request body: unexpected end of JSON input"},
		{"missing name", createReq(func(m map[string]any) { delete(m, "name") }), InvalidParameterValue, "name is required"},
		{"missing location", createReq(func(m map[string]any) { delete(m, "location") }), InvalidParameterValue, "location is required"},
		{"missing table-type", createReq(func(m map[string]any) { delete(m, "table-type") }), InvalidParameterValue, "table-type is required"},
		{"bad table-type", createReq(func(m map[string]any) { m["table-type"] = "VIEW" }), InvalidParameterValue, `table-type must be MANAGED or EXTERNAL, got "VIEW"`},
		{"missing columns", createReq(func(m map[string]any) { delete(m, "columns") }), InvalidParameterValue, "columns is required"},
		{"missing protocol", createReq(func(m map[string]any) { delete(m, "protocol") }), InvalidParameterValue, "protocol is required"},
		{"protocol without reader", createReq(func(m map[string]any) { m["protocol"] = map[string]any{"min-writer-version": 2} }), InvalidParameterValue, "protocol.min-reader-version is required"},
		{"protocol zero", createReq(func(m map[string]any) {
			m["protocol"] = map[string]any{"min-reader-version": 0, "min-writer-version": 2}
		}), InvalidParameterValue, "protocol.min-reader-version must be 1, 2 or 3, got 0"},
		{"missing properties", createReq(func(m map[string]any) { delete(m, "properties") }), InvalidParameterValue, "properties is required (it may be empty)"},
		{"missing timestamp", createReq(func(m map[string]any) { delete(m, "last-commit-timestamp-ms") }), InvalidParameterValue, "last-commit-timestamp-ms is required"},
		{"derived property", createReq(func(m map[string]any) { m["properties"] = map[string]string{"delta.minReaderVersion": "3"} }), InvalidParameterValue, `property "delta.minReaderVersion" is derived by the server and cannot be written`},
		{"reserved property", createReq(func(m map[string]any) { m["properties"] = map[string]string{"lakegate.delta.protocol": "x"} }), InvalidParameterValue, `property "lakegate.delta.protocol" is reserved for lakegate's own bookkeeping (prefix "lakegate.delta.")`},
		{"unsupported type", createReq(func(m map[string]any) {
			m["columns"] = cols(`{"name":"v","type":"variant","nullable":true,"metadata":{}}`)
		}), InvalidParameterValue, `columns: schema: column "v": Delta type "variant" is not supported for Iceberg tables`},
		{"unknown type", createReq(func(m map[string]any) {
			m["columns"] = cols(`{"name":"v","type":"uuid","nullable":true,"metadata":{}}`)
		}), InvalidParameterValue, `columns: schema: column "v": unknown type "uuid"`},
		{"duplicate column", createReq(func(m map[string]any) {
			m["columns"] = cols(`{"name":"a","type":"long","nullable":true,"metadata":{}},{"name":"A","type":"long","nullable":true,"metadata":{}}`)
		}), InvalidParameterValue, `columns: schema: column "A": duplicate name (conflicts with "a")`},
		{"no column", createReq(func(m map[string]any) { m["columns"] = cols(``) }), InvalidParameterValue, "columns: no column: a table needs at least one"},
		{"column without metadata", createReq(func(m map[string]any) { m["columns"] = cols(`{"name":"a","type":"long","nullable":true}`) }),
			InvalidParameterValue, `columns: schema: column "a": missing "metadata" (an object, {} when empty)`},
		{"blank column name", createReq(func(m map[string]any) {
			m["columns"] = cols(`{"name":"   ","type":"long","nullable":true,"metadata":{}}`)
		}),
			InvalidParameterValue, `columns: schema: schema: field 0: empty name`},
		{"unknown partition column", createReq(func(m map[string]any) { m["partition-columns"] = []string{"nope"} }), InvalidParameterValue, `partition column "nope" is not a top-level column`},
		{"repeated partition column", createReq(func(m map[string]any) { m["partition-columns"] = []string{"id", "ID"} }), InvalidParameterValue, `partition column "ID" is listed twice`},
		{"bad domain", createReq(func(m map[string]any) { m["domain-metadata"] = map[string]any{"delta.clustering": map[string]any{}} }), InvalidParameterValue, `domain "delta.clustering": missing "clusteringColumns"`},
		{"domain without feature", createReq(func(m map[string]any) {
			m["domain-metadata"] = map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}}}}
		}), InvalidParameterValue, `domain metadata needs writer version 7 with the "domainMetadata" writer feature`},
		{"clustering without its feature", createReq(func(m map[string]any) {
			m["protocol"] = map[string]any{"min-reader-version": 1, "min-writer-version": 7, "writer-features": []string{"domainMetadata"}}
			m["domain-metadata"] = map[string]any{"delta.clustering": map[string]any{"clusteringColumns": [][]string{{"id"}}}}
		}), InvalidParameterValue, `domain "delta.clustering" needs the "clustering" writer feature`},
		{"property without feature", createReq(func(m map[string]any) { m["properties"] = map[string]string{"delta.enableDeletionVectors": "true"} }),
			InvalidParameterValue, `property delta.enableDeletionVectors=true needs the "deletionVectors" table feature in the protocol`},
		{"reader-writer feature without reader support", createReq(func(m map[string]any) {
			m["protocol"] = map[string]any{"min-reader-version": 1, "min-writer-version": 7, "writer-features": []string{"deletionVectors"}}
			m["properties"] = map[string]string{"delta.enableDeletionVectors": "true"}
		}), InvalidParameterValue, `property delta.enableDeletionVectors=true needs the "deletionVectors" table feature in the protocol`},
		{"column mapping on reader 1", createReq(func(m map[string]any) { m["properties"] = map[string]string{"delta.columnMapping.mode": "name"} }),
			InvalidParameterValue, `property delta.columnMapping.mode=name needs the "columnMapping" table feature (or reader 2 / writer 5)`},
		{"uniform without location", createReq(func(m map[string]any) { m["uniform"] = map[string]any{"iceberg": map[string]any{}} }), InvalidParameterValue, "uniform.iceberg.metadata-location is required when uniform is given"},
		{"bad name", createReq(func(m map[string]any) { m["name"] = "a/b" }), InvalidParameterValue, `invalid table name "a/b"`},
		{"blank name", createReq(func(m map[string]any) { m["name"] = "  " }), InvalidParameterValue, `invalid table name "  "`},
		{"feature key the protocol lacks", createReq(func(m map[string]any) {
			m["properties"] = map[string]string{"delta.feature.catalogManaged": "supported"}
		}), InvalidParameterValue, `property "delta.feature.catalogManaged"="supported": the protocol does not list feature "catalogManaged" (features are declared in protocol)`},
		{"control character", createReq(func(m map[string]any) { m["name"] = "a\nb" }), InvalidParameterValue, `invalid table name "a\nb"`},
		{"dotted name", createReq(func(m map[string]any) { m["name"] = "a.b" }), InvalidParameterValue,
			`table name "a.b" contains a dot: Unity Catalog table names are one level (catalog.schema.table is the full name)`},
		{"relative location", createReq(func(m map[string]any) { m["location"] = "tables/t" }), InvalidParameterValue,
			`location "tables/t" is not an absolute storage location: a relative location`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCreate(tc.body)
			requireError(t, err, http.StatusBadRequest, tc.typ, tc.message)
		})
	}
}

const okUUID = `{"type":"assert-table-uuid","uuid":"123e4567-e89b-12d3-a456-426614174000"}`

// Bad input for updateTable: shape rules and each action's fields.
func TestParseUpdateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, body, typ, message string
	}{
		{"no requirements", `{"requirements":[],"updates":[{"action":"set-table-comment","comment":"c"}]}`, BadRequest, "requirements must not be empty: an assert-table-uuid is always required"},
		{"no uuid requirement", `{"requirements":[{"type":"assert-etag","etag":"e"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`, BadRequest, "an assert-table-uuid requirement is required"},
		{"bad uuid", `{"requirements":[{"type":"assert-table-uuid","uuid":"nope"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`, InvalidParameterValue, `assert-table-uuid: "nope" is not a UUID`},
		{"uuid missing", `{"requirements":[{"type":"assert-table-uuid"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`, InvalidParameterValue, "assert-table-uuid needs uuid"},
		{"etag missing", `{"requirements":[` + okUUID + `,{"type":"assert-etag"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`, InvalidParameterValue, "assert-etag needs etag"},
		{"duplicate requirement", `{"requirements":[` + okUUID + `,` + okUUID + `],"updates":[{"action":"set-table-comment","comment":"c"}]}`, BadRequest, `requirement "assert-table-uuid" appears more than once`},
		{"unknown requirement", `{"requirements":[` + okUUID + `,{"type":"assert-x"}],"updates":[{"action":"set-table-comment","comment":"c"}]}`, BadRequest, `unknown requirement type "assert-x"`},
		{"no updates", `{"requirements":[` + okUUID + `],"updates":[]}`, BadRequest, "updates must not be empty"},
		{"unknown action", `{"requirements":[` + okUUID + `],"updates":[{"action":"drop-everything"}]}`, BadRequest, `unknown update action "drop-everything"`},
		{"missing action", `{"requirements":[` + okUUID + `],"updates":[{}]}`, BadRequest, "an update is missing its action"},
		{"duplicate action", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-table-comment","comment":"a"},{"action":"set-table-comment","comment":"b"}]}`, BadRequest, `update "set-table-comment" appears more than once; send at most one of each`},
		{"overlapping keys", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-properties","updates":{"k":"v"}},{"action":"remove-properties","removals":["k"]}]}`, BadRequest, `property "k" is both set and removed`},
		{"overlapping domains", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-domain-metadata","updates":{"d":{"a":1}}},{"action":"remove-domain-metadata","domains":["d"]}]}`, BadRequest, `domain "d" is both set and removed`},
		{"set-properties without updates", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-properties"}]}`, InvalidParameterValue, "set-properties needs updates"},
		{"set-properties not strings", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-properties","updates":{"k":1}}]}`, InvalidParameterValue, "set-properties: updates must be an object of strings"},
		{"set derived key", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-properties","updates":{"delta.feature.x":"supported"}}]}`, InvalidParameterValue, `property "delta.feature.x" is derived by the server and cannot be written`},
		{"remove comment key", `{"requirements":[` + okUUID + `],"updates":[{"action":"remove-properties","removals":["comment"]}]}`, InvalidParameterValue, `property "comment" holds the table comment; use set-table-comment`},
		{"remove without removals", `{"requirements":[` + okUUID + `],"updates":[{"action":"remove-properties"}]}`, InvalidParameterValue, "remove-properties needs removals"},
		{"set-columns without columns", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-columns"}]}`, InvalidParameterValue, "set-columns needs columns"},
		{"set-columns no column", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-columns","columns":{"type":"struct","fields":[]}}]}`, InvalidParameterValue, "columns: no column: a table needs at least one"},
		{"set-columns bad type", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"v","type":"void","nullable":true,"metadata":{}}]}}]}`, InvalidParameterValue, `columns: schema: column "v": Delta type "void" is not supported for Iceberg tables`},
		{"comment missing", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-table-comment"}]}`, InvalidParameterValue, "set-table-comment needs comment"},
		{"add-commit without commit", `{"requirements":[` + okUUID + `],"updates":[{"action":"add-commit"}]}`, InvalidParameterValue, "add-commit needs commit"},
		{"add-commit partial commit", `{"requirements":[` + okUUID + `],"updates":[{"action":"add-commit","commit":{"version":1}}]}`, InvalidParameterValue, "add-commit: commit needs version, timestamp, file-name, file-size and file-modification-timestamp"},
		{"backfill without version", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-latest-backfilled-version"}]}`, InvalidParameterValue, "set-latest-backfilled-version needs latest-published-version"},
		{"protocol missing", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-protocol"}]}`, InvalidParameterValue, "set-protocol needs protocol"},
		{"domains empty", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-domain-metadata","updates":{}}]}`, InvalidParameterValue, "set-domain-metadata: updates must be an object with at least one domain"},
		{"remove domains missing", `{"requirements":[` + okUUID + `],"updates":[{"action":"remove-domain-metadata"}]}`, InvalidParameterValue, "remove-domain-metadata needs domains"},
		{"partition columns missing", `{"requirements":[` + okUUID + `],"updates":[{"action":"set-partition-columns"}]}`, InvalidParameterValue, "set-partition-columns needs partition-columns"},
		{"snapshot version partial", `{"requirements":[` + okUUID + `],"updates":[{"action":"update-metadata-snapshot-version","last-commit-version":1}]}`, InvalidParameterValue, "update-metadata-snapshot-version needs last-commit-version and last-commit-timestamp-ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseUpdate([]byte(tc.body))
			requireError(t, err, http.StatusBadRequest, tc.typ, tc.message)
		})
	}
}

// Bad input for the small bodies: rename, staging, metrics.
func TestParseSmallBodiesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		parse   func([]byte) error
		body    string
		typ     string
		message string
	}{
		{"rename empty", func(b []byte) error { _, e := parseRename(b); return e }, `{}`, InvalidParameterValue, "new-name is required"},
		{"rename blank", func(b []byte) error { _, e := parseRename(b); return e }, `{"new-name":" "}`, InvalidParameterValue, `invalid table name " "`},
		{"staging blank", func(b []byte) error { _, e := parseStaging(b); return e }, `{"name":"\t"}`, InvalidParameterValue, `invalid table name "\t"`},
		{"rename cross-schema", func(b []byte) error { _, e := parseRename(b); return e }, `{"new-name":"other.t"}`, InvalidParameterValue, `new-name "other.t": renames stay in the same schema; cross-schema moves are not supported`},
		{"rename not json", func(b []byte) error { _, e := parseRename(b); return e }, `[`, BadRequest, "malformed request body: unexpected end of JSON input"},
		{"staging no name", func(b []byte) error { _, e := parseStaging(b); return e }, `{"name":""}`, InvalidParameterValue, "name is required"},
		{"metrics no id", func(b []byte) error { _, e := parseMetrics(b); return e }, `{"report":{}}`, InvalidParameterValue, "table-id is required"},
		{"metrics bad id", func(b []byte) error { _, e := parseMetrics(b); return e }, `{"table-id":"x"}`, InvalidParameterValue, `table-id "x" is not a UUID`},
		{"metrics wrong shape", func(b []byte) error { _, e := parseMetrics(b); return e }, `{"table-id":5}`, BadRequest, "malformed request body: json: cannot unmarshal number into Go struct field MetricsRequest.table-id of type string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireError(t, tc.parse([]byte(tc.body)), http.StatusBadRequest, tc.typ, tc.message)
		})
	}
}

func TestParseSchema(t *testing.T) {
	for in, want := range map[string][]string{"sales": {"sales"}, "a.b": {"a", "b"}, "a.b\x1fc": {"a.b", "c"}} {
		got, err := ParseSchema(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"a..b", ".a", "a\x1f", "..", "a\x1f..", "a\x1f."} {
		_, err := ParseSchema(bad)
		requireError(t, err, http.StatusBadRequest, BadRequest,
			fmt.Sprintf("invalid schema name %q: empty or relative namespace level", bad), bad)
	}
}

func TestSupportsV1(t *testing.T) {
	ok, err := supportsV1("1.3,2.0")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = supportsV1("2.1")
	require.NoError(t, err)
	assert.False(t, ok)
	// each offer and the version in it that is refused
	for bad, v := range map[string]string{"one": "one", "1": "1", "1.0,2.x": "2.x", "-1.0": "-1.0", "1.0,,2.0": ""} {
		_, err = supportsV1(bad)
		requireError(t, err, http.StatusBadRequest, InvalidParameterValue,
			fmt.Sprintf("protocol-versions: %q is not MAJOR.MINOR", v), bad)
	}
}
