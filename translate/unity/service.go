package unity

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Service runs UC API operations on the catalogs' Iceberg pipelines:
// namespaces directly, tables through the Delta translator, so a table
// looks the same here as through the Delta API. The front door has
// authenticated and authorized the request.
type Service struct {
	tables   *delta.Service
	catalogs *translate.Catalogs
	index    TableIndex
}

// NewService serves tables as d does, on d's catalogs, noting the id of
// every table it shows in index.
func NewService(d *delta.Service, index TableIndex) *Service {
	return &Service{tables: d, catalogs: d.Catalogs(), index: index}
}

// Page limits: the spec's maxima for max_results.
const (
	maxSchemasPage = 1000
	maxTablesPage  = 50
)

// Catalog answers getCatalog: lakegate's catalogs come from its
// configuration; one answers when its pipeline does.
func (s *Service) Catalog(ctx context.Context, name string) (*CatalogInfo, error) {
	if _, err := s.client(ctx, name); err != nil {
		return nil, err
	}
	return &CatalogInfo{Name: name, Properties: map[string]string{}}, nil
}

// Shown tells which of a listing page's names the caller may see:
// shown[i] for names[i]. nil shows them all.
type Shown func(names []string) []bool

func (f Shown) of(names []string) []bool {
	if f == nil {
		out := make([]bool, len(names))
		for i := range out {
			out[i] = true
		}
		return out
	}
	return f(names)
}

// Schemas answers listSchemas: the catalog's top-level namespaces that
// shown keeps, one page of the catalog's own pagination per call.
func (s *Service) Schemas(ctx context.Context, catalog string, q url.Values, shown Shown) (*ListSchemasResponse, error) {
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	names, next, err := schemaPage(ctx, c, q)
	if err != nil {
		return nil, err
	}
	out := &ListSchemasResponse{Schemas: []SchemaInfo{}, NextPageToken: next}
	keep := shown.of(names)
	for i, name := range names {
		if i >= len(keep) || !keep[i] {
			continue
		}
		info, err := s.Schema(ctx, catalog, name)
		if err != nil {
			if AsError(err).Code == SchemaNotFound {
				continue // dropped since the listing
			}
			return nil, err
		}
		out.Schemas = append(out.Schemas, *info)
	}
	return out, nil
}

// schemaPage is one page of a catalog's top-level namespaces, by name,
// and the token of the next.
func schemaPage(ctx context.Context, c *translate.Client, q url.Values) (names []string, next string, err error) {
	query, err := pageQuery(q, maxSchemasPage)
	if err != nil {
		return nil, "", err
	}
	var page struct {
		Namespaces [][]string `json:"namespaces"`
		Next       *string    `json:"next-page-token"`
	}
	if err := call(ctx, c, icerest.Route{Operation: icerest.OpListNamespaces}, query, nil, &page); err != nil {
		return nil, "", err
	}
	for _, ns := range page.Namespaces {
		if len(ns) == 1 { // UC schemas have one level
			names = append(names, ns[0])
		}
	}
	return names, deref(page.Next), nil
}

// Schema answers getSchema.
func (s *Service) Schema(ctx context.Context, catalog, name string) (*SchemaInfo, error) {
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	var ns struct {
		Properties map[string]string `json:"properties"`
	}
	if err := call(ctx, c, icerest.Route{Operation: icerest.OpLoadNamespaceMetadata, Namespace: []string{name}}, nil, nil, &ns); err != nil {
		return nil, schemaNotFound(err, catalog, name)
	}
	return schemaInfo(catalog, name, ns.Properties), nil
}

// schemaInfo describes a namespace: its properties as they are, its
// comment and location also in UC's own fields.
func schemaInfo(catalog, name string, props map[string]string) *SchemaInfo {
	if props == nil {
		props = map[string]string{}
	}
	return &SchemaInfo{Name: name, CatalogName: catalog, FullName: catalog + "." + name,
		Comment: props["comment"], Properties: props, StorageRoot: props["location"]}
}

// ParseCreateSchema reads createSchema's body; its names are what the
// policy decides on.
func ParseCreateSchema(body []byte) (*CreateSchema, error) {
	var req CreateSchema
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "malformed CreateSchema: %v", err)
	}
	for _, f := range []struct {
		field string
		v     *string
	}{{"name", req.Name}, {"catalog_name", req.CatalogName}} {
		if f.v == nil || *f.v == "" {
			return nil, Errorf(http.StatusBadRequest, InvalidArgument, "%s is required", f.field)
		}
		p := icerest.NameProblem(*f.v)
		if p == "" && strings.Contains(*f.v, ".") {
			// UC refuses it too: no full name could address the schema.
			p = "contains a period, which separates the parts of a full name"
		}
		if p != "" {
			return nil, Errorf(http.StatusBadRequest, InvalidArgument, "invalid %s %q: %s", f.field, *f.v, p)
		}
	}
	return &req, nil
}

