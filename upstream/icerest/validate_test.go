package icerest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lakegate/lakegate/internal/strictjson"
)

const (
	okSchema = `{"type":"struct","fields":[]}`
	okIdent  = `{"namespace":["ns"],"name":"t"}`
	// okViewVersion is a ViewVersion with the fields the spec requires.
	okViewVersion = `{"version-id":1,"timestamp-ms":1733000000000,"schema-id":0,"summary":{"engine-name":"spark"},` +
		`"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}],"default-namespace":["ns"]}`
	// okScanReport is a scan report as the Java client sends it.
	okScanReport = `{"report-type":"scan-report","table-name":"db.t","snapshot-id":3051729675574597004,` +
		`"filter":{"type":"eq","term":"id","value":5},"schema-id":0,"projected-field-ids":[1],"projected-field-names":["id"],` +
		`"metrics":{"total-planning-duration":{"count":1,"time-unit":"nanoseconds","total-duration":2644235116},` +
		`"result-data-files":{"unit":"count","value":1}},"metadata":{"engine":"spark"}}`
)

// TestValidateBodyGood: the bodies real clients send pass.
func TestValidateBodyGood(t *testing.T) {
	for _, tc := range []struct{ op, body string }{
		{OpCreateNamespace, `{"namespace":["a","b"],"properties":{"owner":"me"}}`},
		{OpCreateNamespace, `{"namespace":["a"],"properties":null}`},
		{OpUpdateProperties, `{"removals":["x"],"updates":{"k":"v"}}`},
		{OpUpdateProperties, `{}`},
		{OpCreateTable, `{"name":"t","schema":` + okSchema + `,"stage-create":true,"properties":{}}`},
		{OpCreateTable, `{"name":"t","schema":` + okSchema + `,"location":"s3://b/t","partition-spec":{"fields":[]},"write-order":{"order-id":0,"fields":[]}}`},
		{OpRegisterTable, `{"name":"t","metadata-location":"s3://b/m.json","overwrite":true}`},
		{OpRegisterView, `{"name":"v","metadata-location":"s3://b/v.json"}`},
		{OpUpdateTable, `{"requirements":[],"updates":[]}`},
		{OpUpdateTable, appendCommit},
		{OpUpdateTable, `{"identifier":` + okIdent + `,"requirements":[{"type":"assert-table-uuid","uuid":"u"}],` +
			`"updates":[{"action":"set-properties","updates":{"a":"b"}},{"action":"remove-schemas","schema-ids":[1]}]}`},
		{OpCommitTransaction, `{"table-changes":[{"identifier":` + okIdent + `,"requirements":[{"type":"assert-create"}],"updates":[]}]}`},
		{OpRenameTable, `{"source":` + okIdent + `,"destination":` + okIdent + `}`},
		{OpRenameView, `{"source":` + okIdent + `,"destination":` + okIdent + `}`},
		{OpCreateView, `{"name":"v","schema":` + okSchema + `,"view-version":` + okViewVersion + `,"properties":{}}`},
		// Required by the spec, left out by Iceberg Java when empty.
		{OpCreateView, `{"name":"v","schema":` + okSchema + `,"view-version":` + okViewVersion + `}`},
		{OpReplaceView, `{"requirements":[{"type":"assert-view-uuid","uuid":"u"}],"updates":[{"action":"add-view-version","view-version":` + okViewVersion + `}]}`},
		{OpReportMetrics, okScanReport},
		{OpReportMetrics, `{"report-type":"commit-report","table-name":"db.t","snapshot-id":1,"sequence-number":1,"operation":"append","metrics":{}}`},
		{OpPlanTableScan, `{"snapshot-id":1,"select":["id"],"filter":{"type":"and","left":{"type":"gt","term":"id","value":1},` +
			`"right":{"type":"not-null","child":{"type":"reference","name":"x"}}},"case-sensitive":true}`},
		{OpPlanTableScan, `{"filter":true}`},
		{OpFetchScanTasks, `{"plan-task":"t1"}`},
		{OpUpdateTable, commitOf(everyTableUpdate...)},
		{OpUpdateTable, `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"b","snapshot-id":null},` +
			`{"type":"assert-ref-snapshot-id","ref":"c"},{"type":"assert-current-schema-id","current-schema-id":0},` +
			`{"type":"assert-last-assigned-field-id","last-assigned-field-id":3},{"type":"assert-default-spec-id","default-spec-id":0},` +
			`{"type":"assert-last-assigned-partition-id","last-assigned-partition-id":999},{"type":"assert-default-sort-order-id","default-sort-order-id":0}],"updates":[]}`},
		{OpUpdateTable, `{"requirements":[],"updates":[],"vendor-field":{"any":"thing"}}`}, // extra fields pass
		{OpUpdateTable, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"\ud83d\ude00 \u00e9"}}]}`},
		{OpReplaceView, `{"updates":[{"action":"set-current-view-version","view-version-id":-1},{"action":"set-properties","updates":{}}]}`},
		{OpLoadTable, ``}, // no body to vet
	} {
		if _, err := ValidateBody(tc.op, []byte(tc.body)); err != nil {
			t.Errorf("%s %s: %v", tc.op, tc.body, err)
		}
	}
}

// TestValidateBodyTouched: what a body names comes from the same parse as
// its check, with exact keys as backends read them: a case-folded
// duplicate ("Namespace") cannot make the policy decide on another name
// than the one the backend creates.
func TestValidateBodyTouched(t *testing.T) {
	id := func(ns, name string) Identifier { return Identifier{Namespace: []string{ns}, Name: name} }
	for _, tc := range []struct {
		op, body string
		want     Touched
	}{
		{OpCreateNamespace, `{"namespace":["a","b"],"properties":{"Location":"x","LOCATION":"y"}}`, Touched{Namespace: []string{"a", "b"}}},
		{OpCreateTable, `{"name":"t","schema":` + okSchema + `,"vendor-extension":{"Name":1,"name":2}}`, Touched{Name: "t"}},
		{OpRegisterView, `{"name":"v","metadata-location":"s3://b/v.json"}`, Touched{Name: "v"}},
		{OpRenameTable, `{"source":{"namespace":["a"],"name":"s"},"destination":{"namespace":["b"],"name":"d"}}`,
			Touched{Identifiers: []Identifier{id("a", "s"), id("b", "d")}}},
		{OpCommitTransaction, `{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],"updates":[]},` +
			`{"identifier":{"namespace":["b"],"name":"y"},"requirements":[],"updates":[]}]}`,
			Touched{Identifiers: []Identifier{id("a", "x"), id("b", "y")}}},
		{OpUpdateTable, `{"identifier":` + okIdent + `,"requirements":[],"updates":[]}`, Touched{}},
	} {
		got, err := ValidateBody(tc.op, []byte(tc.body))
		if err != nil {
			t.Errorf("%s %s: %v", tc.op, tc.body, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: touched %+v, want %+v", tc.op, tc.body, got, tc.want)
		}
	}
}

// TestValidateBodyBad: each bad body is a 400 BadRequestException naming
// what is wrong.
func TestValidateBodyBad(t *testing.T) {
	commit := func(reqs, updates string) string {
		return `{"requirements":` + reqs + `,"updates":` + updates + `}`
	}
	for _, tc := range []struct{ name, op, body, want string }{
		{"null commit", OpUpdateTable, `null`, "null"},
		{"empty body", OpUpdateTable, ``, "empty body"},
		{"whitespace body", OpUpdateTable, "  \n", "empty body"},
		{"trailing garbage", OpUpdateTable, commit("[]", "[]") + `x`, "trailing data"},
		{"two objects", OpUpdateTable, commit("[]", "[]") + commit("[]", "[]"), "trailing data"},
		{"invalid UTF-8", OpUpdateTable, "{\"requirements\":[],\"updates\":[],\"x\":\"\xff\"}", "UTF-8"},
		{"NUL byte", OpUpdateTable, "{\"requirements\":[],\x00\"updates\":[]}", "not a JSON object"},
		{"array", OpUpdateTable, `[]`, "not a JSON object"},
		{"string", OpCreateNamespace, `"ns"`, "not a JSON object"},
		{"no requirements", OpUpdateTable, `{"updates":[]}`, `"requirements" is required`},
		{"null updates", OpUpdateTable, `{"requirements":[],"updates":null}`, `"updates" is required`},
		{"updates not an array", OpUpdateTable, commit("[]", `{}`), "must be an array"},
		{"unknown update", OpUpdateTable, commit("[]", `[{"action":"drop-everything"}]`), `unknown action "drop-everything"`},
		{"update without action", OpUpdateTable, commit("[]", `[{"updates":{}}]`), `"action" is required`},
		{"update not an object", OpUpdateTable, commit("[]", `["set-properties"]`), "must be an object"},
		{"unknown requirement", OpUpdateTable, commit(`[{"type":"assert-nothing"}]`, "[]"), `unknown type "assert-nothing"`},
		{"view requirement on a table", OpUpdateTable, commit(`[{"type":"assert-view-uuid","uuid":"u"}]`, "[]"), "unknown type"},
		{"view update on a table", OpUpdateTable, commit("[]", `[{"action":"add-view-version"}]`), "unknown action"},
		{"bad identifier", OpUpdateTable, `{"identifier":{"name":"t"},"requirements":[],"updates":[]}`, `"namespace" is required`},
		{"transaction without changes", OpCommitTransaction, `{}`, `"table-changes" is required`},
		{"transaction change without identifier", OpCommitTransaction, `{"table-changes":[{"requirements":[],"updates":[]}]}`, `"identifier" is required`},
		{"transaction with unknown update", OpCommitTransaction,
			`{"table-changes":[{"identifier":` + okIdent + `,"requirements":[],"updates":[{"action":"x"}]}]}`, "unknown action"},
		{"namespace missing", OpCreateNamespace, `{"properties":{}}`, `"namespace" is required`},
		{"namespace empty", OpCreateNamespace, `{"namespace":[]}`, "non-empty array"},
		{"namespace empty level", OpCreateNamespace, `{"namespace":["a",""]}`, "empty name"},
		{"namespace not strings", OpCreateNamespace, `{"namespace":[1]}`, "non-empty array"},
		{"properties not strings", OpCreateNamespace, `{"namespace":["a"],"properties":{"k":1}}`, "string values"},
		{"updates not strings", OpUpdateProperties, `{"updates":{"k":true}}`, "string values"},
		{"removals not an array", OpUpdateProperties, `{"removals":"k"}`, "array of strings"},
		{"table without name", OpCreateTable, `{"schema":` + okSchema + `}`, `"name" is required`},
		{"table with empty name", OpCreateTable, `{"name":"","schema":` + okSchema + `}`, "non-empty string"},
		{"table without schema", OpCreateTable, `{"name":"t"}`, `"schema" is required`},
		{"table schema not an object", OpCreateTable, `{"name":"t","schema":"s"}`, "must be an object"},
		{"stage-create not a bool", OpCreateTable, `{"name":"t","schema":` + okSchema + `,"stage-create":"yes"}`, "true or false"},
		{"location not a string", OpCreateTable, `{"name":"t","schema":` + okSchema + `,"location":1}`, "must be a string"},
		{"register without location", OpRegisterTable, `{"name":"t"}`, `"metadata-location" is required`},
		{"rename without destination", OpRenameTable, `{"source":` + okIdent + `}`, `"destination" is required`},
		{"rename identifier without name", OpRenameView, `{"source":` + okIdent + `,"destination":{"namespace":["a"]}}`, `"name" is required`},
		{"view without version", OpCreateView, `{"name":"v","schema":` + okSchema + `}`, `"view-version" is required`},
		{"replace view without updates", OpReplaceView, `{"requirements":[]}`, `"updates" is required`},
		{"replace view with a table update", OpReplaceView, `{"updates":[{"action":"add-snapshot"}]}`, "unknown action"},
		{"metrics not an object", OpReportMetrics, `null`, "null"},

		// field types, from the spec's schemas
		{"set-properties updates an array", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":["a"]}]`), `"updates": must be an object`},
		{"set-properties number value", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":{"k":1}}]`), `"k": must be a string`},
		{"set-properties null value", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":{"k":null}}]`), `"k": must be a string`},
		{"set-properties without updates", OpUpdateTable, commit("[]", `[{"action":"set-properties"}]`), `"updates" is required`},
		{"remove-properties removals a string", OpUpdateTable, commit("[]", `[{"action":"remove-properties","removals":"k"}]`), `"removals": must be an array`},
		{"add-snapshot without snapshot", OpUpdateTable, commit("[]", `[{"action":"add-snapshot"}]`), `"snapshot" is required`},
		{"add-snapshot without manifest list", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":{"snapshot-id":1,"timestamp-ms":1,"summary":{"operation":"append"}}}]`), `"manifest-list" is required`},
		{"add-snapshot unknown operation", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"summary":{"operation":"merge"}`)+`}]`), "must be one of"},
		{"add-snapshot id a string", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"snapshot-id":"1"`)+`}]`), `"snapshot-id": must be a long`},
		{"snapshot-id 1e999", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"snapshot-id":1e999`)+`}]`), `must be a long`},
		{"snapshot-id 1.5", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"snapshot-id":1.5`)+`}]`), `must be a long`},
		{"snapshot-id beyond int64", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"snapshot-id":9223372036854775808`)+`}]`), `must be a long`},
		{"schema-id beyond int32", OpUpdateTable, commit("[]", `[{"action":"add-snapshot","snapshot":`+snap(`"schema-id":2147483648`)+`}]`), `"schema-id": must be an int`},
		{"add-schema schema a string", OpUpdateTable, commit("[]", `[{"action":"add-schema","schema":"nope"}]`), `"schema": must be an object`},
		{"add-schema field without type", OpUpdateTable, commit("[]", `[{"action":"add-schema","schema":{"type":"struct","fields":[{"id":1,"name":"a","required":true}]}}]`), `"type" is required`},
		{"add-schema nested type wrong", OpUpdateTable, commit("[]", `[{"action":"add-schema","schema":{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":{"type":"list","element-id":"2","element":"int","element-required":true}}]}}]`), `"element-id": must be an int`},
		{"add-spec field transform a number", OpUpdateTable, commit("[]", `[{"action":"add-spec","spec":{"fields":[{"source-id":1,"name":"p","transform":7}]}}]`), `"transform": must be a string`},
		{"add-sort-order bad direction", OpUpdateTable, commit("[]", `[{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"up","null-order":"nulls-first"}]}}]`), "must be one of"},
		{"set-snapshot-ref id a string", OpUpdateTable, commit("[]", `[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":"1"}]`), `"snapshot-id": must be a long`},
		{"set-snapshot-ref unknown type", OpUpdateTable, commit("[]", `[{"action":"set-snapshot-ref","ref-name":"main","type":"trunk","snapshot-id":1}]`), "must be one of"},
		{"set-snapshot-ref name a number", OpUpdateTable, commit("[]", `[{"action":"set-snapshot-ref","ref-name":1,"type":"branch","snapshot-id":1}]`), `"ref-name": must be a string`},
		{"set-snapshot-ref without type", OpUpdateTable, commit("[]", `[{"action":"set-snapshot-ref","ref-name":"main","snapshot-id":1}]`), `"type" is required`},
		{"remove-snapshots ids strings", OpUpdateTable, commit("[]", `[{"action":"remove-snapshots","snapshot-ids":["1"]}]`), "must be a long"},
		{"set-statistics without blob metadata", OpUpdateTable, commit("[]", `[{"action":"set-statistics","statistics":{"snapshot-id":1,"statistics-path":"s3://b/s","file-size-in-bytes":1,"file-footer-size-in-bytes":1}}]`), `"blob-metadata" is required`},
		{"set-location a number", OpUpdateTable, commit("[]", `[{"action":"set-location","location":5}]`), `"location": must be a string`},
		{"upgrade-format-version a string", OpUpdateTable, commit("[]", `[{"action":"upgrade-format-version","format-version":"2"}]`), "must be an int"},
		{"assert-table-uuid uuid a number", OpUpdateTable, commit(`[{"type":"assert-table-uuid","uuid":5}]`, "[]"), `"uuid": must be a string`},
		{"assert-table-uuid without uuid", OpUpdateTable, commit(`[{"type":"assert-table-uuid"}]`, "[]"), `"uuid" is required`},
		{"assert-ref-snapshot-id without ref", OpUpdateTable, commit(`[{"type":"assert-ref-snapshot-id","snapshot-id":1}]`, "[]"), `"ref" is required`},
		{"assert-current-schema-id 1.0", OpUpdateTable, commit(`[{"type":"assert-current-schema-id","current-schema-id":1.0}]`, "[]"), "must be an int"},
		{"NUL escape in a property key", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":{"a\u0000":"b"}}]`), "NUL"},
		{"NUL escape in a property value", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":{"a":"\u0000"}}]`), "NUL"},
		{"NUL escape in namespace properties", OpCreateNamespace, `{"namespace":["a"],"properties":{"k":"v\u0000"}}`, "NUL"},
		{"lone high surrogate", OpUpdateTable, commit("[]", `[{"action":"set-properties","updates":{"k":"\ud800"}}]`), "surrogate"},
		{"lone low surrogate", OpCreateNamespace, `{"namespace":["\udc00"]}`, "surrogate"},
		{"high surrogate then non-surrogate", OpCreateNamespace, `{"namespace":["\ud800\u0041"]}`, "surrogate"},
		{"transaction set-properties a number", OpCommitTransaction,
			`{"table-changes":[{"identifier":` + okIdent + `,"requirements":[],"updates":[{"action":"set-properties","updates":{"k":1}}]}]}`, "must be a string"},
		{"transaction assert-table-uuid a number", OpCommitTransaction,
			`{"table-changes":[{"identifier":` + okIdent + `,"requirements":[{"type":"assert-table-uuid","uuid":5}],"updates":[]}]}`, "must be a string"},
		{"create table schema without fields", OpCreateTable, `{"name":"t","schema":{"type":"struct"}}`, `"fields" is required`},
		{"create table partition field without name", OpCreateTable, `{"name":"t","schema":` + okSchema + `,"partition-spec":{"fields":[{"source-id":1,"transform":"identity"}]}}`, `"name" is required`},
		{"view version without representations", OpReplaceView, `{"updates":[{"action":"add-view-version","view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":[]}}]}`, `"representations" is required`},
		{"view requirement without uuid", OpReplaceView, `{"requirements":[{"type":"assert-view-uuid"}],"updates":[]}`, `"uuid" is required`},
		{"empty metrics report", OpReportMetrics, `{}`, `"report-type" is required`},
		{"metrics report without fields", OpReportMetrics, `{"report-type":"scan-report"}`, "is required"},
		{"metrics counter value a string", OpReportMetrics, strings.Replace(okScanReport, `"value":1`, `"value":"1"`, 1), "must be a long"},
		{"plan snapshot-id a string", OpPlanTableScan, `{"snapshot-id":"x"}`, `"snapshot-id": must be a long`},
		{"plan select not strings", OpPlanTableScan, `{"select":[1]}`, "must be a string"},
		{"plan filter unknown field", OpPlanTableScan, `{"filter":{"type":"is-null","child":{"type":"reference","name":"x"},"oops":1}}`, "unknown field"},
		{"fetch tasks without plan task", OpFetchScanTasks, `{}`, `"plan-task" is required`},
	} {
		_, err := ValidateBody(tc.op, []byte(tc.body))
		if err == nil {
			t.Errorf("%s: %s passed", tc.name, tc.body)
			continue
		}
		if apiErr(t, err).Code != 400 || apiErr(t, err).Type != BadRequest || !strings.Contains(apiErr(t, err).Message, tc.want) {
			t.Errorf("%s: got %d %s %q, want 400 BadRequestException containing %q", tc.name, apiErr(t, err).Code, apiErr(t, err).Type, apiErr(t, err).Message, tc.want)
		}
	}
}

// TestValidateBodyStrict: a body a Go catalog (encoding/json: keys
// matched case-insensitively, the last of two equal keys kept) would read
// otherwise than lakegate checked it is a 400 naming the key (issue 36).
func TestValidateBodyStrict(t *testing.T) {
	for _, tc := range []struct{ name, op, body, want string }{
		{"case variant of properties", OpCreateNamespace,
			`{"namespace":["cv1"],"properties":{"a":"b"},"Properties":{"location":"file:///outside/ns"}}`, `"Properties" is a case variant of the field "properties"`},
		{"case variant of a table's properties", OpCreateTable,
			`{"name":"t","schema":` + okSchema + `,"Properties":{"write.data.path":"file:///outside/t"}}`, `"Properties"`},
		{"case variant of metadata-location", OpRegisterTable,
			`{"name":"t","metadata-location":"file:///in/m.json","Metadata-Location":"file:///outside/m.json"}`, `"Metadata-Location"`},
		{"case variant of metadata-location alone", OpRegisterTable,
			`{"name":"t","Metadata-Location":"file:///outside/m.json"}`, `"Metadata-Location"`},
		{"case variant of updates", OpUpdateTable,
			`{"requirements":[],"updates":[],"UPDATES":[{"action":"set-properties","updates":{"k":1}}]}`, `"UPDATES"`},
		{"Kelvin sign", OpUpdateTable, commitOf(`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1,"min-snapshots-to-\u212Aeep":1}`),
			`variant of the field "min-snapshots-to-keep"`},
		{"case variant in an update", OpUpdateTable, commitOf(`{"action":"set-location","location":"s3://b/in","Location":"s3://b/out"}`),
			`at updates[0]: key "Location"`},
		{"case variant of an action", OpUpdateTable, commitOf(`{"Action":"set-location","location":"s3://b/in"}`), `"Action"`},
		{"case variant in a requirement", OpUpdateTable, `{"requirements":[{"type":"assert-table-uuid","uuid":"u","UUID":"v"}],"updates":[]}`, `"UUID"`},
		{"case variant in a snapshot", OpUpdateTable, commitOf(`{"action":"add-snapshot","snapshot":` + snap(`"Manifest-List":"s3://out/m.avro"`) + `}`),
			`at updates[0].snapshot: key "Manifest-List"`},
		{"case variant in an identifier", OpRenameTable, `{"source":` + okIdent + `,"destination":{"namespace":["a"],"name":"u","Name":"v"}}`, `at destination`},
		{"case variant in a transaction", OpCommitTransaction,
			`{"table-changes":[{"identifier":` + okIdent + `,"requirements":[],"updates":[],"Updates":[]}]}`, `at table-changes[0]`},
		{"case variant of a summary's operation", OpUpdateTable, commitOf(`{"action":"add-snapshot","snapshot":` + snap(`"summary":{"operation":"append","Operation":"delete"}`) + `}`),
			`at updates[0].snapshot.summary: key "Operation"`},
		{"duplicate at the top", OpCreateNamespace, `{"namespace":["a"],"namespace":["b"]}`, `duplicate key "namespace"`},
		{"duplicate nested", OpRenameTable, `{"source":{"namespace":["a"],"name":"t","name":"u"},"destination":` + okIdent + `}`, `duplicate key "name"`},
		{"duplicate in a map", OpCreateNamespace, `{"namespace":["a"],"properties":{"location":"s3://in","location":"s3://out"}}`, `duplicate key "location"`},
		{"duplicate in an unknown field", OpCreateNamespace, `{"namespace":["a"],"x-vendor":{"k":1,"k":2}}`, `duplicate key "k"`},
		{"escaped duplicate", OpCreateTable, `{"name":"t","name":"u","schema":` + okSchema + `}`, `duplicate key "name"`},
		{"BOM", OpCreateNamespace, "\xef\xbb\xbf{\"namespace\":[\"a\"]}", "not a JSON object"},
		{"trailing data", OpCreateNamespace, `{"namespace":["a"]} {}`, "trailing data"},
		{"invalid UTF-8", OpCreateNamespace, "{\"namespace\":[\"a\xc0\"]}", "UTF-8"},
		{"int beyond int32", OpUpdateTable, commitOf(`{"action":"set-current-schema","schema-id":4294967296}`), "must be an int"},
	} {
		_, err := ValidateBody(tc.op, []byte(tc.body))
		if err == nil {
			t.Errorf("%s: %s passed", tc.name, tc.body)
			continue
		}
		if e := apiErr(t, err); e.Code != 400 || e.Type != BadRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: got %d %s %q, want 400 BadRequestException containing %q", tc.name, e.Code, e.Type, e.Message, tc.want)
		}
	}
	for _, tc := range []struct{ name, op, body string }{
		{"unknown keys", OpCreateNamespace, `{"namespace":["a"],"x-vendor":1,"X-Vendor":2}`},
		{"map keys in any case", OpCreateNamespace, `{"namespace":["a"],"properties":{"Location":"a","LOCATION":"b","Properties":"c"}}`},
		{"property keys in any case", OpUpdateTable, commitOf(`{"action":"set-properties","updates":{"Write.Data.Path":"x","WRITE.DATA.PATH":"y"}}`)},
		{"summary keys in any case", OpUpdateTable, commitOf(`{"action":"add-snapshot","snapshot":` + snap(`"summary":{"operation":"append","Added-Files":"1","added-files":"2"}`) + `}`)},
		{"escaped key", OpCreateNamespace, `{"namespace":["a"]}`},
	} {
		if _, err := ValidateBody(tc.op, []byte(tc.body)); err != nil {
			t.Errorf("%s: %s: %v", tc.name, tc.body, err)
		}
	}
}

// FuzzValidateBody: any bytes give nil or a 400, never a panic; a body
// that passes is one JSON object.
func FuzzValidateBody(f *testing.F) {
	for _, seed := range []string{
		`{"requirements":[],"updates":[]}`,
		`{"requirements":[{"type":"assert-create"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`,
		`{"table-changes":[{"identifier":{"namespace":["a"],"name":"t"},"requirements":[],"updates":[]}]}`,
		`null`, `{}x`, "{\"a\":\"\xff\"}", `[{}]`, `{"requirements":null}`,
	} {
		f.Add(OpUpdateTable, []byte(seed))
		f.Add(OpCommitTransaction, []byte(seed))
	}
	f.Add(OpCreateNamespace, []byte(`{"namespace":["a"],"properties":{"k":"v"}}`))
	f.Add(OpCreateTable, []byte(`{"name":"t","schema":{"type":"struct","fields":[]}}`))
	f.Add(OpRenameTable, []byte(`{"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["a"],"name":"u"}}`))
	f.Add(OpUpdateTable, []byte(appendCommit))
	f.Add(OpUpdateTable, []byte(commitOf(everyTableUpdate...)))
	f.Add(OpReportMetrics, []byte(okScanReport))
	f.Add(OpPlanTableScan, []byte(`{"snapshot-id":1,"filter":{"type":"in","term":"x","values":[1,"a"]}}`))
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		_, err := ValidateBody(op, body)
		if err != nil && (apiErr(t, err).Code != 400 || apiErr(t, err).Type != BadRequest) {
			t.Fatalf("got %d %s", apiErr(t, err).Code, apiErr(t, err).Type)
		}
		if err == nil && bodyRules[op] != nil {
			if _, derr := parseBody(op, body); derr != nil {
				t.Fatalf("passed a body that is not one JSON object: %v", derr)
			}
			if eerr := strictjson.CheckText(body); eerr != nil {
				t.Fatalf("passed a body with %v", eerr)
			}
		}
	})
}

