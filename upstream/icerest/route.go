package icerest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Iceberg REST operation ids (the spec's operationId values). They are the
// operation vocabulary of the whole gateway: routing, policy, caching and
// replay all speak it.
const (
	OpGetConfig             = "getConfig"
	OpGetToken              = "getToken"
	OpListNamespaces        = "listNamespaces"
	OpCreateNamespace       = "createNamespace"
	OpLoadNamespaceMetadata = "loadNamespaceMetadata"
	OpNamespaceExists       = "namespaceExists"
	OpDropNamespace         = "dropNamespace"
	OpUpdateProperties      = "updateProperties"
	OpListTables            = "listTables"
	OpCreateTable           = "createTable"
	OpRegisterTable         = "registerTable"
	OpLoadTable             = "loadTable"
	OpUpdateTable           = "updateTable"
	OpDropTable             = "dropTable"
	OpTableExists           = "tableExists"
	OpLoadCredentials       = "loadCredentials"
	OpReportMetrics         = "reportMetrics"
	OpPlanTableScan         = "planTableScan"
	OpFetchPlanningResult   = "fetchPlanningResult"
	OpCancelPlanning        = "cancelPlanning"
	OpFetchScanTasks        = "fetchScanTasks"
	OpRenameTable           = "renameTable"
	OpCommitTransaction     = "commitTransaction"
	OpListViews             = "listViews"
	OpCreateView            = "createView"
	OpLoadView              = "loadView"
	OpReplaceView           = "replaceView"
	OpDropView              = "dropView"
	OpViewExists            = "viewExists"
	OpRenameView            = "renameView"
	OpRegisterView          = "registerView"
	OpUnregisterTable       = "unregisterTable"
	OpListFunctions         = "listFunctions"
	OpLoadFunction          = "loadFunction"
	OpSignRequest           = "signRequest"
)

// Route is a parsed Iceberg REST request path: the operation and the
// resource it addresses.
type Route struct {
	Operation string
	// Prefix is the decoded {prefix} segment; HasPrefix tells the
	// prefix-less form (/v1/namespaces/...) from the prefixed one.
	Prefix    string
	HasPrefix bool
	Namespace []string
	Table     string // table name for table operations
	View      string // view name for view operations
	Function  string // function name for loadFunction
	PlanID    string
}

// unprefixed are the first path segments after /v1 that begin the
// prefix-less form. No catalog prefix may take one of these names.
var unprefixed = map[string]bool{
	"config": true, "oauth": true, "namespaces": true,
	"tables": true, "views": true, "transactions": true,
}

// IsReservedPrefix reports whether name cannot be used as a {prefix}
// because the prefix-less form claims it.
func IsReservedPrefix(name string) bool { return unprefixed[name] }

// UnitSeparator is the spec's default namespace separator (0x1F).
const UnitSeparator = "\x1f"

// ParseRoute parses the escaped request path (r.URL.EscapedPath()) of an
// Iceberg REST request. sep is the decoded namespace separator the server
// advertises ("" or 0x1F for the default); 0x1F is always accepted as
// well, as the spec requires.
func ParseRoute(method, escapedPath, sep string) (Route, error) {
	rest, ok := strings.CutPrefix(escapedPath, "/v1/")
	if !ok {
		return Route{}, Errorf(http.StatusNotFound, NotFound, "no such endpoint: %s", escapedPath)
	}
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	var rt Route
	if !unprefixed[segs[0]] {
		p, err := url.PathUnescape(segs[0])
		if err != nil || p == "" {
			return Route{}, Errorf(http.StatusBadRequest, BadRequest, "malformed prefix %q", segs[0])
		}
		rt.Prefix, rt.HasPrefix, segs = p, true, segs[1:]
	}
	if err := rt.parse(method, segs, sep); err != nil {
		return Route{}, err
	}
	return rt, nil
}

func (rt *Route) parse(method string, segs []string, sep string) error {
	if len(segs) == 0 {
		return noEndpoint(segs)
	}
	switch segs[0] {
	case "config":
		if rt.HasPrefix || len(segs) != 1 {
			return noEndpoint(segs)
		}
		return rt.op(method, segs, map[string]string{http.MethodGet: OpGetConfig})
	case "oauth":
		if rt.HasPrefix || len(segs) != 2 || segs[1] != "tokens" {
			return noEndpoint(segs)
		}
		return rt.op(method, segs, map[string]string{http.MethodPost: OpGetToken})
	case "tables", "views", "transactions":
		return rt.parseTopLevel(method, segs)
	case "namespaces":
		return rt.parseNamespaces(method, segs, sep)
	}
	return noEndpoint(segs)
}

func (rt *Route) parseTopLevel(method string, segs []string) error {
	if len(segs) != 2 {
		return noEndpoint(segs)
	}
	switch segs[0] + "/" + segs[1] {
	case "tables/rename":
		return rt.op(method, segs, map[string]string{http.MethodPost: OpRenameTable})
	case "views/rename":
		return rt.op(method, segs, map[string]string{http.MethodPost: OpRenameView})
	case "transactions/commit":
		return rt.op(method, segs, map[string]string{http.MethodPost: OpCommitTransaction})
	}
	return noEndpoint(segs)
}

func (rt *Route) parseNamespaces(method string, segs []string, sep string) error {
	if len(segs) == 1 {
		return rt.op(method, segs, map[string]string{
			http.MethodGet: OpListNamespaces, http.MethodPost: OpCreateNamespace})
	}
	ns, err := DecodeNamespaceSegment(segs[1], sep)
	if err != nil {
		return err
	}
	rt.Namespace = ns
	rest := segs[2:]
	if len(rest) == 0 {
		return rt.op(method, segs, map[string]string{
			http.MethodGet: OpLoadNamespaceMetadata, http.MethodHead: OpNamespaceExists,
			http.MethodDelete: OpDropNamespace})
	}
	switch rest[0] {
	case "properties":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpUpdateProperties})
	case "register":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpRegisterTable})
	case "register-view":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpRegisterView})
	case "tables":
		return rt.parseTables(method, segs, rest)
	case "views":
		return rt.parseViews(method, segs, rest)
	case "functions":
		return rt.parseFunctions(method, segs, rest)
	}
	return noEndpoint(segs)
}

