package sharing

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Operations of the protocol, as policies see them (api_operation).
const (
	OpListShares      = "listShares"
	OpGetShare        = "getShare"
	OpListSchemas     = "listSchemas"
	OpListTables      = "listTables"
	OpListAllTables   = "listAllTables"
	OpTableVersion    = "getTableVersion"
	OpTableMetadata   = "getTableMetadata"
	OpQueryTable      = "queryTable"
	OpQueryChanges    = "queryTableChanges"
	OpGetFile         = "getFile"
	maxNameLength     = 255
	maxPathSegments   = 8
	sharesSegment     = "shares"
	schemasSegment    = "schemas"
	tablesSegment     = "tables"
	allTablesSegment  = "all-tables"
	filesSegment      = "files"
	versionSegment    = "version"
	metadataSegment   = "metadata"
	querySegment      = "query"
	changesSegment    = "changes"
	errUnknownRequest = "no Delta Sharing operation is served at %s %s"
)

// Route is one parsed request: the operation and the names it addresses
// (unescaped, as the client spelled them).
type Route struct {
	Op     string
	Share  string
	Schema string
	Table  string
	// File is the signed token of a file download (OpGetFile).
	File string
}

// ParseRoute maps a request path relative to the front door's prefix
// ("/shares/...", "/files/...") to an operation.
func ParseRoute(method, rel string) (Route, error) {
	segs, err := segments(rel)
	if err != nil {
		return Route{}, err
	}
	rt, ok := match(method, segs)
	if !ok {
		return Route{}, Errorf(http.StatusNotFound, CodeNotFound, errUnknownRequest, method, rel)
	}
	for _, n := range []string{rt.Share, rt.Schema, rt.Table} {
		if len(n) > maxNameLength {
			return Route{}, badParam("name longer than %d characters", maxNameLength)
		}
		// The rule every door applies (icerest.NameProblem): checked here
		// so the answer is Delta Sharing's 400, not the 502 of an Iceberg
		// refusal the translator does not expect.
		if p := icerest.NameProblem(n); n != "" && p != "" {
			return Route{}, badParam("name %q %s", n, p)
		}
	}
	return rt, nil
}

func segments(rel string) ([]string, error) {
	rel = strings.Trim(rel, "/")
	if rel == "" {
		return nil, nil
	}
	raw := strings.Split(rel, "/")
	if len(raw) > maxPathSegments {
		return nil, notFound(errUnknownRequest, "", rel)
	}
	out := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return nil, Errorf(http.StatusBadRequest, CodeMalformedRequest, "malformed path segment %q", s)
		}
		out[i] = u
	}
	return out, nil
}

// match is the protocol's URL table.
func match(method string, s []string) (Route, bool) {
	n := len(s)
	switch {
	case n == 2 && s[0] == filesSegment && (method == http.MethodGet || method == http.MethodHead):
		return Route{Op: OpGetFile, File: s[1]}, true
	case n == 0 || s[0] != sharesSegment:
		return Route{}, false
	case n == 1 && method == http.MethodGet:
		return Route{Op: OpListShares}, true
	case n == 2 && method == http.MethodGet:
		return Route{Op: OpGetShare, Share: s[1]}, true
	case n == 3 && method == http.MethodGet && s[2] == schemasSegment:
		return Route{Op: OpListSchemas, Share: s[1]}, true
	case n == 3 && method == http.MethodGet && s[2] == allTablesSegment:
		return Route{Op: OpListAllTables, Share: s[1]}, true
	case n == 5 && method == http.MethodGet && s[2] == schemasSegment && s[4] == tablesSegment:
		return Route{Op: OpListTables, Share: s[1], Schema: s[3]}, true
	case n == 6 && method == http.MethodHead && s[2] == schemasSegment && s[4] == tablesSegment:
		return Route{Op: OpTableVersion, Share: s[1], Schema: s[3], Table: s[5]}, true
	case n == 7 && s[2] == schemasSegment && s[4] == tablesSegment:
		return tableRoute(method, s[6], Route{Share: s[1], Schema: s[3], Table: s[5]})
	}
	return Route{}, false
}

func tableRoute(method, verb string, rt Route) (Route, bool) {
	switch {
	case verb == versionSegment && method == http.MethodGet:
		rt.Op = OpTableVersion
	case verb == metadataSegment && method == http.MethodGet:
		rt.Op = OpTableMetadata
	case verb == querySegment && method == http.MethodPost:
		rt.Op = OpQueryTable
	case verb == changesSegment && method == http.MethodGet:
		rt.Op = OpQueryChanges
	default:
		return Route{}, false
	}
	return rt, true
}