// snap is a valid Snapshot with one field ("key":value) replaced or added.
func snap(field string) string {
	fields := []string{`"snapshot-id":1`, `"timestamp-ms":1`, `"manifest-list":"s3://b/m.avro"`, `"summary":{"operation":"append"}`}
	key, _, _ := strings.Cut(field, ":")
	i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, key+":") })
	if i < 0 {
		fields = append(fields, field)
	} else {
		fields[i] = field
	}
	return `{` + strings.Join(fields, ",") + `}`
}

// commitOf is a CommitTableRequest of updates.
func commitOf(updates ...string) string {
	return `{"requirements":[],"updates":[` + strings.Join(updates, ",") + `]}`
}

// everyTableUpdate is one valid update of each TableUpdate action.
var everyTableUpdate = []string{
	`{"action":"assign-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}`,
	`{"action":"upgrade-format-version","format-version":2}`,
	`{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"a","required":true,"type":"long"},` +
		`{"id":2,"name":"l","required":false,"type":{"type":"list","element-id":3,"element":"string","element-required":false}},` +
		`{"id":4,"name":"m","required":false,"type":{"type":"map","key-id":5,"key":"string","value-id":6,"value":{"type":"struct","fields":[]},"value-required":true}},` +
		`{"id":7,"name":"v","required":false,"type":"variant","initial-default":null,"write-default":5}]},"last-column-id":7}`,
	`{"action":"set-current-schema","schema-id":-1}`,
	`{"action":"add-spec","spec":{"spec-id":1,"fields":[{"field-id":1000,"source-id":1,"name":"a_bucket","transform":"bucket[16]"}]}}`,
	`{"action":"set-default-spec","spec-id":-1}`,
	`{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}`,
	`{"action":"set-default-sort-order","sort-order-id":-1}`,
	`{"action":"add-snapshot","snapshot":` + snap(`"parent-snapshot-id":null`) + `}`,
	`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1,"max-ref-age-ms":1,"min-snapshots-to-keep":1}`,
	`{"action":"remove-snapshots","snapshot-ids":[1,-9223372036854775808]}`,
	`{"action":"remove-snapshot-ref","ref-name":"tag1"}`,
	`{"action":"set-location","location":"s3://b/t"}`,
	`{"action":"set-properties","updates":{"k":"v"}}`,
	`{"action":"remove-properties","removals":["k"]}`,
	`{"action":"set-statistics","snapshot-id":1,"statistics":{"snapshot-id":1,"statistics-path":"s3://b/s.puffin","file-size-in-bytes":10,` +
		`"file-footer-size-in-bytes":2,"blob-metadata":[{"type":"apache-datasketches-theta-v1","snapshot-id":1,"sequence-number":1,"fields":[1],"properties":{"ndv":"3"}}]}}`,
	`{"action":"remove-statistics","snapshot-id":1}`,
	`{"action":"set-partition-statistics","partition-statistics":{"snapshot-id":1,"statistics-path":"s3://b/p.parquet","file-size-in-bytes":10}}`,
	`{"action":"remove-partition-statistics","snapshot-id":1}`,
	`{"action":"remove-partition-specs","spec-ids":[1]}`,
	`{"action":"remove-schemas","schema-ids":[1]}`,
	`{"action":"add-encryption-key","encryption-key":{"key-id":"k","encrypted-key-metadata":"AAAA","properties":{}}}`,
	`{"action":"remove-encryption-key","key-id":"k"}`,
}