// CreateSchema answers createSchema: an Iceberg createNamespace whose
// properties carry the comment and storage root under Iceberg's keys.
func (s *Service) CreateSchema(ctx context.Context, req *CreateSchema) (*SchemaInfo, error) {
	catalog, name := *req.CatalogName, *req.Name
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	props := maps.Clone(req.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if req.Comment != nil {
		props["comment"] = *req.Comment
	}
	if req.StorageRoot != nil {
		props["location"] = *req.StorageRoot
	}
	body := map[string]any{"namespace": []string{name}, "properties": props}
	var created struct {
		Properties map[string]string `json:"properties"`
	}
	if err := call(ctx, c, icerest.Route{Operation: icerest.OpCreateNamespace}, nil, body, &created); err != nil {
		if e := AsError(err); e.Code == AlreadyExists {
			return nil, Errorf(http.StatusBadRequest, SchemaAlreadyExists, "Schema already exists: %s", name)
		}
		return nil, err
	}
	if created.Properties != nil {
		props = created.Properties
	}
	return schemaInfo(catalog, name, props), nil
}

// DeleteSchema answers deleteSchema. With force, the schema's tables and
// views are dropped first (without purge: their files stay), once mayDrop
// has allowed every one of them: a refusal leaves the schema as it was.
func (s *Service) DeleteSchema(ctx context.Context, catalog, name string, force bool, mayDrop func(kind, name string) error) error {
	c, err := s.client(ctx, catalog)
	if err != nil {
		return err
	}
	ns := []string{name}
	if force {
		drops, err := s.contents(ctx, c, ns)
		if err != nil {
			return schemaNotFound(err, catalog, name)
		}
		for _, d := range drops {
			if err := mayDrop(d.kind, d.name); err != nil {
				return err
			}
		}
		for _, d := range drops {
			err := call(ctx, c, d.dropRoute(ns), nil, nil, nil)
			if err != nil && AsError(err).Status != http.StatusNotFound {
				return err
			}
		}
	}
	err = call(ctx, c, icerest.Route{Operation: icerest.OpDropNamespace, Namespace: ns}, nil, nil, nil)
	if e := delta.AsError(err); err != nil && e.Code == http.StatusConflict {
		// (Iceberg's NamespaceNotEmptyException; UC's answer is 400)
		return Errorf(http.StatusBadRequest, FailedPrecondition, "Cannot delete schema with tables: %s", e.Message)
	}
	return schemaNotFound(err, catalog, name)
}

// drop is one table ("tables") or view ("views") of a namespace.
type drop struct{ kind, name string }

// dropRoute is the Iceberg operation that drops d from ns.
func (d drop) dropRoute(ns []string) icerest.Route {
	if d.kind == "views" {
		return icerest.Route{Operation: icerest.OpDropView, Namespace: ns, View: d.name}
	}
	return icerest.Route{Operation: icerest.OpDropTable, Namespace: ns, Table: d.name}
}

// listings are the Iceberg operations that list a namespace's tables and views.
var listings = map[string]string{"tables": icerest.OpListTables, "views": icerest.OpListViews}

// contents lists every table and view of ns (no views where the catalog
// serves none).
func (s *Service) contents(ctx context.Context, c *translate.Client, ns []string) ([]drop, error) {
	var out []drop
	for _, kind := range []string{"tables", "views"} {
		names, err := listAll(ctx, c, icerest.Route{Operation: listings[kind], Namespace: ns})
		if err != nil {
			if kind == "views" && viewsUnsupported(err) {
				break
			}
			return nil, err
		}
		for _, n := range names {
			out = append(out, drop{kind, n})
		}
	}
	return out, nil
}

// viewsUnsupported is a catalog without the view endpoints.
func viewsUnsupported(err error) bool {
	s := AsError(err).Status
	return s == http.StatusNotFound || s == http.StatusNotImplemented || s == http.StatusBadRequest
}

// listAll follows a listing's pages to the end.
func listAll(ctx context.Context, c *translate.Client, rt icerest.Route) ([]string, error) {
	var names []string
	token := ""
	for {
		var page struct {
			Identifiers []struct {
				Name string `json:"name"`
			} `json:"identifiers"`
			Next *string `json:"next-page-token"`
		}
		if err := call(ctx, c, rt, url.Values{"pageToken": {token}}, nil, &page); err != nil {
			return nil, err
		}
		for _, id := range page.Identifiers {
			names = append(names, id.Name)
		}
		if page.Next == nil || *page.Next == "" || *page.Next == token {
			return names, nil
		}
		token = *page.Next
	}
}

// Tables answers listTables: the schema's tables that shown keeps and
// that have a Delta side, as getTable describes them. Iceberg-only tables
// are not UC tables (getTable refuses them), so they are left out of the
// page.
func (s *Service) Tables(ctx context.Context, catalog, name string, q url.Values, shown Shown) (*ListTablesResponse, error) {
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	query, err := pageQuery(q, maxTablesPage)
	if err != nil {
		return nil, err
	}
	var page struct {
		Identifiers []struct {
			Name string `json:"name"`
		} `json:"identifiers"`
		Next *string `json:"next-page-token"`
	}
	list := icerest.Route{Operation: icerest.OpListTables, Namespace: []string{name}}
	if err := call(ctx, c, list, query, nil, &page); err != nil {
		return nil, schemaNotFound(err, catalog, name)
	}
	out := &ListTablesResponse{Tables: []TableInfo{}, NextPageToken: deref(page.Next)}
	names := make([]string, len(page.Identifiers))
	for i, id := range page.Identifiers {
		names[i] = id.Name
	}
	keep := shown.of(names)
	for i, table := range names {
		if i >= len(keep) || !keep[i] {
			continue
		}
		info, err := s.Table(ctx, delta.Ref{Catalog: catalog, Namespace: []string{name}, Name: table})
		if err != nil {
			if code := AsError(err).Code; code == UnsupportedTableFormat || code == TableNotFound {
				continue // not a UC table, or dropped since the listing
			}
			return nil, err
		}
		out.Tables = append(out.Tables, *info)
	}
	return out, nil
}

// Table answers getTable: the table as the Delta API loads it.
func (s *Service) Table(ctx context.Context, ref delta.Ref) (*TableInfo, error) {
	l, err := s.tables.Load(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.shown(ctx, ref, l)
}

// shown describes a table this API answers with, and notes its id: a
// client asks for its credentials by that id.
func (s *Service) shown(ctx context.Context, ref delta.Ref, l *delta.LoadTableResponse) (*TableInfo, error) {
	info, err := tableInfo(ref, l)
	if err == nil && s.index != nil {
		// A failure costs only a scan when the id is asked for.
		_ = s.index.Remember(ctx, info.TableID, ref)
	}
	return info, err
}

// DeleteTable answers deleteTable as the Delta API's deleteTable does.
func (s *Service) DeleteTable(ctx context.Context, ref delta.Ref) error {
	return s.tables.Delete(ctx, ref)
}

func (s *Service) client(ctx context.Context, catalog string) (*translate.Client, error) {
	c, err := s.catalogs.Client(catalog)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, translate.ErrNoCatalog):
		return nil, Errorf(http.StatusNotFound, CatalogNotFound, "Catalog not found: %s", catalog)
	}
	return nil, Errorf(http.StatusBadGateway, Internal, "catalog %q: %v", catalog, err)
}

