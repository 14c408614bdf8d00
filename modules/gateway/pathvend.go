package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// Temporary path credentials of a catalog that vends (UC's
// temporary-path-credentials, the Delta API's getTemporaryPathCredentials).
// Its keys are vended per table under the policy on that table, so keys
// for a path are vended only once lakegate knows every table whose files
// the path covers: all the catalog's tables (and views, whose metadata
// is no new table's place) are enumerated as the gateway (not the
// caller, who may not list them all), each one's locations read,
// and the path is decided as the one table it lies in (keys scoped to the
// path), or, when it lies in none and holds none, as a new table's place
// (createTable on the catalog). A parent of tables is never vended. The
// enumeration is bounded and never cached: a partial or stale view could
// miss a table the path covers.

// maxPathScanCalls bounds one enumeration: the catalog calls (namespace,
// table and view list pages, one load per table and view) it may make before the path
// is refused. A catalog larger than that gets no path credentials.
const maxPathScanCalls = 10000

// pathScanPrincipal is who the enumeration's calls are made as in the
// pipeline (its caches are scoped by it): the gateway itself, with no
// client's Authorization forwarded.
const pathScanPrincipal = "lakegate:path-credentials"

// Path accesses asked for.
type pathAccess int

const (
	pathRead        pathAccess = iota // UC PATH_READ, the Delta API's READ
	pathReadWrite                     // UC PATH_READ_WRITE: inside one table
	pathCreateTable                   // UC PATH_CREATE_TABLE: a new table's place
	pathWrite                         // the Delta API's READ_WRITE: a table's or a new table's
)

// catalogTable is one table (or view) of an enumeration and its
// locations.
type catalogTable struct {
	ns   []string
	name string
	locs []string // as the catalog answered them, each confined to the catalog's locations
	view bool     // a view: its metadata files are no table's, and no path credentials reach them
}

// vendingCatalogOf is the catalog (first by name) that vends and whose
// locations hold loc, or nil.
func (a *App) vendingCatalogOf(loc string) *catalogState {
	for _, name := range slices.Sorted(maps.Keys(a.backends)) {
		if cat := a.backends[name]; cat.vending != nil && cat.locations != nil && cat.locations.Allows(loc) {
			return cat
		}
	}
	return nil
}

// sharedWith refuses loc when another catalog's locations meet it (hold
// it, or lie below it): that catalog's tables there are not enumerated.
func (a *App) sharedWith(cat *catalogState, loc string) error {
	for _, name := range slices.Sorted(maps.Keys(a.backends)) {
		if other := a.backends[name]; other != cat && other.locations.Meets(loc) {
			return icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"%q meets the allowed locations of catalog %q too, whose tables are not checked: no credentials are vended for it",
				loc, name)
		}
	}
	return nil
}

// vendPathKeys decides p's access to loc (inside cat's locations) and,
// unless dryRun, vends keys scoped to loc. api and apiOp name the door's
// operation to the policy. ok is false for a dry run (nothing vended).
// Errors are in the Iceberg model.
func (a *App) vendPathKeys(r *http.Request, p *identity.Principal, cat *catalogState, api, apiOp, loc string,
	want pathAccess, dryRun bool) (c storage.Credentials, ok bool, err error) {
	place, err := storage.ParsePlace(loc)
	if err != nil {
		return c, false, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"no credentials can be scoped to %q: %v", loc, err)
	}
	if err := a.sharedWith(cat, loc); err != nil {
		return c, false, err
	}
	tables, err := a.catalogTables(r, cat)
	if err != nil {
		return c, false, err
	}
	holder, err := pathHolder(tables, loc, cat.cfg.Name)
	if err != nil {
		return c, false, err
	}
	access, q, what := storage.Read, policyRequest{api: api, apiOp: apiOp}, loc
	switch {
	case holder != nil && holder.view:
		return c, false, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"%q lies inside view %s: path credentials are vended for tables' files and new tables' places only",
			loc, tableName(holder.ns, holder.name))
	case holder != nil && want == pathCreateTable:
		return c, false, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"%q lies inside table %s: a new table cannot be created there", loc, tableName(holder.ns, holder.name))
	case holder != nil:
		// Decided as that table's credentials, scoped to the path.
		access = accessOf(want != pathRead)
		q.op, q.resource = icerest.OpSignRequest, policies.Resource{Namespace: holder.ns, Table: holder.name}
		what = tableName(holder.ns, holder.name)
	case want == pathRead || want == pathReadWrite:
		return c, false, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"%q lies inside no table of catalog %q: read credentials are vended for a table's files only", loc, cat.cfg.Name)
	case !belowRoot(cat.locations, loc):
		return c, false, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"%q is a root of catalog %q's locations: a new table's place lies below one", loc, cat.cfg.Name)
	default:
		// A new table's place: the namespace is not known from a path,
		// so decided as createTable on the catalog (UC decides CREATE on
		// the external location).
		access = storage.Write
		q.op, q.resource = icerest.OpCreateTable, policies.Resource{Location: loc}
	}
	if err := a.decideVend(r, p, cat, q, what, access); err != nil {
		return c, false, err
	}
	if dryRun {
		return c, false, nil
	}
	c, err = cat.vend(r, p, what, []storage.Place{place}, access)
	return c, err == nil, err
}