func (rt *Route) parseFunctions(method string, segs, rest []string) error {
	if len(rest) == 1 {
		return rt.op(method, segs, map[string]string{http.MethodGet: OpListFunctions})
	}
	if len(rest) != 2 {
		return noEndpoint(segs)
	}
	name, err := decodeName(rest[1], "function")
	if err != nil {
		return err
	}
	rt.Function = name
	return rt.op(method, segs, map[string]string{http.MethodGet: OpLoadFunction})
}

// leaf accepts rest only when it is exactly one segment long.
func (rt *Route) leaf(method string, segs, rest []string, ops map[string]string) error {
	if len(rest) != 1 {
		return noEndpoint(segs)
	}
	return rt.op(method, segs, ops)
}

func (rt *Route) parseTables(method string, segs, rest []string) error {
	if len(rest) == 1 {
		return rt.op(method, segs, map[string]string{http.MethodGet: OpListTables, http.MethodPost: OpCreateTable})
	}
	name, err := decodeName(rest[1], "table")
	if err != nil {
		return err
	}
	rt.Table = name
	rest = rest[2:]
	if len(rest) == 0 {
		return rt.op(method, segs, map[string]string{
			http.MethodGet: OpLoadTable, http.MethodPost: OpUpdateTable,
			http.MethodDelete: OpDropTable, http.MethodHead: OpTableExists})
	}
	switch rest[0] {
	case "credentials":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodGet: OpLoadCredentials})
	case "metrics":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpReportMetrics})
	case "unregister":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpUnregisterTable})
	case "sign":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpSignRequest})
	case "tasks":
		return rt.leaf(method, segs, rest, map[string]string{http.MethodPost: OpFetchScanTasks})
	case "plan":
		if len(rest) == 1 {
			return rt.op(method, segs, map[string]string{http.MethodPost: OpPlanTableScan})
		}
		if len(rest) != 2 {
			return noEndpoint(segs)
		}
		id, err := decodeName(rest[1], "plan id")
		if err != nil {
			return err
		}
		rt.PlanID = id
		return rt.op(method, segs, map[string]string{
			http.MethodGet: OpFetchPlanningResult, http.MethodDelete: OpCancelPlanning})
	}
	return noEndpoint(segs)
}

func (rt *Route) parseViews(method string, segs, rest []string) error {
	if len(rest) == 1 {
		return rt.op(method, segs, map[string]string{http.MethodGet: OpListViews, http.MethodPost: OpCreateView})
	}
	if len(rest) != 2 {
		return noEndpoint(segs)
	}
	name, err := decodeName(rest[1], "view")
	if err != nil {
		return err
	}
	rt.View = name
	return rt.op(method, segs, map[string]string{
		http.MethodGet: OpLoadView, http.MethodPost: OpReplaceView,
		http.MethodDelete: OpDropView, http.MethodHead: OpViewExists})
}

