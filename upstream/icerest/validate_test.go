package icerest

import (
	"reflect"
	"strings"
	"testing"
)

const (
	okSchema = `{"type":"struct","fields":[]}`
	okIdent  = `{"namespace":["ns"],"name":"t"}`
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
		{OpCreateView, `{"name":"v","schema":` + okSchema + `,"view-version":{},"properties":{}}`},
		{OpReplaceView, `{"requirements":[{"type":"assert-view-uuid","uuid":"u"}],"updates":[{"action":"add-view-version","view-version":{}}]}`},
		{OpReportMetrics, `{"report-type":"scan-report"}`},
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
		{OpCreateNamespace, `{"namespace":["a","b"],"Namespace":["admin"]}`, Touched{Namespace: []string{"a", "b"}}},
		{OpCreateTable, `{"name":"t","NAME":"other","schema":` + okSchema + `}`, Touched{Name: "t"}},
		{OpRegisterView, `{"name":"v","metadata-location":"s3://b/v.json"}`, Touched{Name: "v"}},
		{OpRenameTable, `{"source":{"namespace":["a"],"name":"s"},"destination":{"namespace":["b"],"name":"d"}}`,
			Touched{Identifiers: []Identifier{id("a", "s"), id("b", "d")}}},
		{OpCommitTransaction, `{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],"updates":[]},` +
			`{"identifier":{"namespace":["b"],"name":"y","Name":"z"},"requirements":[],"updates":[]}]}`,
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
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		_, err := ValidateBody(op, body)
		if err != nil && (apiErr(t, err).Code != 400 || apiErr(t, err).Type != BadRequest) {
			t.Fatalf("got %d %s", apiErr(t, err).Code, apiErr(t, err).Type)
		}
		if err == nil && bodyRules[op] != nil {
			if _, derr := decodeObject(body); derr != nil {
				t.Fatalf("passed a body that is not one JSON object: %v", derr)
			}
		}
	})
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