// pathHolder is the one table whose locations hold loc, or nil when none
// does; loc must hold no table's location (other than the holder's own
// locations inside it) and lie in one table at most.
func pathHolder(tables []catalogTable, loc, catalog string) (*catalogTable, error) {
	inLoc := mustRule(loc)
	var holder *catalogTable
	for i := range tables {
		t := &tables[i]
		inside, covers := false, ""
		for _, l := range t.locs {
			if l == "" {
				continue
			}
			if mustRule(l).Allows(loc) {
				inside = true
			} else if inLoc.Allows(l) {
				covers = l
			}
		}
		switch {
		case inside && holder != nil:
			return nil, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"%q lies inside two of catalog %q's tables or views (%s and %s): no credentials are vended for it",
				loc, catalog, tableName(holder.ns, holder.name), tableName(t.ns, t.name))
		case inside:
			holder = t
		case covers != "":
			return nil, icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
				"%q holds %s %s of catalog %q (at %q): credentials for a parent of %ss are never vended",
				loc, t.kind(), tableName(t.ns, t.name), catalog, covers, t.kind())
		}
	}
	return holder, nil
}

func (t *catalogTable) kind() string {
	if t.view {
		return "view"
	}
	return "table"
}

// belowRoot says loc lies strictly below one of rule's roots: its parent
// (loc without its last segment, loc has no trailing "/") is allowed.
func belowRoot(rule *locations.Rule, loc string) bool {
	i := strings.LastIndex(loc, "/")
	return i > 0 && !strings.HasSuffix(loc[:i], "/") && rule.Allows(loc[:i])
}

// mustRule is the rule allowing loc and what lies below it; a location
// that does not parse allows nothing (a nil rule).
func mustRule(loc string) *locations.Rule {
	r, _ := locations.New(loc)
	return r
}

// catalogTables enumerates all of cat's tables as the gateway: every
// namespace (nested, every page), every table's locations. Any failed
// call, or more than maxPathScanCalls, is an error: no view of part of
// the catalog is returned.
func (a *App) catalogTables(r *http.Request, cat *catalogState) ([]catalogTable, error) {
	s := &pathScan{a: a, r: r, cat: cat}
	if err := s.walk(nil); err != nil {
		return nil, err
	}
	return s.tables, nil
}

type pathScan struct {
	a      *App
	r      *http.Request
	cat    *catalogState
	calls  int
	tables []catalogTable
}

// walk adds ns's tables (none at the root) and its child namespaces'.
func (s *pathScan) walk(ns []string) error {
	if len(ns) > 0 {
		if err := s.tablesOf(ns); err != nil {
			return err
		}
		if err := s.viewsOf(ns); err != nil {
			return err
		}
	}
	var children [][]string
	err := s.pages(icerest.Route{Operation: icerest.OpListNamespaces}, ns, func(raw []byte) (*string, error) {
		var page struct {
			Namespaces    [][]string `json:"namespaces"`
			NextPageToken *string    `json:"next-page-token"`
		}
		err := json.Unmarshal(raw, &page)
		children = append(children, page.Namespaces...)
		return page.NextPageToken, err
	})
	if err != nil {
		return err
	}
	for _, child := range children {
		if len(child) != len(ns)+1 || !slices.Equal(child[:len(ns)], ns) {
			return s.refuse("listNamespaces of %q answered %q, which is not its child", strings.Join(ns, "."), strings.Join(child, "."))
		}
		if err := s.walk(child); err != nil {
			return err
		}
	}
	return nil
}

// tablesOf adds ns's tables, each loaded for its locations.
func (s *pathScan) tablesOf(ns []string) error {
	return s.addListed(icerest.OpListTables, ns, false)
}

// viewsOf adds ns's views, each loaded for its location: a path under a
// view's metadata is no new table's place. A catalog that lists no views
// (404, 405 or 501 to listViews: no such route, or the namespace gone
// meanwhile) has none there to protect.
func (s *pathScan) viewsOf(ns []string) error {
	if err := s.addListed(icerest.OpListViews, ns, true); !errors.Is(err, errNoViews) {
		return err
	}
	return nil
}

