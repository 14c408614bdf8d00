package sharing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/telemetry"
)

// A denial that turns the request away (a share, schema or table the
// caller asked for by name) is recorded as a refusal, so the access log
// and metrics say deny, as they do for the other doors; an entry a
// listing hides refuses nothing.
func TestDenialsAreRecorded(t *testing.T) {
	shares := []Share{{Name: "s", Schemas: []Schema{{Name: "c", Tables: []TableRef{
		{Name: "open", Catalog: "cat", Namespace: []string{"n"}, Table: "open"},
		{Name: "closed", Catalog: "cat", Namespace: []string{"n"}, Table: "closed"}}}}}}
	srv := &Server{Shares: shares}
	onlyOpen := func(_ context.Context, _ string, t Target) bool { return t.Table == "" || t.Table == "open" }
	for _, tc := range []struct {
		name     string
		route    Route
		target   string
		status   int
		decision string
	}{
		{"a table asked for by name", Route{Op: OpQueryTable, Share: "s", Schema: "c", Table: "closed"}, "/shares/s/schemas/c/tables/closed/query", http.StatusNotFound, "deny"},
		{"a listing that hides one", Route{Op: OpListTables, Share: "s", Schema: "c"}, "/shares/s/schemas/c/tables", http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &telemetry.Record{}
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			r = r.WithContext(telemetry.WithRecord(r.Context(), rec))
			w := httptest.NewRecorder()
			srv.Serve(w, r, Request{Route: tc.route, Access: onlyOpen})
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			assert.Equal(t, tc.decision, rec.Decision())
		})
	}
}