// op picks the operation for method, or answers 405 naming what is allowed.
func (rt *Route) op(method string, segs []string, ops map[string]string) error {
	if op, ok := ops[method]; ok {
		rt.Operation = op
		return nil
	}
	allowed := make([]string, 0, len(ops))
	for m := range ops {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed) // map order is random; keep the message stable
	// Iceberg clients map 405 to UnsupportedOperationException by status;
	// the type says the same.
	e := Errorf(http.StatusMethodNotAllowed, UnsupportedOperation, "method %s not allowed on /v1/%s (allowed: %s)",
		method, strings.Join(segs, "/"), strings.Join(allowed, ", "))
	e.Allow = allowed
	return e
}

func noEndpoint(segs []string) error {
	return Errorf(http.StatusNotFound, NotFound, "no such endpoint: /v1/%s", strings.Join(segs, "/"))
}

func decodeName(seg, what string) (string, error) {
	s, err := url.PathUnescape(seg)
	if err != nil || s == "" {
		return "", Errorf(http.StatusBadRequest, BadRequest, "malformed %s name %q", what, seg)
	}
	return s, nil
}

// DecodeNamespaceSegment decodes a {namespace} path segment (still
// escaped): levels are split on 0x1F and on sep.
func DecodeNamespaceSegment(seg, sep string) ([]string, error) {
	s, err := url.PathUnescape(seg)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, BadRequest, "malformed namespace %q: %v", seg, err)
	}
	return DecodeNamespace(s, sep)
}

// DecodeNamespace splits an unescaped namespace string (path segment or the
// `parent` query parameter) into its levels. Empty levels are rejected.
func DecodeNamespace(s, sep string) ([]string, error) {
	if s == "" {
		return nil, Errorf(http.StatusBadRequest, BadRequest, "empty namespace")
	}
	parts := strings.Split(s, UnitSeparator)
	if sep != "" && sep != UnitSeparator {
		var split []string
		for _, p := range parts {
			split = append(split, strings.Split(p, sep)...)
		}
		parts = split
	}
	for _, p := range parts {
		if p == "" {
			return nil, Errorf(http.StatusBadRequest, BadRequest, "malformed namespace %q: empty level", s)
		}
	}
	return parts, nil
}

// EncodeNamespace encodes namespace levels as one escaped path segment,
// joined by the (escaped) separator sepEscaped, e.g. "%1F".
func EncodeNamespace(ns []string, sepEscaped string) string {
	enc := make([]string, len(ns))
	for i, l := range ns {
		enc[i] = url.PathEscape(l)
	}
	return strings.Join(enc, sepEscaped)
}

// Endpoints maps each operation served under {prefix} to its endpoint
// string as /v1/config advertises it ("METHOD /v1/{prefix}/...").
var Endpoints = map[string]string{
	OpListNamespaces:        "GET /v1/{prefix}/namespaces",
	OpCreateNamespace:       "POST /v1/{prefix}/namespaces",
	OpLoadNamespaceMetadata: "GET /v1/{prefix}/namespaces/{namespace}",
	OpNamespaceExists:       "HEAD /v1/{prefix}/namespaces/{namespace}",
	OpDropNamespace:         "DELETE /v1/{prefix}/namespaces/{namespace}",
	OpUpdateProperties:      "POST /v1/{prefix}/namespaces/{namespace}/properties",
	OpListTables:            "GET /v1/{prefix}/namespaces/{namespace}/tables",
	OpCreateTable:           "POST /v1/{prefix}/namespaces/{namespace}/tables",
	OpRegisterTable:         "POST /v1/{prefix}/namespaces/{namespace}/register",
	OpLoadTable:             "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	OpUpdateTable:           "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	OpDropTable:             "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	OpTableExists:           "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	OpLoadCredentials:       "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
	OpReportMetrics:         "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
	OpPlanTableScan:         "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
	OpFetchPlanningResult:   "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
	OpCancelPlanning:        "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
	OpFetchScanTasks:        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
	OpRenameTable:           "POST /v1/{prefix}/tables/rename",
	OpCommitTransaction:     "POST /v1/{prefix}/transactions/commit",
	OpUnregisterTable:       "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
	OpSignRequest:           "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign",
	OpListFunctions:         "GET /v1/{prefix}/namespaces/{namespace}/functions",
	OpLoadFunction:          "GET /v1/{prefix}/namespaces/{namespace}/functions/{function}",
	OpListViews:             "GET /v1/{prefix}/namespaces/{namespace}/views",
	OpCreateView:            "POST /v1/{prefix}/namespaces/{namespace}/views",
	OpLoadView:              "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
	OpReplaceView:           "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
	OpDropView:              "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
	OpViewExists:            "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
	OpRenameView:            "POST /v1/{prefix}/views/rename",
	OpRegisterView:          "POST /v1/{prefix}/namespaces/{namespace}/register-view",
}
