package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// icebergClient is the catalog's raw Iceberg REST client with the Delta
// error model: the translator needs what iceberg-go's client hides (the
// upstream error type, to pick the Delta one; stage-create, register with
// overwrite and the credentials endpoint).
type icebergClient struct {
	*translate.Client
}

// catalogError maps a failure to reach a catalog to the Delta model.
func catalogError(name string, err error) error {
	if errors.Is(err, translate.ErrNoCatalog) {
		return Errorf(http.StatusNotFound, NoSuchCatalog, "no catalog named %q", name)
	}
	return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: %v", name, err)
}

// request is an Iceberg call's extras.
type request struct {
	header   http.Header
	query    url.Values
	conflict string // Delta type for a 409 CommitFailedException
}

// tableOp is operation op on table tbl of namespace ns.
func tableOp(op string, ns []string, tbl string) icerest.Route {
	return icerest.Route{Operation: op, Namespace: ns, Table: tbl}
}

// do sends one request; a non-2xx answer becomes a Delta error, a 2xx body
// is decoded into out when out is not nil.
func (c *icebergClient) do(ctx context.Context, rt icerest.Route, body, out any, opt *request) error {
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding the body of %s: %w", rt.Operation, err)
		}
		raw = b
	}
	header := http.Header{"Content-Type": {"application/json"}}
	// The Delta client's own credentials, for backends that pass them through.
	if a := caller.From(ctx).Authorization; a != "" {
		header.Set("Authorization", a)
	}
	conflict := AlreadyExists
	if opt != nil {
		for k, v := range opt.header {
			header[k] = v
		}
		if opt.conflict != "" {
			conflict = opt.conflict
		}
	}
	var query url.Values
	if opt != nil {
		query = opt.query
	}
	resp, err := c.Do(ctx, translate.Call{Route: rt, Query: query, Header: header, Body: raw})
	if err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: %v", c.Catalog, err)
	}
	if resp.Status >= 300 {
		return fromIceberg(resp.Status, resp.Body, conflict)
	}
	if out == nil || len(resp.Body) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: malformed answer to %s: %v", c.Catalog, rt.Operation, err)
	}
	return nil
}

// Call sends one request on c as the Delta translator sends its own, for
// translators of UC's other APIs: a non-2xx answer becomes a Delta-model
// error, a 2xx body is decoded into out when out is not nil.
func Call(ctx context.Context, c *translate.Client, rt icerest.Route, query url.Values, body, out any) error {
	return (&icebergClient{c}).do(ctx, rt, body, out, &request{query: query})
}

// loaded is a LoadTableResult with its metadata parsed in the same
// decode (translate.ParsedMetadata).
type loaded struct {
	MetadataLocation string                        `json:"metadata-location"`
	Parsed           translate.ParsedMetadata      `json:"metadata"`
	Config           map[string]string             `json:"config"`
	Credentials      []translate.StorageCredential `json:"storage-credentials"`
	Metadata         table.Metadata                `json:"-"`
}

func (l *loaded) parse(catalog string) error {
	switch {
	case l.Parsed.Err != nil:
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: malformed table metadata: %v", catalog, l.Parsed.Err)
	case l.Parsed.Metadata == nil:
		return Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: the answer has no table metadata", catalog)
	}
	l.Metadata = l.Parsed.Metadata
	return nil
}

var vended = http.Header{"X-Iceberg-Access-Delegation": {"vended-credentials"}}

func (c *icebergClient) load(ctx context.Context, ns []string, tbl string, withCreds bool) (*loaded, error) {
	opt := &request{}
	if withCreds {
		opt.header = vended
	}
	var l loaded
	if err := c.do(ctx, tableOp(icerest.OpLoadTable, ns, tbl), nil, &l, opt); err != nil {
		return nil, c.schemaMissing(ctx, ns, err)
	}
	return &l, l.parse(c.Catalog)
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
	exists := icerest.Route{Operation: icerest.OpNamespaceExists, Namespace: ns}
	if herr := c.do(ctx, exists, nil, nil, nil); herr != nil && AsError(herr).Code == http.StatusNotFound {
		return Errorf(http.StatusNotFound, NoSuchSchema, "schema %s does not exist in catalog %q", strings.Join(ns, "."), c.Catalog)
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
	if err := c.do(ctx, tableOp(icerest.OpCreateTable, ns, ""), body, &l, opt); err != nil {
		return nil, err
	}
	return &l, l.parse(c.Catalog)
}

// commit runs an Iceberg UpdateTable; a failed requirement is conflict.
func (c *icebergClient) commit(ctx context.Context, ns []string, tbl string, reqs []table.Requirement, ups []table.Update, conflict string) (*loaded, error) {
	body := map[string]any{
		"identifier":   map[string]any{"namespace": ns, "name": tbl},
		"requirements": nonNil(reqs),
		"updates":      nonNilU(ups),
	}
	var l loaded
	if err := c.do(ctx, tableOp(icerest.OpUpdateTable, ns, tbl), body, &l, &request{conflict: conflict}); err != nil {
		return nil, err
	}
	return &l, l.parse(c.Catalog)
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
	if err := c.do(ctx, tableOp(icerest.OpRegisterTable, ns, ""), body, &l, nil); err != nil {
		return nil, err
	}
	return &l, l.parse(c.Catalog)
}

func (c *icebergClient) drop(ctx context.Context, ns []string, tbl string) error {
	return c.schemaMissing(ctx, ns, c.do(ctx, tableOp(icerest.OpDropTable, ns, tbl), nil, nil, nil))
}

// peeked is what the checks before a drop, a rename or a create need of a
// table, read from its LoadTable answer without parsing the rest: a table
// lakegate cannot parse (a backend that stored a duplicate snapshot id,
// which iceberg-go refuses) must not block them.
type peeked struct {
	Location   string            `json:"location"`
	Properties map[string]string `json:"properties"`
}

func (c *icebergClient) peek(ctx context.Context, ns []string, tbl string) (*peeked, error) {
	var l translate.LoadResult
	if err := c.do(ctx, tableOp(icerest.OpLoadTable, ns, tbl), nil, &l, nil); err != nil {
		return nil, c.schemaMissing(ctx, ns, err)
	}
	var p peeked
	if err := json.Unmarshal(l.Metadata, &p); err != nil {
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: table %s: unreadable metadata: %v",
			c.Catalog, qualified(ns, tbl), err)
	}
	return &p, nil
}

// qualified is a table's dotted name in messages: schema levels, then table.
func qualified(ns []string, tbl string) string {
	return strings.Join(append(slices.Clone(ns), tbl), ".")
}

func (c *icebergClient) rename(ctx context.Context, ns []string, from, to string) error {
	body := map[string]any{
		"source":      map[string]any{"namespace": ns, "name": from},
		"destination": map[string]any{"namespace": ns, "name": to},
	}
	return c.schemaMissing(ctx, ns, c.do(ctx, icerest.Route{Operation: icerest.OpRenameTable}, body, nil, nil))
}

// credentials calls the Iceberg loadCredentials endpoint.
func (c *icebergClient) credentials(ctx context.Context, ns []string, tbl string) ([]translate.StorageCredential, error) {
	var out struct {
		Credentials []translate.StorageCredential `json:"storage-credentials"`
	}
	err := c.do(ctx, tableOp(icerest.OpLoadCredentials, ns, tbl), nil, &out, &request{header: vended})
	return out.Credentials, err
}

func (c *icebergClient) reportMetrics(ctx context.Context, ns []string, tbl string, report any) error {
	return c.do(ctx, tableOp(icerest.OpReportMetrics, ns, tbl), report, nil, nil)
}
