package icerest

import (
	"reflect"
	"testing"
)

// TestBodyLocations: every location a write body names is found, with
// keys read exactly as a backend reads them.
func TestBodyLocations(t *testing.T) {
	for _, tc := range []struct {
		op, body string
		want     []string
	}{
		{OpCreateTable, `{"name":"t","schema":{},"location":"s3://b/t","properties":{"write.data.path":"s3://b/d","write.metadata.path":"s3://b/m","other":"x"}}`,
			[]string{"s3://b/t", "s3://b/d", "s3://b/m"}},
		{OpCreateTable, `{"name":"t","schema":{},"properties":{"Write.Data.Path":"s3://b/a map key, not a field"}}`, nil},
		{OpCreateView, `{"name":"v","location":"s3://b/v","properties":{"write.metadata.path":"s3://b/vm"}}`,
			[]string{"s3://b/v", "s3://b/vm"}},
		{OpCreateNamespace, `{"namespace":["n"],"properties":{"location":"s3://b/n"}}`, []string{"s3://b/n"}},
		{OpUpdateProperties, `{"updates":{"location":"s3://b/n2"},"removals":["location"]}`, []string{"s3://b/n2"}},
		{OpRegisterTable, `{"name":"t","metadata-location":"s3://b/t/m.json"}`, []string{"s3://b/t/m.json"}},
		{OpRegisterView, `{"name":"v","metadata-location":"s3://b/v/m.json"}`, []string{"s3://b/v/m.json"}},
		{OpUpdateTable, `{"requirements":[],"updates":[
			{"action":"set-location","location":"s3://b/new"},
			{"action":"set-properties","updates":{"write.object-storage.path":"s3://b/o"}},
			{"action":"add-snapshot","snapshot":{"manifest-list":"s3://b/snap.avro"}},
			{"action":"set-statistics","statistics":{"statistics-path":"s3://b/s.puffin"}},
			{"action":"set-partition-statistics","partition-statistics":{"statistics-path":"s3://b/p.parquet"}},
			{"action":"assign-uuid","uuid":"u"}]}`,
			[]string{"s3://b/new", "s3://b/o", "s3://b/snap.avro", "s3://b/s.puffin", "s3://b/p.parquet"}},
		{OpReplaceView, `{"requirements":[],"updates":[{"action":"set-location","location":"s3://b/v2"}]}`, []string{"s3://b/v2"}},
		{OpCommitTransaction, `{"table-changes":[{"identifier":{"namespace":["n"],"name":"a"},"requirements":[],
			"updates":[{"action":"set-location","location":"s3://b/a"}]},
			{"identifier":{"namespace":["n"],"name":"b"},"requirements":[],
			"updates":[{"action":"set-location","location":"s3://b/b"}]}]}`, []string{"s3://b/a", "s3://b/b"}},
		{OpLoadTable, ``, nil},
	} {
		got, err := BodyLocations(tc.op, []byte(tc.body))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: got %q, %v; want %q", tc.op, tc.body, got, err, tc.want)
		}
	}
}

// TestBodyLocationsBad: a body whose locations cannot be read is an error,
// so the caller refuses it rather than let an unchecked location through.
func TestBodyLocationsBad(t *testing.T) {
	for _, tc := range []struct{ op, body string }{
		{OpCreateTable, `null`},
		{OpCreateTable, `{"name":"t","schema":{},"Location":"s3://b/read as location by Go"}`},
		{OpCreateTable, `{"location":"s3://b/a","location":"s3://b/b"}`},
		{OpCreateTable, `{"location":1}`},
		{OpCreateTable, `{"location":"a"} trailing`},
		{OpCreateTable, "{\"location\":\"\xff\"}"},
		{OpCreateTable, `{"properties":{"write.data.path":["s3://x"]}}`},
		{OpCreateTable, `{"properties":"write.data.path"}`},
		{OpCreateNamespace, `{"properties":{"location":{}}}`},
		{OpRegisterTable, `{"metadata-location":true}`},
		{OpUpdateTable, `{"updates":{"action":"set-location"}}`},
		{OpUpdateTable, `{"updates":["set-location"]}`},
		{OpUpdateTable, `{"updates":[{"action":"set-location","location":7}]}`},
		{OpUpdateTable, `{"updates":[{"action":"add-snapshot","snapshot":"s3://x"}]}`},
		{OpUpdateTable, `{"updates":[{"action":"add-snapshot","snapshot":{"manifest-list":1}}]}`},
		{OpCommitTransaction, `{"table-changes":{"updates":[]}}`},
		{OpCommitTransaction, `{"table-changes":[{"updates":[{"action":"set-location","location":null},{"action":"set-statistics","statistics":[]}]}]}`},
	} {
		if got, err := BodyLocations(tc.op, []byte(tc.body)); err == nil {
			t.Errorf("%s %s: accepted, got %q", tc.op, tc.body, got)
		}
	}
}

// FuzzBodyLocations: any bytes give locations or an error (which the
// pipeline turns into a refusal), never a panic or both.
func FuzzBodyLocations(f *testing.F) {
	f.Add(OpUpdateTable, `{"requirements":[],"updates":[{"action":"set-location","location":"s3://b/new"}]}`)
	f.Add(OpCreateTable, `{"name":"t","schema":{},"location":"s3://b/t","properties":{"write.data.path":"s3://b/d"}}`)
	f.Add(OpCommitTransaction, `{"table-changes":[{"identifier":{"namespace":["n"],"name":"a"},"requirements":[],"updates":[]}]}`)
	f.Add(OpRegisterTable, `{"name":"t","metadata-location":"file:///etc/passwd"}`)
	f.Fuzz(func(t *testing.T, op, body string) {
		locs, err := BodyLocations(op, []byte(body))
		if err != nil && locs != nil {
			t.Fatalf("locations with an error: %q", locs)
		}
		if err == nil && !NamesLocations(op) && locs != nil {
			t.Fatalf("locations for %s, which names none: %q", op, locs)
		}
	})
}
