package sharing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/translate"
)

type shareItem struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
}

type schemaItem struct {
	Name  string `json:"name"`
	Share string `json:"share"`
}

type tableItem struct {
	Name   string `json:"name"`
	Schema string `json:"schema"`
	Share  string `json:"share"`
}

type listing[T any] struct {
	Items         []T    `json:"items"`
	NextPageToken string `json:"nextPageToken,omitempty"`
}

func (s *Server) listShares(ctx context.Context, w http.ResponseWriter, r *http.Request, req Request) error {
	var keys []string
	byKey := map[string]shareItem{}
	for _, sh := range s.Shares {
		if req.Access(ctx, OpListShares, Target{Share: sh.Name}) {
			keys = append(keys, sh.Name)
			byKey[sh.Name] = shareItem{Name: sh.Name}
		}
	}
	return page(s, w, r, req.Route, keys, func(k string) shareItem { return byKey[k] })
}

func (s *Server) getShare(ctx context.Context, w http.ResponseWriter, req Request) error {
	sh, err := s.share(ctx, req)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]shareItem{"share": {Name: sh.Name}})
}

// share resolves the route's share, answering 404 both when it does not
// exist and when the caller may not see it (no existence oracle).
func (s *Server) share(ctx context.Context, req Request) (*Share, error) {
	sh, ok := findShare(s.Shares, req.Route.Share)
	if !ok || !req.allowed(ctx, Target{Share: sh.Name}) {
		return nil, notFound("share %q does not exist", req.Route.Share)
	}
	return sh, nil
}

func (s *Server) schema(ctx context.Context, req Request) (*Share, *Schema, error) {
	sh, err := s.share(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	sc, ok := sh.schema(req.Route.Schema)
	if !ok || !req.allowed(ctx, Target{Share: sh.Name, Schema: sc.Name}) {
		return nil, nil, notFound("schema %q does not exist in share %q", req.Route.Schema, sh.Name)
	}
	return sh, sc, nil
}

func (s *Server) listSchemas(ctx context.Context, w http.ResponseWriter, r *http.Request, req Request) error {
	sh, err := s.share(ctx, req)
	if err != nil {
		return err
	}
	var keys []string
	for _, sc := range sh.Schemas {
		if req.Access(ctx, OpListSchemas, Target{Share: sh.Name, Schema: sc.Name}) {
			keys = append(keys, sc.Name)
		}
	}
	return page(s, w, r, req.Route, keys, func(k string) schemaItem { return schemaItem{Name: k, Share: sh.Name} })
}

// listTables serves both table listings: one schema, or the whole share.
func (s *Server) listTables(ctx context.Context, w http.ResponseWriter, r *http.Request, req Request) error {
	sh, schemas, err := s.listedSchemas(ctx, req)
	if err != nil {
		return err
	}
	var keys []string
	byKey := map[string]tableItem{}
	for _, sc := range schemas {
		targets, err := s.schemaTables(ctx, sh, &sc)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if req.Access(ctx, req.Route.Op, t) {
				k := t.Schema + "\x00" + t.Table
				keys = append(keys, k)
				byKey[k] = tableItem{Name: t.Table, Schema: t.Schema, Share: t.Share}
			}
		}
	}
	return page(s, w, r, req.Route, keys, func(k string) tableItem { return byKey[k] })
}

