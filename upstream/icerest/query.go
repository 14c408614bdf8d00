package icerest

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CheckQuery checks the query parameters the spec defines for op
// (pageSize a positive int32, purgeRequested true or false, snapshots all
// or refs, ...), read from the spec like the body schemas, before any
// backend sees them: a backend may read pageSize=abc as "no limit" or
// purgeRequested=maybe as false. Parameters the spec does not define pass
// unchanged (a backend may take its own; caches ignore them). A query
// string that does not parse is a 400 too: r.URL.Query() would drop the
// malformed pair, so the backend would see another request than the
// gateway vetted.
func CheckQuery(op, rawQuery string) error {
	if rawQuery == "" {
		return nil
	}
	_, err := parseQuery(op, rawQuery)
	return err
}

// parseQuery is CheckQuery that returns the parsed query, for the
// Request every stage reads (ParseRequest).
func parseQuery(op, rawQuery string) (url.Values, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, BadRequest, "malformed query string: %v", err)
	}
	params := queryParams(op)
	for name, values := range q {
		p := params[name]
		if p == nil {
			continue
		}
		for _, v := range values {
			if v == "" {
				continue // as absent, as the embedded catalog reads it (pageToken= is the spec's "first page")
			}
			if err := p.checkParam(v); err != nil {
				return nil, Errorf(http.StatusBadRequest, BadRequest, "malformed %s request: query parameter %s=%q: %v", op, name, v, err)
			}
		}
	}
	return q, nil
}

// queryParams are op's spec parameters, and the vendor ones lakegate
// knows (vendorQuery).
func queryParams(op string) map[string]*node {
	var params map[string]*node
	if s := operationSchemas[op]; s != nil {
		params = s.Query
	}
	if v := vendorQuery[op]; v != nil {
		merged := maps.Clone(params)
		if merged == nil {
			merged = map[string]*node{}
		}
		maps.Copy(merged, v)
		params = merged
	}
	return params
}

// vendorQuery are parameters beyond the spec that lakegate's own catalog
// serves (Lakekeeper's listing flags): vetted like the spec's so every
// backend reads the same value.
var vendorQuery = func() map[string]map[string]*node {
	flag := &node{Types: []string{"boolean"}}
	listing := map[string]*node{"returnUuids": flag, "returnProtectionStatus": flag}
	return map[string]map[string]*node{OpListNamespaces: listing, OpListTables: listing, OpListViews: listing}
}()

// checkParam checks one query value against a scalar schema. A boolean is
// true or false in any case (Java's Boolean.parseBoolean reads anything
// else as false, silently: purgeRequested=yes would not purge).
func (n *node) checkParam(v string) error {
	for n.target != nil {
		n = n.target
	}
	switch {
	case len(n.Types) == 0 || slices.Contains(n.Types, "string"):
		return n.checkType(v)
	case slices.Contains(n.Types, "boolean"):
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return errors.New("must be true or false")
		}
		return nil
	case slices.Contains(n.Types, "integer"):
		return n.checkNumber(json.Number(v))
	}
	return nil
}