// appendCommit is the commit body of an append as Spark sends it: a new
// snapshot, the main branch moved to it, a requirement on the old one.
const appendCommit = `{"identifier":{"namespace":["db"],"name":"events"},"requirements":[` +
	`{"type":"assert-table-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"},` +
	`{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":3051729675574597004}],"updates":[` +
	`{"action":"add-snapshot","snapshot":{"snapshot-id":3055729675574597004,"parent-snapshot-id":3051729675574597004,` +
	`"sequence-number":2,"timestamp-ms":1733000000000,"manifest-list":"s3://bucket/db/events/metadata/` +
	`snap-3055729675574597004-1-6e2d0c1a-7b41-4c5e-9d8f-1a2b3c4d5e6f.avro","summary":{"operation":"append",` +
	`"spark.app.id":"local-1733000000000","added-data-files":"4","added-records":"1000","added-files-size":"48213",` +
	`"changed-partition-count":"2","total-records":"2000","total-files-size":"96426","total-data-files":"8",` +
	`"total-delete-files":"0","total-position-deletes":"0","total-equality-deletes":"0"},"schema-id":0}},` +
	`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":3055729675574597004}]}`

// BenchmarkValidateBody: what checking a commit body costs, next to the
// commit itself (modules/gateway BenchmarkCommit, BENCHMARKS.md).
func BenchmarkValidateBody(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"append", appendCommit},
		{"set-properties", `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"me"}}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ValidateBody(OpUpdateTable, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
