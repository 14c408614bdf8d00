// Package embeddedtest starts embedded catalogs on loopback ports for
// tests, as real, independent Iceberg REST backends, and holds the Arrow
// helpers tests use to write and read data through them.
package embeddedtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// seq makes catalog names unique within a test binary; with a shared
// PostgreSQL database, the name partitions the rows.
var seq atomic.Int64

// Config is an embedded catalog on SQLite in a temporary directory, or on
// PostgreSQL when db is "postgres" (skipped unless LAKEGATE_TEST_POSTGRES
// is set).
func Config(t testing.TB, db string) embedded.Config {
	t.Helper()
	dir := t.TempDir()
	cfg := embedded.Config{
		Name:      fmt.Sprintf("cat%d_%d", time.Now().UnixNano()%1e9, seq.Add(1)),
		Warehouse: filepath.Join(dir, "warehouse"),
		DSN:       filepath.Join(dir, "catalog.db"),
	}
	if db == embedded.Postgres {
		dsn := os.Getenv("LAKEGATE_TEST_POSTGRES")
		if dsn == "" {
			t.Skip("LAKEGATE_TEST_POSTGRES is not set")
		}
		cfg.Database, cfg.DSN = embedded.Postgres, dsn
	}
	return cfg
}

// Server is an embedded catalog served on its own loopback port.
type Server struct {
	Catalog *embedded.Catalog
	HTTP    *httptest.Server
	URL     string
}

// Serve starts the catalog on its own loopback port; it stops with the test.
func Serve(t testing.TB, cfg embedded.Config) *Server {
	t.Helper()
	cat, err := embedded.Open(context.Background(), cfg, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(cat)
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, cat.Close())
	})
	return &Server{Catalog: cat, HTTP: srv, URL: srv.URL}
}

// Client is iceberg-go's REST client pointed at url.
func Client(t testing.TB, url string, opts ...rest.Option) *rest.Catalog {
	t.Helper()
	cl, err := rest.NewCatalog(context.Background(), "test", url, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}