// addListed lists ns's tables or views (op) and adds each, loaded.
func (s *pathScan) addListed(op string, ns []string, view bool) error {
	names, err := s.names(op, ns)
	if err != nil {
		return err
	}
	for _, name := range names {
		rt := icerest.Route{Operation: icerest.OpLoadTable, Namespace: ns, Table: name}
		if view {
			rt = icerest.Route{Operation: icerest.OpLoadView, Namespace: ns, View: name}
		}
		if err := s.add(rt, view); err != nil {
			return err
		}
	}
	return nil
}

// names lists ns's tables or views (op listTables or listViews), every
// page.
func (s *pathScan) names(op string, ns []string) ([]string, error) {
	var names []string
	err := s.pages(icerest.Route{Operation: op, Namespace: ns}, nil, func(raw []byte) (*string, error) {
		var page struct {
			Identifiers []struct {
				Name string `json:"name"`
			} `json:"identifiers"`
			NextPageToken *string `json:"next-page-token"`
		}
		err := json.Unmarshal(raw, &page)
		for _, id := range page.Identifiers {
			names = append(names, id.Name)
		}
		return page.NextPageToken, err
	})
	return names, err
}

// add loads the table or view rt names and adds it with its locations.
func (s *pathScan) add(rt icerest.Route, view bool) error {
	body, err := s.call(rt, nil)
	if err != nil {
		return err
	}
	locs, err := confinedLocations(body, s.cat.locations)
	if err != nil {
		return err // the catalog's answer is not trusted for a path either
	}
	t := catalogTable{ns: rt.Namespace, name: rt.Table, locs: locs, view: view}
	if view {
		t.name = rt.View
	}
	if locs[0] == "" {
		return s.refuse("%s %s has no location", t.kind(), tableName(t.ns, t.name))
	}
	s.tables = append(s.tables, t)
	return nil
}

// pages calls rt page by page (parent, when set, as listNamespaces'
// parent), read reading each page and returning its next-page-token.
func (s *pathScan) pages(rt icerest.Route, parent []string, read func([]byte) (*string, error)) error {
	query := url.Values{}
	if len(parent) > 0 {
		query.Set("parent", strings.Join(parent, icerest.UnitSeparator))
	}
	for {
		body, err := s.call(rt, query)
		if err != nil {
			return err
		}
		next, err := read(body)
		if err != nil {
			return s.refuse("%s answered an unreadable page: %v", rt.Operation, err)
		}
		if next == nil || *next == "" {
			return nil
		}
		query.Set("pageToken", *next)
	}
}

// call runs one catalog call as the gateway, counted against the bound;
// an answer other than 200 is a refusal.
func (s *pathScan) call(rt icerest.Route, query url.Values) ([]byte, error) {
	if s.calls++; s.calls > maxPathScanCalls {
		return nil, s.refuse("the catalog needs more than %d calls to enumerate", maxPathScanCalls)
	}
	ctx := caller.With(s.r.Context(), caller.Caller{Principal: pathScanPrincipal})
	res, err := s.a.Serve(ctx, s.cat.cfg.Name, translate.Call{Route: rt, Query: query})
	if err != nil {
		return nil, s.refuse("%s: %v", rt.Operation, err)
	}
	// Only a first page tells a catalog without views: a later page's
	// failure would leave some views out.
	if rt.Operation == icerest.OpListViews && query.Get("pageToken") == "" && (res.Status == http.StatusNotFound ||
		res.Status == http.StatusMethodNotAllowed || res.Status == http.StatusNotImplemented) {
		return nil, errNoViews
	}
	if res.Status != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(res.Body, &e)
		what := rt.Operation
		if rt.Table != "" {
			what += " " + tableName(rt.Namespace, rt.Table)
		} else if len(rt.Namespace) > 0 {
			what += " " + strings.Join(rt.Namespace, ".")
		}
		return nil, s.refuse("%s answered %d: %s", what, res.Status, e.Error.Message)
	}
	return res.Body, nil
}

// errNoViews is a listViews answered as by a catalog without views.
var errNoViews = errors.New("the catalog lists no views")

// refuse is the enumeration cut short: 503, since nothing is vended on a
// partial view of the catalog's tables.
func (s *pathScan) refuse(format string, args ...any) error {
	return icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
		"temporary path credentials are not vended: enumerating catalog %q's tables (to find those the path covers) failed: %s",
		s.cat.cfg.Name, fmt.Sprintf(format, args...))
}
