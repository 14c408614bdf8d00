package unity

import (
	"context"
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/translate/delta"
)

// Scope is what a caller may list, for the scan that finds a table by id
// when the index does not know it: the catalogs it may use, and which of
// a page's schemas and tables it is shown (as listSchemas and listTables
// would show them).
type Scope struct {
	Catalogs []string
	Schemas  func(catalog string) Shown
	Tables   func(catalog, schema string) Shown
}

// maxScannedTables bounds the scan for a table id the index does not know:
// each table looked at is a load (from the table cache when warm). A
// table past the bound is found once a listing or getTable has shown it.
const maxScannedTables = 1000

// TableByID finds the table whose id (uuid) is id. decide is the policy's
// decision on a table, asked before the table is read: through the index,
// a caller the policy refuses reads nothing. The index's entry is then
// checked against the table's uuid; a stale one (the table renamed,
// dropped, replaced) falls back to the scan, whose find is decided too.
func (s *Service) TableByID(ctx context.Context, id string, scope Scope, decide func(delta.Ref) error) (*TableInfo, delta.Ref, error) {
	if ref := s.indexed(ctx, id); ref != nil {
		if err := decide(*ref); err != nil {
			return nil, delta.Ref{}, err
		}
		info, err := s.Table(ctx, *ref)
		if err == nil && info.TableID == id {
			return info, *ref, nil
		}
		if err != nil && !gone(err) {
			return nil, delta.Ref{}, err
		}
	}
	info, ref, err := s.scan(ctx, id, scope)
	if err != nil {
		return nil, delta.Ref{}, err
	}
	return info, ref, decide(ref)
}

// indexed is the index's entry for id; an index that cannot answer is a
// miss (the scan still finds the table).
func (s *Service) indexed(ctx context.Context, id string) *delta.Ref {
	if s.index == nil {
		return nil
	}
	ref, err := s.index.Lookup(ctx, id)
	if err != nil {
		return nil
	}
	return ref
}

// gone is a table, schema or catalog that no longer holds what the index
// said, or no longer is a UC table.
func gone(err error) bool {
	switch AsError(err).Code {
	case TableNotFound, SchemaNotFound, CatalogNotFound, UnsupportedTableFormat:
		return true
	}
	return false
}

// scan looks for id among the tables scope shows, catalog by catalog,
// schema by schema, page by page, at most maxScannedTables of them; every
// table looked at is remembered in the index on the way (Table).
func (s *Service) scan(ctx context.Context, id string, scope Scope) (*TableInfo, delta.Ref, error) {
	budget := maxScannedTables
	for _, catalog := range scope.Catalogs {
		c, err := s.client(ctx, catalog)
		if err != nil {
			return nil, delta.Ref{}, err
		}
		for q := (url.Values{}); ; {
			names, next, err := schemaPage(ctx, c, q)
			if err != nil {
				return nil, delta.Ref{}, err
			}
			keep := scope.Schemas(catalog).of(names)
			for i, schema := range names {
				if i >= len(keep) || !keep[i] {
					continue
				}
				info, err := s.scanSchema(ctx, id, catalog, schema, scope, &budget)
				if info != nil || err != nil {
					return info, delta.Ref{Catalog: catalog, Namespace: []string{schema}, Name: info.nameOrEmpty()}, err
				}
				if budget <= 0 {
					return nil, delta.Ref{}, Errorf(http.StatusNotFound, TableNotFound,
						"Table not found: no table with id %s among the first %d tables you may list", id, maxScannedTables)
				}
			}
			if next == "" || next == q.Get("page_token") {
				break
			}
			q = url.Values{"page_token": {next}}
		}
	}
	return nil, delta.Ref{}, Errorf(http.StatusNotFound, TableNotFound, "Table not found: no table with id %s that you may list", id)
}

// scanSchema looks for id among one schema's tables, spending budget.
func (s *Service) scanSchema(ctx context.Context, id, catalog, schema string, scope Scope, budget *int) (*TableInfo, error) {
	for q := (url.Values{}); *budget > 0; {
		q.Set("max_results", "50")
		page, err := s.Tables(ctx, catalog, schema, q, budgeted(scope.Tables(catalog, schema), budget))
		if err != nil {
			if gone(err) {
				return nil, nil // dropped since the listing
			}
			return nil, err
		}
		for i := range page.Tables {
			if page.Tables[i].TableID == id {
				return &page.Tables[i], nil
			}
		}
		if page.NextPageToken == "" || page.NextPageToken == q.Get("page_token") {
			return nil, nil
		}
		q = url.Values{"page_token": {page.NextPageToken}}
	}
	return nil, nil
}

// budgeted shows what shown shows, up to budget items, counting them down:
// each shown table is a load.
func budgeted(shown Shown, budget *int) Shown {
	return func(names []string) []bool {
		keep := shown.of(names)
		for i := range keep {
			if keep[i] {
				keep[i] = *budget > 0
				*budget--
			}
		}
		return keep
	}
}

func (t *TableInfo) nameOrEmpty() string {
	if t == nil {
		return ""
	}
	return t.Name
}
