// Package translate holds what the Delta front doors share: the way a
// translator reaches a catalog's Iceberg pipeline. Translators never talk
// to backends: every Iceberg call they make runs through the pipeline
// (replay, LoadTable cache, breakers) of the catalog it addresses.
package translate

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/apache/iceberg-go/catalog/rest"

	"github.com/lakegate/lakegate/upstream/locations"
)

// Pipelines runs translated Iceberg calls through a lakegate catalog's
// pipeline, in process, on behalf of the principal the context carries
// (caller.With); it decides no policy: the front door already did, on
// the operation its client asked for.
type Pipelines interface {
	// Serve runs one typed call (ErrNoCatalog for a catalog lakegate
	// does not serve).
	Serve(ctx context.Context, catalog string, call Call) (*Response, error)
	// Transport is the pipeline as an HTTP transport serving /v1/...,
	// only for iceberg-go's REST client (scan planning), which speaks
	// HTTP.
	Transport(catalog string) (http.RoundTripper, bool)
	// Locations is where the catalog's files may be read from; nil when
	// lakegate does not confine it.
	Locations(catalog string) *locations.Rule
	// StorageProperties are the FileIO properties of the storage keys
	// the gateway holds for the catalog (its storage block: endpoint,
	// region, keys), for a translator's own reads of a table's files
	// (a Delta log, the files a sync commits), which the catalog's
	// answers then carry no keys for; nil when it holds none. Never
	// answered to a client: its keys are vended per table or not at all.
	StorageProperties(catalog string) map[string]string
}

// BaseURL is the URL iceberg-go's client addresses a pipeline transport
// at; the host is never dialled.
const BaseURL = "http://lakegate.pipeline"

// Catalogs hands out each lakegate catalog's clients: the typed Client,
// and one iceberg-go REST client per catalog for scan planning, built on
// first use (it reads the catalog's /v1/config once) and reused; a failed
// build is retried on the next call.
type Catalogs struct {
	pipelines Pipelines
	mu        sync.Mutex
	clients   map[string]*rest.Catalog
}

// NewCatalogs wraps p.
func NewCatalogs(p Pipelines) *Catalogs {
	return &Catalogs{pipelines: p, clients: map[string]*rest.Catalog{}}
}

// ErrNoCatalog is returned for a catalog lakegate does not serve.
var ErrNoCatalog = fmt.Errorf("no such catalog")

// Locations is catalog name's location rule (see Pipelines).
func (c *Catalogs) Locations(name string) *locations.Rule { return c.pipelines.Locations(name) }

// StorageProperties is catalog name's storage keys (see Pipelines).
func (c *Catalogs) StorageProperties(name string) map[string]string {
	return c.pipelines.StorageProperties(name)
}

// Open returns the iceberg-go REST client of catalog name.
func (c *Catalogs) Open(ctx context.Context, name string) (*rest.Catalog, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[name]; ok {
		return cl, nil
	}
	rt, ok := c.pipelines.Transport(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoCatalog, name)
	}
	cl, err := rest.NewCatalog(ctx, name, BaseURL,
		rest.WithCustomTransport(rt), rest.WithWarehouseLocation(name))
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", name, err)
	}
	c.clients[name] = cl
	return cl, nil
}

// Client returns catalog name's typed client. It asks the backend
// nothing: the gateway fixed the catalog's names and separator at
// Provision.
func (c *Catalogs) Client(name string) (*Client, error) {
	if _, ok := c.pipelines.Transport(name); !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoCatalog, name)
	}
	return &Client{Catalog: name, pipelines: c.pipelines}, nil
}
