package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/translate"
)

// icebergClient speaks raw Iceberg REST to one catalog's pipeline. It is
// raw rather than iceberg-go's client because the translator needs what
// that client hides: the upstream error type (to pick the Delta one),
// stage-create, register with overwrite and the credentials endpoint.
type icebergClient struct {
	catalog string
	rt      http.RoundTripper
	sep     string // escaped namespace separator the pipeline expects
}

// clients caches one icebergClient per catalog: the separator is read once
// from the pipeline's /v1/config, and re-read after a failure.
type clients struct {
	pipelines translate.Pipelines
	mu        sync.Mutex
	byName    map[string]*icebergClient
}

func (c *clients) get(ctx context.Context, name string) (*icebergClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.byName[name]; ok {
		return cl, nil
	}
	rt, ok := c.pipelines.Transport(name)
	if !ok {
		return nil, Errorf(http.StatusNotFound, NoSuchCatalog, "no catalog named %q", name)
	}
	cl := &icebergClient{catalog: name, rt: rt, sep: "%1F"}
	var cfg struct {
		Overrides map[string]string `json:"overrides"`
	}
	if err := cl.do(ctx, http.MethodGet, "/v1/config?warehouse="+url.QueryEscape(name), nil, &cfg, nil); err != nil {
		return nil, err
	}
	if s := cfg.Overrides["namespace-separator"]; s != "" {
		cl.sep = s
	}
	c.byName[name] = cl
	return cl, nil
}

type authzKey struct{}

// WithAuthorization carries the Delta client's Authorization header onto
// the translated Iceberg calls, for backends that pass client credentials
// through.
func WithAuthorization(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, authzKey{}, header)
}

// request is an Iceberg call's extras.
type request struct {
	header   http.Header
	conflict string // Delta type for a 409 CommitFailedException
}

// do sends one request; a non-2xx answer becomes a Delta error, a 2xx body
// is decoded into out when out is not nil.
func (c *icebergClient) do(ctx context.Context, method, path string, body, out any, opt *request) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, translate.BaseURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if a, _ := ctx.Value(authzKey{}).(string); a != "" {
		req.Header.Set("Authorization", a)
	}
	conflict := AlreadyExists
	if opt != nil {
		for k, v := range opt.header {
			req.Header[k] = v
		}
		if opt.conflict != "" {
			conflict = opt.conflict
		}
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: %v", c.catalog, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: reading answer: %v", c.catalog, err)
	}
	if resp.StatusCode >= 300 {
		return fromIceberg(resp.StatusCode, raw, conflict)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: malformed answer to %s: %v", c.catalog, method, err)
	}
	return nil
}

// tablesPath is /v1/{catalog}/namespaces/{ns}/tables[/{table}[suffix]].
func (c *icebergClient) tablesPath(ns []string, tbl, suffix string) string {
	levels := make([]string, len(ns))
	for i, l := range ns {
		levels[i] = url.PathEscape(l)
	}
	p := "/v1/" + url.PathEscape(c.catalog) + "/namespaces/" + strings.Join(levels, c.sep) + "/tables"
	if tbl != "" {
		p += "/" + url.PathEscape(tbl)
	}
	return p + suffix
}

// StorageCredential is an Iceberg vended credential.
type StorageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// loaded is a LoadTableResult with its metadata parsed.
type loaded struct {
	Location    string              `json:"metadata-location"`
	RawMetadata json.RawMessage     `json:"metadata"`
	Config      map[string]string   `json:"config"`
	Credentials []StorageCredential `json:"storage-credentials"`
	Metadata    table.Metadata      `json:"-"`
}

func (l *loaded) parse(catalog string) error {
	m, err := table.ParseMetadataBytes(l.RawMetadata)
	if err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: malformed table metadata: %v", catalog, err)
	}
	l.Metadata = m
	return nil
}

var vended = http.Header{"X-Iceberg-Access-Delegation": {"vended-credentials"}}

func (c *icebergClient) load(ctx context.Context, ns []string, tbl string, withCreds bool) (*loaded, error) {
	opt := &request{}
	if withCreds {
		opt.header = vended
	}
	var l loaded
	if err := c.do(ctx, http.MethodGet, c.tablesPath(ns, tbl, ""), nil, &l, opt); err != nil {
		return nil, c.schemaMissing(ctx, ns, err)
	}
	return &l, l.parse(c.catalog)
}

