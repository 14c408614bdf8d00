package sharing

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestParseRouteBadNames: share, schema and table names no catalog can
// hold (icerest.NameProblem) are a 400 in Delta Sharing's error model at
// the route, so nothing is translated or sent to a backend (they were a
// 502: the pipeline refused the translated Iceberg call).
func TestParseRouteBadNames(t *testing.T) {
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/shares/s/schemas/x/tables/%ff/version"},
		{http.MethodGet, "/shares/s/schemas/x/tables/a%00b/metadata"},
		{http.MethodPost, "/shares/s/schemas/x/tables/%2e%2e/query"},
		{http.MethodGet, "/shares/s/schemas/x/tables/%2E/version"},
		{http.MethodGet, "/shares/s/schemas/%2e%2e/tables"},
		{http.MethodGet, "/shares/%ff/schemas"},
		{http.MethodGet, "/shares/s%0a/schemas/x/tables"},
		{http.MethodGet, "/shares/s/schemas/x/tables/t%1f/version"},
	} {
		_, err := ParseRoute(tc.method, tc.path)
		if err == nil {
			t.Errorf("%s %s passed", tc.method, tc.path)
			continue
		}
		rec := httptest.NewRecorder()
		WriteError(rec, err)
		var body struct{ ErrorCode, Message string }
		if rec.Code != http.StatusBadRequest || json.Unmarshal(rec.Body.Bytes(), &body) != nil ||
			body.ErrorCode != CodeInvalidParameter || body.Message == "" {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, rec.Code, rec.Body)
		}
	}
	if _, err := ParseRoute(http.MethodGet, "/shares/s/schemas/x/tables/caf%C3%A9/version"); err != nil {
		t.Errorf("a UTF-8 name: %v", err)
	}
}
