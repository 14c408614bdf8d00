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

// Pipelines opens the Iceberg pipeline of a lakegate catalog as an HTTP
// transport. The transport serves Iceberg REST requests under
// /v1/{catalog}/... (and /v1/config), on behalf of the principal the
// request's context carries (caller.With); it decides no policy: the
// front door already did, on the operation its client asked for.
type Pipelines interface {
	Transport(catalog string) (http.RoundTripper, bool)
	// Locations is where the catalog's files may be read from; nil when
	// lakegate does not confine it.
	Locations(catalog string) *locations.Rule
}

// BaseURL is the URL translators address a pipeline transport at; the
// host is never dialled.
const BaseURL = "http://lakegate.pipeline"

// Catalogs keeps one iceberg-go REST client per lakegate catalog, speaking
// to that catalog's pipeline. A client is built on first use (it reads the
// catalog's /v1/config once) and reused; a failed build is retried on the
// next call, so a backend that was down at first use is picked up later.
type Catalogs struct {
	pipelines Pipelines
	mu        sync.Mutex
	clients   map[string]*rest.Catalog
	raw       map[string]*Client
}

// NewCatalogs wraps p.
func NewCatalogs(p Pipelines) *Catalogs {
	return &Catalogs{pipelines: p, clients: map[string]*rest.Catalog{}, raw: map[string]*Client{}}
}

// ErrNoCatalog is returned by Open for a catalog lakegate does not serve.
var ErrNoCatalog = fmt.Errorf("no such catalog")

// Locations is catalog name's location rule (see Pipelines).
func (c *Catalogs) Locations(name string) *locations.Rule { return c.pipelines.Locations(name) }

// Open returns the REST client of catalog name.
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

// Client returns catalog name's raw Iceberg REST client; it reads the
// catalog's namespace separator from /v1/config once.
func (c *Catalogs) Client(ctx context.Context, name string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.raw[name]; ok {
		return cl, nil
	}
	rt, ok := c.pipelines.Transport(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoCatalog, name)
	}
	cl := &Client{Catalog: name, rt: rt}
	sep, err := cl.separator(ctx)
	if err != nil {
		return nil, err
	}
	cl.sep = sep
	c.raw[name] = cl
	return cl, nil
}