// schemaMissing turns a table-not-found into NoSuchSchemaException when
// it is the namespace that is missing: some catalogs do not say which.
func (c *icebergClient) schemaMissing(ctx context.Context, ns []string, err error) error {
	if err == nil {
		return nil
	}
	if e := AsError(err); e.Code != http.StatusNotFound || e.Type != NoSuchTable {
		return err
	}
	p := "/v1/" + url.PathEscape(c.catalog) + "/namespaces/" + c.nsPath(ns)
	if herr := c.do(ctx, http.MethodHead, p, nil, nil, nil); herr != nil && AsError(herr).Code == http.StatusNotFound {
		return Errorf(http.StatusNotFound, NoSuchSchema, "schema %s does not exist in catalog %q", strings.Join(ns, "."), c.catalog)
	}
	return err
}

// createBody is the Iceberg CreateTableRequest.
type createBody struct {
	Name          string            `json:"name"`
	Location      string            `json:"location,omitempty"`
	Schema        any               `json:"schema"`
	PartitionSpec any               `json:"partition-spec,omitempty"`
	StageCreate   bool              `json:"stage-create,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
}

func (c *icebergClient) create(ctx context.Context, ns []string, body createBody, withCreds bool) (*loaded, error) {
	opt := &request{}
	if withCreds {
		opt.header = vended
	}
	var l loaded
	if err := c.do(ctx, http.MethodPost, c.tablesPath(ns, "", ""), body, &l, opt); err != nil {
		return nil, err
	}
	return &l, l.parse(c.catalog)
}

// commit runs an Iceberg UpdateTable; a failed requirement is conflict.
func (c *icebergClient) commit(ctx context.Context, ns []string, tbl string, reqs []table.Requirement, ups []table.Update, conflict string) (*loaded, error) {
	body := map[string]any{
		"identifier":   map[string]any{"namespace": ns, "name": tbl},
		"requirements": nonNil(reqs),
		"updates":      nonNilU(ups),
	}
	var l loaded
	if err := c.do(ctx, http.MethodPost, c.tablesPath(ns, tbl, ""), body, &l, &request{conflict: conflict}); err != nil {
		return nil, err
	}
	return &l, l.parse(c.catalog)
}

func nonNil(r []table.Requirement) []table.Requirement {
	if r == nil {
		return []table.Requirement{}
	}
	return r
}

func nonNilU(u []table.Update) []table.Update {
	if u == nil {
		return []table.Update{}
	}
	return u
}

// register moves (overwrite) or adds a table at an existing metadata file.
func (c *icebergClient) register(ctx context.Context, ns []string, tbl, metadataLocation string, overwrite bool) (*loaded, error) {
	body := map[string]any{"name": tbl, "metadata-location": metadataLocation, "overwrite": overwrite}
	var l loaded
	p := "/v1/" + url.PathEscape(c.catalog) + "/namespaces/" + c.nsPath(ns) + "/register"
	if err := c.do(ctx, http.MethodPost, p, body, &l, nil); err != nil {
		return nil, err
	}
	return &l, l.parse(c.catalog)
}

func (c *icebergClient) nsPath(ns []string) string {
	levels := make([]string, len(ns))
	for i, l := range ns {
		levels[i] = url.PathEscape(l)
	}
	return strings.Join(levels, c.sep)
}

func (c *icebergClient) drop(ctx context.Context, ns []string, tbl string) error {
	return c.schemaMissing(ctx, ns, c.do(ctx, http.MethodDelete, c.tablesPath(ns, tbl, ""), nil, nil, nil))
}

func (c *icebergClient) exists(ctx context.Context, ns []string, tbl string) error {
	return c.do(ctx, http.MethodHead, c.tablesPath(ns, tbl, ""), nil, nil, nil)
}

func (c *icebergClient) rename(ctx context.Context, ns []string, from, to string) error {
	body := map[string]any{
		"source":      map[string]any{"namespace": ns, "name": from},
		"destination": map[string]any{"namespace": ns, "name": to},
	}
	return c.schemaMissing(ctx, ns, c.do(ctx, http.MethodPost, "/v1/"+url.PathEscape(c.catalog)+"/tables/rename", body, nil, nil))
}

// credentials calls the Iceberg loadCredentials endpoint.
func (c *icebergClient) credentials(ctx context.Context, ns []string, tbl string) ([]StorageCredential, error) {
	var out struct {
		Credentials []StorageCredential `json:"storage-credentials"`
	}
	err := c.do(ctx, http.MethodGet, c.tablesPath(ns, tbl, "/credentials"), nil, &out, &request{header: vended})
	return out.Credentials, err
}

func (c *icebergClient) reportMetrics(ctx context.Context, ns []string, tbl string, report any) error {
	return c.do(ctx, http.MethodPost, c.tablesPath(ns, tbl, "/metrics"), report, nil, nil)
}