// call sends one Iceberg request as the Delta translator does (the
// client's own credentials, the upstream error kept); AsError turns its
// errors into UC's.
func call(ctx context.Context, c *translate.Client, rt icerest.Route, query url.Values, body, out any) error {
	return delta.Call(ctx, c, rt, query, body, out)
}

// schemaNotFound names the schema in a namespace-not-found answer.
func schemaNotFound(err error, catalog, name string) error {
	if err != nil && AsError(err).Code == SchemaNotFound {
		return Errorf(http.StatusNotFound, SchemaNotFound, "Schema not found: %s.%s", catalog, name)
	}
	return err
}

// CatalogPage picks a listCatalogs page from the sorted names of the
// catalogs the caller may use: the first max_results of them (all for 0
// or none) after page_token, which is the last name of the previous page;
// the next token is this page's last name while more follow.
func CatalogPage(sorted []string, q url.Values) (page []string, next string, err error) {
	n, err := maxResults(q)
	if err != nil {
		return nil, "", err
	}
	if t := q.Get("page_token"); t != "" {
		i, _ := slices.BinarySearch(sorted, t)
		if i < len(sorted) && sorted[i] == t {
			i++
		}
		sorted = sorted[i:]
	}
	if n == 0 || n >= len(sorted) {
		return sorted, "", nil
	}
	return sorted[:n], sorted[n-1], nil
}

// maxResults reads UC's max_results: 0 (or none) is the server's choice,
// a negative value an error.
func maxResults(q url.Values) (int, error) {
	m := q.Get("max_results")
	if m == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(m)
	if err != nil || n < 0 {
		return 0, Errorf(http.StatusBadRequest, InvalidArgument, "max_results must be a non-negative integer, not %q", m)
	}
	return n, nil
}

// pageQuery turns UC's max_results and page_token into Iceberg's
// pageSize and pageToken. UC's max_results: 0 is the server's choice, a
// negative value an error, a larger one capped at max.
func pageQuery(q url.Values, max int) (url.Values, error) {
	v := url.Values{}
	if t := q.Get("page_token"); t != "" {
		v.Set("pageToken", t)
	}
	n, err := maxResults(q)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		v.Set("pageSize", strconv.Itoa(min(n, max)))
	}
	return v, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
