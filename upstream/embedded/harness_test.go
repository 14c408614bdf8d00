package embedded_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// catalogSeq makes catalog names unique within a test binary; with a
// shared PostgreSQL database, the name partitions the rows.
var catalogSeq atomic.Int64

// testConfig is an embedded catalog on SQLite in a temporary directory,
// or on PostgreSQL when db is "postgres" (LAKEGATE_TEST_POSTGRES).
func testConfig(t *testing.T, db string) embedded.Config {
	t.Helper()
	dir := t.TempDir()
	cfg := embedded.Config{
		Name:      fmt.Sprintf("cat%d_%d", time.Now().UnixNano()%1e9, catalogSeq.Add(1)),
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

// serve starts the catalog on its own loopback port and returns its URL.
func serve(t *testing.T, cfg embedded.Config) (*embedded.Catalog, string) {
	t.Helper()
	cat, err := embedded.Open(context.Background(), cfg, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(cat)
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, cat.Close())
	})
	return cat, srv.URL
}

// client is iceberg-go's REST client pointed at url.
func client(t *testing.T, url string, opts ...rest.Option) *rest.Catalog {
	t.Helper()
	cl, err := rest.NewCatalog(context.Background(), "test", url, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// newCatalog is a fresh embedded catalog on SQLite behind iceberg-go's
// REST client.
func newCatalog(t *testing.T) *rest.Catalog {
	_, url := serve(t, testConfig(t, embedded.SQLite))
	return client(t, url)
}

func join(s ...string) string { return strings.Join(s, "/") }

// clientWithCredential is iceberg-go's REST client using OAuth2 client
// credentials ("id:secret") against the catalog's token endpoint.
func clientWithCredential(t *testing.T, url, credential string) *rest.Catalog {
	return client(t, url, rest.WithCredential(credential))
}