// listedSchemas is the route's share and the schemas a table listing
// covers: the one named, or all of them (all-tables).
func (s *Server) listedSchemas(ctx context.Context, req Request) (*Share, []Schema, error) {
	if req.Route.Op == OpListTables {
		sh, sc, err := s.schema(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		return sh, []Schema{*sc}, nil
	}
	sh, err := s.share(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return sh, sh.Schemas, nil
}

// schemaTables is every table of a schema: those named one by one, then
// each shared namespace's tables (a named table wins a name clash).
func (s *Server) schemaTables(ctx context.Context, sh *Share, sc *Schema) ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	for _, t := range sc.Tables {
		seen[strings.ToLower(t.Name)] = true
		out = append(out, Target{Share: sh.Name, Schema: sc.Name, Table: t.Name,
			Catalog: t.Catalog, Namespace: t.Namespace, IcebergTable: t.Table})
	}
	for _, ns := range sc.Namespaces {
		idents, err := s.namespaceTables(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, id := range idents {
			name := id[len(id)-1]
			if seen[strings.ToLower(name)] {
				continue
			}
			seen[strings.ToLower(name)] = true
			out = append(out, Target{Share: sh.Name, Schema: sc.Name, Table: name,
				Catalog: ns.Catalog, Namespace: ns.Namespace, IcebergTable: name})
		}
	}
	return out, nil
}

func (s *Server) namespaceTables(ctx context.Context, ns NamespaceRef) ([]table.Identifier, error) {
	cl, err := s.Catalogs.Open(ctx, ns.Catalog)
	if err != nil {
		return nil, backendError(err)
	}
	var out []table.Identifier
	for id, err := range cl.ListTables(ctx, ns.Namespace) {
		if err != nil {
			return nil, backendError(err)
		}
		out = append(out, id)
	}
	return out, nil
}

// pageCursor is what a page token seals: which listing it continues and
// the key of the last item already returned.
type pageCursor struct {
	Op     string `json:"o"`
	Share  string `json:"s,omitempty"`
	Schema string `json:"c,omitempty"`
	After  string `json:"a"`
}

const pageTokenPurpose = "delta-sharing-page"

// page answers one page of a listing whose items have the given keys:
// sorted, after the token's key, at most maxResults of them.
func page[T any](s *Server, w http.ResponseWriter, r *http.Request, rt Route, keys []string, item func(string) T) error {
	p, err := ParsePage(r.URL.Query())
	if err != nil {
		return err
	}
	sort.Strings(keys)
	start, err := s.pageStart(rt, p.Token, keys)
	if err != nil {
		return err
	}
	end := len(keys)
	if p.Max < 0 {
		p.Max = defaultMaxResults
	}
	if start+p.Max < end {
		end = start + p.Max
	}
	out := listing[T]{Items: []T{}}
	for _, k := range keys[start:end] {
		out.Items = append(out.Items, item(k))
	}
	if end < len(keys) {
		after := ""
		if end > 0 {
			after = keys[end-1]
		}
		out.NextPageToken = s.pageToken(rt, after)
	}
	return writeJSON(w, out)
}

func (s *Server) pageToken(rt Route, after string) string {
	c := pageCursor{Op: rt.Op, Share: strings.ToLower(rt.Share), Schema: strings.ToLower(rt.Schema), After: after}
	raw, _ := json.Marshal(c)
	return s.Sealer.Seal(pageTokenPurpose, raw, s.now().Add(pageTokenLifetime))
}

// pageStart is the index of the first key after the token's cursor.
func (s *Server) pageStart(rt Route, token string, keys []string) (int, error) {
	if token == "" {
		return 0, nil
	}
	raw, err := s.Sealer.Open(pageTokenPurpose, token, s.now())
	if err != nil {
		return 0, badParam("invalid pageToken: %v", err)
	}
	var c pageCursor
	if json.Unmarshal(raw, &c) != nil || c.Op != rt.Op ||
		c.Share != strings.ToLower(rt.Share) || c.Schema != strings.ToLower(rt.Schema) {
		return 0, badParam("pageToken belongs to another listing")
	}
	return sort.SearchStrings(keys, c.After+"\x00"), nil
}

// backendError maps an Iceberg client error to the protocol's model.
func backendError(err error) *Error {
	switch {
	case errors.Is(err, translate.ErrNoCatalog):
		return notFound("%v", err)
	case errors.Is(err, catalog.ErrNoSuchTable), errors.Is(err, catalog.ErrNoSuchNamespace):
		return notFound("%v", err)
	case errors.Is(err, rest.ErrServiceUnavailable):
		return Errorf(http.StatusServiceUnavailable, CodeUnavailable, "the catalog is unavailable: %v", err)
	case errors.Is(err, rest.ErrForbidden), errors.Is(err, rest.ErrUnauthorized):
		return Errorf(http.StatusForbidden, CodePermissionDenied, "the catalog refused lakegate: %v", err)
	}
	return Errorf(http.StatusBadGateway, CodeInternal, "the catalog failed: %v", err)
}
