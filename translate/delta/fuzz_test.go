package delta

import (
	"encoding/json"
	"net/http"
	"testing"
)

// Request bodies are untrusted bytes: parsing never panics, a refusal is
// always a 400 in the Delta error model, and what is accepted re-checks.
func FuzzParseCreate(f *testing.F) {
	f.Add(string(createReq(func(map[string]any) {})))
	f.Add(string(createReq(func(m map[string]any) {
		m["protocol"] = map[string]any{"min-reader-version": 3, "min-writer-version": 7,
			"reader-features": []string{"deletionVectors"}, "writer-features": []string{"deletionVectors", "domainMetadata"}}
		m["domain-metadata"] = map[string]any{"delta.rowTracking": map[string]any{"rowIdHighWaterMark": 4}}
	})))
	f.Add(`{"name":"a.b","location":"rel"}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := ParseCreate([]byte(body))
		if err != nil {
			if code := AsError(err).Code; code != http.StatusBadRequest {
				t.Fatalf("status %d for %q: %v", code, body, err)
			}
			return
		}
		if req.Protocol.validate() != nil || checkName(*req.Name) != nil || CheckLocationSyntax(*req.Location) != nil {
			t.Fatalf("accepted what its own checks refuse: %q", body)
		}
	})
}

func FuzzParseUpdate(f *testing.F) {
	for _, u := range []string{
		`{"action":"set-properties","updates":{"k":"v"}}`,
		`{"action":"set-protocol","protocol":{"min-reader-version":1,"min-writer-version":7,"writer-features":["appendOnly"]}}`,
		`{"action":"set-domain-metadata","updates":{"delta.clustering":{"clusteringColumns":[["a"]]}}}`,
		`{"action":"set-columns","columns":{"type":"struct","fields":[{"name":"a","type":"short","nullable":true,"metadata":{"delta.columnMapping.id":1}}]}}`,
		`{"action":"add-commit","commit":{"version":1,"timestamp":1,"file-name":"x","file-size":1,"file-modification-timestamp":1}}`,
	} {
		f.Add(`{"requirements":[` + okUUID + `],"updates":[` + u + `]}`)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := parseUpdate([]byte(body))
		if err != nil {
			if code := AsError(err).Code; code != http.StatusBadRequest {
				t.Fatalf("status %d for %q: %v", code, body, err)
			}
			return
		}
		if _, merr := json.Marshal(req); merr != nil {
			t.Fatalf("accepted an update that does not encode: %v", merr)
		}
		if checkRequirements(req.Requirements) != nil || len(req.Updates) == 0 {
			t.Fatalf("accepted what its own checks refuse: %q", body)
		}
	})
}
