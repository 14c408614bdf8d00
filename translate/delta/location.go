package delta

import (
	"context"
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/upstream/icerest"
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
		// Only the location is read: one table lakegate cannot parse must
		// not fail every create of its schema. Skipping it could pass a
		// location inside it, so one without a location still refuses.
		p, err := c.peek(ctx, ref.Namespace, other)
		if err != nil {
			if AsError(err).Code == http.StatusNotFound {
				continue // dropped meanwhile
			}
			return err
		}
		if p.Location == "" {
			return Errorf(http.StatusBadGateway, InternalServerError,
				"catalog %q: table %s has no readable location in its metadata, so a new location cannot be checked "+
					"against it", c.Catalog, qualified(ref.Namespace, other))
		}
		if locations.Overlap(loc, p.Location) {
			return invalidParam("location %q overlaps table %s at %q", loc, qualified(ref.Namespace, other), p.Location)
		}
	}
	return nil
}

// listTables lists a namespace's table names, following page tokens.
func (c *icebergClient) listTables(ctx context.Context, ns []string) ([]string, error) {
	var names []string
	token := ""
	for range 10000 {
		var query url.Values
		if token != "" {
			query = url.Values{"pageToken": {token}}
		}
		var page struct {
			Identifiers []struct {
				Name string `json:"name"`
			} `json:"identifiers"`
			NextPageToken *string `json:"next-page-token"`
		}
		if err := c.do(ctx, tableOp(icerest.OpListTables, ns, ""), nil, &page, &request{query: query}); err != nil {
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
