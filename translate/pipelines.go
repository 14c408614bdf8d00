// Package translate holds what the Delta front doors share: the way a
// translator reaches a catalog's Iceberg pipeline. Translators never talk
// to backends: every Iceberg call they make runs through the pipeline
// (replay, LoadTable cache, breakers) of the catalog it addresses.
package translate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog/rest"
)

// Pipelines opens the Iceberg pipeline of a lakegate catalog as an HTTP
// transport. The transport serves Iceberg REST requests under
// /v1/{catalog}/... (and /v1/config), on behalf of the principal the
// request's context carries (WithPrincipal); it decides no policy: the
// front door already did, on the operation its client asked for.
type Pipelines interface {
	Transport(catalog string) (http.RoundTripper, bool)
}

// BaseURL is the URL translators address a pipeline transport at; the
// host is never dialled.
const BaseURL = "http://lakegate.pipeline"

type principalKey struct{}

// WithPrincipal tells the pipeline whom a translated call is made for
// (cache scoping, replay ownership).
func WithPrincipal(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, principalKey{}, id)
}

// PrincipalFrom is the principal WithPrincipal stored, or "anonymous".
func PrincipalFrom(ctx context.Context) string {
	if id, ok := ctx.Value(principalKey{}).(string); ok && id != "" {
		return id
	}
	return "anonymous"
}

// Catalogs keeps one iceberg-go REST client per lakegate catalog, speaking
// to that catalog's pipeline. A client is built on first use (it reads the
// catalog's /v1/config once) and reused; a failed build is retried on the
// next call, so a backend that was down at first use is picked up later.
type Catalogs struct {
	pipelines  Pipelines
	mu         sync.Mutex
	clients    map[string]*rest.Catalog
	separators map[string]string
}

// NewCatalogs wraps p.
func NewCatalogs(p Pipelines) *Catalogs {
	return &Catalogs{pipelines: p, clients: map[string]*rest.Catalog{}, separators: map[string]string{}}
}

// ErrNoCatalog is returned by Open for a catalog lakegate does not serve.
var ErrNoCatalog = fmt.Errorf("no such catalog")

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

// Transport is the raw pipeline transport of catalog name, for calls the
// REST client does not offer (stage-create, register with overwrite).
func (c *Catalogs) Transport(name string) (http.RoundTripper, bool) {
	return c.pipelines.Transport(name)
}

// NamespacePath is ns as a path segment of catalog name's Iceberg routes:
// its levels escaped and joined with the separator the catalog's
// /v1/config advertises (%1F, the spec's default, when it names none).
func (c *Catalogs) NamespacePath(ctx context.Context, name string, ns []string) (string, error) {
	sep, err := c.separator(ctx, name)
	if err != nil {
		return "", err
	}
	levels := make([]string, len(ns))
	for i, l := range ns {
		levels[i] = url.PathEscape(l)
	}
	return strings.Join(levels, sep), nil
}

func (c *Catalogs) separator(ctx context.Context, name string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sep, ok := c.separators[name]; ok {
		return sep, nil
	}
	rt, ok := c.pipelines.Transport(name)
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrNoCatalog, name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, BaseURL+"/v1/config?warehouse="+url.QueryEscape(name), nil)
	if err != nil {
		return "", err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var cfg struct {
		Overrides map[string]string `json:"overrides"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("catalog %q: /v1/config answered %d", name, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&cfg); err != nil {
		return "", fmt.Errorf("catalog %q: reading /v1/config: %w", name, err)
	}
	sep := "%1F"
	if s := cfg.Overrides["namespace-separator"]; s != "" {
		sep = s
	}
	c.separators[name] = sep
	return sep, nil
}
