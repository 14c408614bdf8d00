package delta

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRoute(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         Route
	}{
		{"GET", "config", Route{Op: OpGetConfig, Iceberg: "getConfig"}},
		{"GET", "temporary-path-credentials", Route{Op: OpGetTemporaryPathCredentials, Iceberg: "loadCredentials"}},
		{"GET", "staging-tables/abc/credentials", Route{Op: OpGetStagingTableCredentials, Iceberg: "createTable", TableID: "abc"}},
		{"POST", "catalogs/c/schemas/s/staging-tables", Route{Op: OpCreateStagingTable, Iceberg: "createTable", Catalog: "c", Schema: "s", Namespace: []string{"s"}}},
		{"POST", "catalogs/c/schemas/a.b/tables", Route{Op: OpCreateTable, Iceberg: "createTable", Catalog: "c", Schema: "a.b", Namespace: []string{"a", "b"}}},
		{"HEAD", "catalogs/c/schemas/s/tables/t", Route{Op: OpTableExists, Iceberg: "tableExists", Catalog: "c", Schema: "s", Namespace: []string{"s"}, Table: "t"}},
		{"POST", "catalogs/c/schemas/a.b%1Fc/tables/t%20x/rename", Route{Op: OpRenameTable, Iceberg: "renameTable", Catalog: "c", Schema: "a.b\x1fc", Namespace: []string{"a.b", "c"}, Table: "t x"}},
		{"GET", "catalogs/c/schemas/s/tables/t/credentials", Route{Op: OpGetTableCredentials, Iceberg: "loadCredentials", Catalog: "c", Schema: "s", Namespace: []string{"s"}, Table: "t"}},
		{"POST", "catalogs/c/schemas/s/tables/t/metrics", Route{Op: OpReportMetrics, Iceberg: "reportMetrics", Catalog: "c", Schema: "s", Namespace: []string{"s"}, Table: "t"}},
	} {
		got, err := ParseRoute(tc.method, tc.path)
		require.NoError(t, err, "%s %s", tc.method, tc.path)
		assert.Equal(t, tc.want, got, "%s %s", tc.method, tc.path)
	}
}

// Bad paths: the exact status and error type, before anything is served.
func TestParseRouteBadInput(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		status       int
		typ, message string
	}{
		{"GET", "nowhere", http.StatusNotFound, NotFound, "no Delta API endpoint at nowhere"},
		{"GET", "", http.StatusBadRequest, BadRequest, `malformed path segment ""`},
		{"GET", "config/", http.StatusBadRequest, BadRequest, `malformed path segment ""`},
		{"POST", "config", http.StatusMethodNotAllowed, BadRequest, "POST is not allowed here; use GET"},
		{"DELETE", "staging-tables/abc/credentials", http.StatusMethodNotAllowed, BadRequest, "DELETE is not allowed here; use GET"},
		{"GET", "catalogs/c/schemas/s/tables/t/x", http.StatusNotFound, NotFound, "no Delta API endpoint at catalogs/c/schemas/s/tables/t/x"},
		{"PUT", "catalogs/c/schemas/s/tables/t", http.StatusMethodNotAllowed, BadRequest, "PUT is not allowed here; use DELETE or GET or HEAD or POST"},
		{"GET", "catalogs/c/schemas/s/tables/t/rename", http.StatusMethodNotAllowed, BadRequest, "GET is not allowed here; use POST"},
		{"GET", "catalogs/c/schemas/%zz/tables/t", http.StatusBadRequest, BadRequest, `malformed path segment "%zz"`},
		{"GET", "catalogs/c/schemas/a..b/tables/t", http.StatusNotFound, NoSuchSchema, `no schema "a..b": invalid schema name "a..b": empty or relative namespace level`},
		{"GET", "catalogs/c/schemas/%2E%2E/tables/t", http.StatusNotFound, NoSuchSchema, `no schema "..": invalid schema name "..": empty or relative namespace level`},
		{"GET", "catalogs/c/schemas/s/tables/%2E", http.StatusNotFound, NoSuchTable, `no table ".": the name is not allowed`},
		{"GET", "catalogs//schemas/s/tables/t", http.StatusBadRequest, BadRequest, `malformed path segment ""`},
		{"GET", "catalogs/c/schemas/s/tables/a%01b", http.StatusNotFound, NoSuchTable, `no table "a\x01b": the name contains a control character`},
		{"GET", "catalogs/c/schemas/s%0A/tables/t", http.StatusNotFound, NoSuchSchema, `no schema "s\n": the level "s\n" contains a control character`},
		{"GET", "catalogs/c/schemas/s/tables/%FF", http.StatusNotFound, NoSuchTable, `no table "\xff": the name is not valid UTF-8`},
	} {
		_, err := ParseRoute(tc.method, tc.path)
		requireError(t, err, tc.status, tc.typ, tc.message, "%s %s", tc.method, tc.path)
	}
}

// Paths are untrusted: parsing never panics, refusals are 4xx, and an
// accepted route names an operation.
func FuzzParseRoute(f *testing.F) {
	for _, p := range []string{"config", "catalogs/c/schemas/a.b%1Fc/tables/t/rename", "staging-tables/x/credentials", "catalogs/c/schemas/s/tables"} {
		f.Add("POST", p)
		f.Add("GET", p)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		rt, err := ParseRoute(method, path)
		if err != nil {
			e := AsError(err)
			if e.Code < 400 || e.Code >= 500 {
				t.Fatalf("status %d for %s %q: %v", e.Code, method, path, err)
			}
			if e.Code == http.StatusMethodNotAllowed && len(e.Allow) == 0 {
				t.Fatalf("405 without Allow for %s %q", method, path)
			}
			return
		}
		if rt.Op == "" || rt.Iceberg == "" {
			t.Fatalf("accepted %s %q without an operation", method, path)
		}
	})
}
