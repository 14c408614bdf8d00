package unity

import (
	"errors"
	"net/url"
	"testing"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// needs are the names each operation addresses: an accepted route names
// every one of them.
var needs = map[Op]struct{ catalog, schema, table bool }{
	OpListCatalogs:  {},
	OpCreateCatalog: {},
	OpCreateSchema:  {},
	OpGetCatalog:    {catalog: true},
	OpListSchemas:   {catalog: true},
	OpGetSchema:     {catalog: true, schema: true},
	OpDeleteSchema:  {catalog: true, schema: true},
	OpListTables:    {catalog: true, schema: true},
	OpGetTable:      {catalog: true, schema: true, table: true},
	OpDeleteTable:   {catalog: true, schema: true, table: true},
}

// Paths and queries are untrusted: parsing never panics, a refusal is
// always a 4xx *Error, and an accepted route names an operation and every
// name it addresses, each one the Iceberg door would accept.
func FuzzParseRoute(f *testing.F) {
	for _, s := range []struct{ method, path, query string }{
		{"GET", "catalogs", ""},
		{"GET", "catalogs/lake", ""},
		{"GET", "schemas", "catalog_name=lake&max_results=2"},
		{"POST", "schemas", ""},
		{"DELETE", "schemas/lake.sales", "force=true"},
		{"GET", "tables", "catalog_name=lake&schema_name=sales"},
		{"GET", "tables/lake.sales.orders", ""},
		{"DELETE", "tables/lake%2Esales.my%20t", ""},
		{"PATCH", "tables/lake..t", ""},
	} {
		f.Add(s.method, s.path, s.query)
	}
	f.Fuzz(func(t *testing.T, method, path, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery) // what parses, as net/http keeps it
		rt, err := ParseRoute(method, path, q)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e == nil {
				t.Fatalf("%s %q?%q: not a *unity.Error: %#v", method, path, rawQuery, err)
			}
			if e.Status < 400 || e.Status >= 500 || e.Code == "" {
				t.Fatalf("%s %q?%q: status %d code %q: %v", method, path, rawQuery, e.Status, e.Code, e)
			}
			return
		}
		need, ok := needs[rt.Op]
		if !ok || rt.Iceberg == "" {
			t.Fatalf("%s %q?%q: accepted without an operation: %#v", method, path, rawQuery, rt)
		}
		for _, n := range []struct {
			name   string
			needed bool
		}{{rt.Catalog, need.catalog}, {rt.Schema, need.schema}, {rt.Table, need.table}} {
			if n.needed && n.name == "" {
				t.Fatalf("%s %q?%q: %s without a name it addresses: %#v", method, path, rawQuery, rt.Op, rt)
			}
			if n.name != "" && icerest.NameProblem(n.name) != "" {
				t.Fatalf("%s %q?%q: accepted the name %q: %s", method, path, rawQuery, n.name, icerest.NameProblem(n.name))
			}
		}
	})
}
