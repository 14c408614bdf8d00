package delta

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Op is a UC Delta API operation: its operationId in uc-delta-api.yaml,
// which is also the policy input's api_operation.
type Op string

// The UC Delta API's operations.
const (
	OpGetConfig                   Op = "getConfig"
	OpCreateStagingTable          Op = "createStagingTable"
	OpCreateTable                 Op = "createTable"
	OpLoadTable                   Op = "loadTable"
	OpUpdateTable                 Op = "updateTable"
	OpDeleteTable                 Op = "deleteTable"
	OpTableExists                 Op = "tableExists"
	OpRenameTable                 Op = "renameTable"
	OpGetTableCredentials         Op = "getTableCredentials"
	OpReportMetrics               Op = "reportMetrics"
	OpGetStagingTableCredentials  Op = "getStagingTableCredentials"
	OpGetTemporaryPathCredentials Op = "getTemporaryPathCredentials"
)

// Route is a parsed Delta API request: the operation, the closest Iceberg
// operation (what the policy's operation is), and the resource it names.
type Route struct {
	Op        Op
	Iceberg   string
	Catalog   string
	Schema    string // as in the path; Namespace is its levels
	Namespace []string
	Table     string
	TableID   string // a staging table's id
}

// ParseRoute names the operation and resource of a Delta API request:
// method and the escaped path below /api/2.1/unity-catalog/delta/v1/.
func ParseRoute(method, rest string) (Route, error) {
	raw := strings.Split(rest, "/")
	seg := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return Route{}, Errorf(http.StatusBadRequest, BadRequest, "malformed path segment %q", s)
		}
		seg[i] = u
	}
	var rt Route
	switch {
	case len(seg) == 1 && seg[0] == "config":
		rt = Route{Op: OpGetConfig, Iceberg: icerest.OpGetConfig}
	case len(seg) == 1 && seg[0] == "temporary-path-credentials":
		rt = Route{Op: OpGetTemporaryPathCredentials, Iceberg: icerest.OpLoadCredentials}
	case len(seg) == 3 && seg[0] == "staging-tables" && seg[2] == "credentials":
		rt = Route{Op: OpGetStagingTableCredentials, Iceberg: icerest.OpCreateTable, TableID: seg[1]}
	case len(seg) >= 5 && seg[0] == "catalogs" && seg[2] == "schemas":
		return tableRoute(method, seg)
	default:
		return rt, Errorf(http.StatusNotFound, NotFound, "no Delta API endpoint at %s", rest)
	}
	return rt, expectMethod(method, http.MethodGet)
}

// tableOps maps (resource suffix, method) to UC and Iceberg operations.
var tableOps = map[string]struct {
	op      Op
	iceberg string
}{
	"staging-tables POST": {OpCreateStagingTable, icerest.OpCreateTable},
	"tables POST":         {OpCreateTable, icerest.OpCreateTable},
	"table GET":           {OpLoadTable, icerest.OpLoadTable},
	"table POST":          {OpUpdateTable, icerest.OpUpdateTable},
	"table DELETE":        {OpDeleteTable, icerest.OpDropTable},
	"table HEAD":          {OpTableExists, icerest.OpTableExists},
	"rename POST":         {OpRenameTable, icerest.OpRenameTable},
	"credentials GET":     {OpGetTableCredentials, icerest.OpLoadCredentials},
	"metrics POST":        {OpReportMetrics, icerest.OpReportMetrics},
}

func tableRoute(method string, seg []string) (Route, error) {
	rt := Route{Catalog: seg[1], Schema: seg[3]}
	var kind string
	switch {
	case len(seg) == 5 && (seg[4] == "tables" || seg[4] == "staging-tables"):
		kind = seg[4]
	case len(seg) == 6 && seg[4] == "tables":
		kind, rt.Table = "table", seg[5]
	case len(seg) == 7 && seg[4] == "tables" && (seg[6] == "rename" || seg[6] == "credentials" || seg[6] == "metrics"):
		kind, rt.Table = seg[6], seg[5]
	default:
		return rt, Errorf(http.StatusNotFound, NotFound, "no Delta API endpoint at %s", strings.Join(seg, "/"))
	}
	ops, ok := tableOps[kind+" "+method]
	if !ok {
		return rt, notAllowed(method, allowed(kind)...)
	}
	rt.Op, rt.Iceberg = ops.op, ops.iceberg
	// A schema or table name no catalog can hold names nothing: 404, the
	// answer every table operation lists (tableExists lists no 400).
	ns, err := ParseSchema(rt.Schema)
	if err != nil {
		return rt, Errorf(http.StatusNotFound, NoSuchSchema, "no schema %q: %s", rt.Schema, AsError(err).Message)
	}
	rt.Namespace = ns
	// The Iceberg door's name rule (icerest.NameProblem), so no name it
	// refuses reaches a backend through the Delta door.
	for _, n := range ns {
		if p := icerest.NameProblem(n); p != "" {
			return rt, Errorf(http.StatusNotFound, NoSuchSchema, "no schema %q: the level %q %s", rt.Schema, n, p)
		}
	}
	if p := icerest.NameProblem(rt.Table); p != "" {
		return rt, Errorf(http.StatusNotFound, NoSuchTable, "no table %q: the name %s", rt.Table, p)
	}
	return rt, nil
}

func expectMethod(method, want string) error {
	if method != want {
		return notAllowed(method, want)
	}
	return nil
}

// notAllowed is the 405 for method, with the Allow header HTTP requires.
func notAllowed(method string, allow ...string) *Error {
	e := Errorf(http.StatusMethodNotAllowed, BadRequest, "%s is not allowed here; use %s", method, strings.Join(allow, " or "))
	e.Allow = allow
	return e
}

// allowed lists the methods tableOps has for a resource kind, sorted.
func allowed(kind string) []string {
	var out []string
	for k := range tableOps {
		if m, ok := strings.CutPrefix(k, kind+" "); ok {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}
