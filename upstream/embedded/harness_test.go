package embedded_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// Short names for this package's tests; embeddedtest holds the helpers
// shared with the gateway's tests.
var (
	testConfig = func(t *testing.T, db string) embedded.Config { return embeddedtest.Config(t, db) }
	client     = func(t *testing.T, url string, opts ...rest.Option) *rest.Catalog {
		return embeddedtest.Client(t, url, opts...)
	}
	batch       = embeddedtest.Batch
	scanAll     = embeddedtest.ScanAll
	sortedRows  = embeddedtest.SortRows
	eventSchema = embeddedtest.EventSchema
)

type row = embeddedtest.Row

// serve starts the catalog on its own loopback port and returns its URL.
func serve(t *testing.T, cfg embedded.Config) (*embedded.Catalog, string) {
	s := embeddedtest.Serve(t, cfg)
	return s.Catalog, s.URL
}

// newCatalog is a fresh embedded catalog on SQLite behind iceberg-go's
// REST client.
func newCatalog(t *testing.T) *rest.Catalog {
	_, url := serve(t, testConfig(t, embedded.SQLite))
	return client(t, url)
}

// clientWithCredential is iceberg-go's REST client using OAuth2 client
// credentials ("id:secret") against the catalog's token endpoint.
func clientWithCredential(t *testing.T, url, credential string) *rest.Catalog {
	return client(t, url, rest.WithCredential(credential))
}
