package embedded_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// iceberg-go's conformance suite, through its REST client, against the
// embedded catalog served over HTTP.
func TestConformanceSQLite(t *testing.T) { runConformance(t, embedded.SQLite) }

func TestConformancePostgres(t *testing.T) { runConformance(t, embedded.Postgres) }

func runConformance(t *testing.T, db string) {
	catalogtest.RunCatalogTests(t, catalogtest.Config{
		SupportsNamespaceProperties: true,
		NewCatalog: func(t *testing.T) catalog.Catalog {
			_, url := serve(t, testConfig(t, db))
			return client(t, url)
		},
	})
}
