package translate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client speaks raw Iceberg REST to one catalog's pipeline, for what
// iceberg-go's client hides from translators: stage-create, register with
// overwrite, the credentials endpoint, the upstream's error body, and
// LoadTable's config and storage credentials.
type Client struct {
	Catalog string
	rt      http.RoundTripper
	sep     string // escaped namespace separator the catalog advertises
}

// Response is one raw answer.
type Response struct {
	Status int
	Body   []byte
}

// StorageCredential is an Iceberg vended credential.
type StorageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// LoadResult is the spec's LoadTableResult, its metadata left unparsed.
type LoadResult struct {
	MetadataLocation string              `json:"metadata-location"`
	Metadata         json.RawMessage     `json:"metadata"`
	Config           map[string]string   `json:"config"`
	Credentials      []StorageCredential `json:"storage-credentials"`
}

// ConfigError is a catalog whose /v1/config did not answer 200.
type ConfigError struct {
	Catalog string
	Response
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("catalog %q: /v1/config answered %d", e.Catalog, e.Status)
}

// Do sends one request to path (starting /v1/) with body and header.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, header http.Header) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Body: raw}, nil
}

// NamespacePath is ns as a path segment: levels escaped and joined with
// the catalog's separator.
func (c *Client) NamespacePath(ns []string) string {
	levels := make([]string, len(ns))
	for i, l := range ns {
		levels[i] = url.PathEscape(l)
	}
	return strings.Join(levels, c.sep)
}

// NamespacesPath is /v1/{catalog}/namespaces/{ns}.
func (c *Client) NamespacesPath(ns []string) string {
	return "/v1/" + url.PathEscape(c.Catalog) + "/namespaces/" + c.NamespacePath(ns)
}

// TablesPath is /v1/{catalog}/namespaces/{ns}/tables[/{table}]{suffix}.
func (c *Client) TablesPath(ns []string, tbl, suffix string) string {
	p := c.NamespacesPath(ns) + "/tables"
	if tbl != "" {
		p += "/" + url.PathEscape(tbl)
	}
	return p + suffix
}

// separator reads the namespace separator from /v1/config (%1F, the
// spec's default, when the catalog names none).
func (c *Client) separator(ctx context.Context) (string, error) {
	resp, err := c.Do(ctx, http.MethodGet, "/v1/config?warehouse="+url.QueryEscape(c.Catalog), nil, nil)
	if err != nil {
		return "", fmt.Errorf("catalog %q: %w", c.Catalog, err)
	}
	if resp.Status != http.StatusOK {
		return "", &ConfigError{Catalog: c.Catalog, Response: *resp}
	}
	var cfg struct {
		Overrides map[string]string `json:"overrides"`
	}
	if err := json.Unmarshal(resp.Body, &cfg); err != nil {
		return "", fmt.Errorf("catalog %q: reading /v1/config: %w", c.Catalog, err)
	}
	if s := cfg.Overrides["namespace-separator"]; s != "" {
		return s, nil
	}
	return "%1F", nil
}
