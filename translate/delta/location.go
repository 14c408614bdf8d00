package delta

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream/locations"
)

// CheckLocationSyntax refuses a location that is not absolute: a relative
// one would be resolved against whatever directory the catalog runs in.
func CheckLocationSyntax(loc string) error {
	if err := locations.Valid(loc); err != nil {
		return invalidParam("location %q is not an absolute storage location: %v", loc, err)
	}
	return nil
}

// checkLocation refuses a create whose location lies outside the catalog's
// allowed locations, or overlaps a table of the same schema: two tables
// in one place would read, and vacuum, each other's files. Overlap is
// checked within the schema (one load per table, through the pipeline,
// whose LoadTable cache serves repeats); across schemas the catalog's
// own rules apply.
func (s *Service) checkLocation(ctx context.Context, c *icebergClient, ref Ref, name, loc string) error {
	if rule := s.catalogs.Locations(ref.Catalog); rule != nil {
		if err := rule.Check(loc); err != nil {
			return Errorf(http.StatusForbidden, PermissionDenied,
				"location %q is outside catalog %q's allowed locations", loc, ref.Catalog)
		}
	}
	names, err := c.listTables(ctx, ref.Namespace)
	if err != nil {
		return err
	}
	for _, other := range names {
		if other == name {
			continue // the create itself answers AlreadyExists
		}
		at, err := c.tableLocation(ctx, ref.Namespace, other)
		if err != nil {
			if AsError(err).Code == http.StatusNotFound {
				continue // dropped meanwhile
			}
			return err
		}
		if locations.Overlap(loc, at) {
			return invalidParam("location %q overlaps table %s at %q", loc,
				strings.Join(append(append([]string{}, ref.Namespace...), other), "."), at)
		}
	}
	return nil
}

// tableLocation reads only a table's location from its LoadTable answer.
// The overlap check needs nothing else, and parsing the whole metadata
// would let one table that lakegate cannot parse (a backend that stored a
// duplicate snapshot id, which iceberg-go refuses) fail every create in
// its schema. Skipping such a table instead could pass a location inside
// it, so a table whose location cannot be read still refuses the create,
// naming the table to repair.
func (c *icebergClient) tableLocation(ctx context.Context, ns []string, tbl string) (string, error) {
	var l translate.LoadResult
	if err := c.do(ctx, http.MethodGet, c.TablesPath(ns, tbl, ""), nil, &l, nil); err != nil {
		return "", err
	}
	var m struct {
		Location string `json:"location"`
	}
	if err := json.Unmarshal(l.Metadata, &m); err != nil || m.Location == "" {
		return "", Errorf(http.StatusBadGateway, InternalServerError,
			"catalog %q: table %s has no readable location in its metadata, so a new location cannot be checked "+
				"against it", c.Catalog, strings.Join(append(slices.Clone(ns), tbl), "."))
	}
	return m.Location, nil
}

// listTables lists a namespace's table names, following page tokens.
func (c *icebergClient) listTables(ctx context.Context, ns []string) ([]string, error) {
	var names []string
	token := ""
	for range 10000 {
		suffix := ""
		if token != "" {
			suffix = "?pageToken=" + url.QueryEscape(token)
		}
		path := c.TablesPath(ns, "", suffix)
		var page struct {
			Identifiers []struct {
				Name string `json:"name"`
			} `json:"identifiers"`
			NextPageToken *string `json:"next-page-token"`
		}
		if err := c.do(ctx, http.MethodGet, path, nil, &page, nil); err != nil {
			return nil, c.schemaMissing(ctx, ns, err)
		}
		for _, id := range page.Identifiers {
			names = append(names, id.Name)
		}
		if page.NextPageToken == nil || *page.NextPageToken == "" {
			return names, nil
		}
		token = *page.NextPageToken
	}
	return nil, Errorf(http.StatusBadGateway, InternalServerError, "catalog %q: listing tables never ends (next-page-token after 10000 pages)", c.Catalog)
}
