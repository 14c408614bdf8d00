// Package unity serves the part of Unity Catalog's own REST API
// (/api/2.1/unity-catalog/..., UC's api/all.yaml) that Delta engines call
// next to the Delta REST API: catalogs, schemas and tables. The UC Spark
// connector (UCSingleCatalog) lists and loads tables and manages schemas
// here, and Unity Catalog's SDK tests set up their catalogs and schemas
// here. A UC catalog is a lakegate catalog, a schema is an Iceberg
// namespace of one level, a table is a table with a Delta side (see
// translate/delta); everything runs on the catalog's Iceberg pipeline.
package unity

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Op is a UC API operation: its operationId in UC's api/all.yaml, which is
// also the policy input's api_operation (api "unity").
type Op string

// The operations lakegate serves.
const (
	OpListCatalogs  Op = "listCatalogs"
	OpGetCatalog    Op = "getCatalog"
	OpCreateCatalog Op = "createCatalog"
	OpListSchemas   Op = "listSchemas"
	OpGetSchema     Op = "getSchema"
	OpCreateSchema  Op = "createSchema"
	OpDeleteSchema  Op = "deleteSchema"
	OpListTables    Op = "listTables"
	OpCreateTable   Op = "createTable"
	OpGetTable      Op = "getTable"
	OpDeleteTable   Op = "deleteTable"
	OpUpdateSchema  Op = "updateSchema"

	OpCreateStagingTable Op = "createStagingTable"

	OpGenerateTemporaryTableCredentials Op = "generateTemporaryTableCredentials"
	OpGenerateTemporaryPathCredentials  Op = "generateTemporaryPathCredentials"
)

// Route is a parsed UC API request: the operation, the Iceberg operation
// the policy decides on, and the names it addresses (from the path, or
// from the query for listings; createSchema's come from its body).
type Route struct {
	Op      Op
	Iceberg string
	Catalog string
	Schema  string
	Table   string
}

// ParseRoute names the operation of a request: its method, its escaped
// path below /api/2.1/unity-catalog/ and its query.
func ParseRoute(method, rest string, q url.Values) (Route, error) {
	seg := strings.Split(rest, "/")
	for i, s := range seg {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return Route{}, Errorf(http.StatusBadRequest, InvalidArgument, "malformed path segment %q", s)
		}
		seg[i] = u
	}
	key := seg[0]
	if len(seg) == 2 {
		key += "/{name}"
	} else if len(seg) > 2 {
		key = ""
	}
	op, ok := ops[key+" "+method]
	if !ok {
		if _, known := resources[key]; known {
			e := Errorf(http.StatusMethodNotAllowed, Unimplemented, "%s /%s is not served by lakegate", method, key)
			e.Allow = allowed(key)
			return Route{}, e
		}
		return Route{}, Errorf(http.StatusNotFound, NotFound, "no Unity Catalog API endpoint at /%s", rest)
	}
	rt := Route{Op: op.op, Iceberg: op.iceberg}
	var err error
	switch key {
	case "catalogs/{name}":
		rt.Catalog = seg[1]
	case "schemas":
		if method == http.MethodGet { // createSchema names its catalog in the body
			rt.Catalog, err = required(q, "catalog_name")
		}
	case "schemas/{name}":
		rt.Catalog, rt.Schema, err = splitSchema(seg[1])
	case "tables":
		if method != http.MethodGet { // createTable names them in the body
			break
		}
		if rt.Catalog, err = required(q, "catalog_name"); err == nil {
			rt.Schema, err = required(q, "schema_name")
		}
	case "tables/{name}":
		rt.Catalog, rt.Schema, rt.Table, err = splitTable(seg[1])
	}
	if err != nil {
		return Route{}, err
	}
	return rt, checkNames(rt)
}

type opPair struct {
	op      Op
	iceberg string
}

var ops = map[string]opPair{
	"catalogs GET":          {OpListCatalogs, icerest.OpGetConfig},
	"catalogs POST":         {OpCreateCatalog, icerest.OpGetConfig},
	"catalogs/{name} GET":   {OpGetCatalog, icerest.OpGetConfig},
	"schemas GET":           {OpListSchemas, icerest.OpListNamespaces},
	"schemas POST":          {OpCreateSchema, icerest.OpCreateNamespace},
	"schemas/{name} GET":    {OpGetSchema, icerest.OpLoadNamespaceMetadata},
	"schemas/{name} DELETE": {OpDeleteSchema, icerest.OpDropNamespace},
	"schemas/{name} PATCH":  {OpUpdateSchema, icerest.OpUpdateProperties},
	"staging-tables POST":   {OpCreateStagingTable, icerest.OpCreateTable},
	// The credentials operations name their table or path in the body;
	// the front door decides on what it names (delta.Request.Checks).
	"temporary-table-credentials POST": {OpGenerateTemporaryTableCredentials, icerest.OpLoadCredentials},
	"temporary-path-credentials POST":  {OpGenerateTemporaryPathCredentials, icerest.OpLoadCredentials},
	"tables GET":                       {OpListTables, icerest.OpListTables},
	"tables POST":                      {OpCreateTable, icerest.OpCreateTable},
	"tables/{name} GET":                {OpGetTable, icerest.OpLoadTable},
	"tables/{name} DELETE":             {OpDeleteTable, icerest.OpDropTable},
}

// resources are the paths served with some method: another method there
// is 405, not 404.
var resources = map[string]bool{"catalogs": true, "catalogs/{name}": true, "schemas": true,
	"schemas/{name}": true, "tables": true, "tables/{name}": true, "staging-tables": true,
	"temporary-table-credentials": true, "temporary-path-credentials": true}

// allowed lists the methods served at a resource, for a 405's Allow.
func allowed(key string) []string {
	var methods []string
	for k := range ops {
		if res, m, _ := strings.Cut(k, " "); res == key {
			methods = append(methods, m)
		}
	}
	slices.Sort(methods)
	return methods
}

func required(q url.Values, name string) (string, error) {
	v := q.Get(name)
	if v == "" {
		return "", Errorf(http.StatusBadRequest, InvalidArgument, "%s is required", name)
	}
	return v, nil
}

// splitSchema reads a schema's full name, catalog.schema. UC names hold no
// dots, and UC schemas have one level.
func splitSchema(full string) (catalog, schema string, err error) {
	parts := strings.Split(full, ".")
	if len(parts) != 2 || slices.Contains(parts, "") {
		return "", "", Errorf(http.StatusBadRequest, InvalidArgument,
			"invalid schema full name %q: want catalog.schema", full)
	}
	return parts[0], parts[1], nil
}

// splitTable reads a table's full name, catalog.schema.table. Every part
// is a name: an empty one (lake..t) would address the catalog or the
// namespace instead, for the policy as for the backend.
func splitTable(full string) (catalog, schema, table string, err error) {
	parts := strings.Split(full, ".")
	if len(parts) != 3 || slices.Contains(parts, "") {
		return "", "", "", Errorf(http.StatusBadRequest, InvalidArgument,
			"invalid table full name %q: want catalog.schema.table", full)
	}
	return parts[0], parts[1], parts[2], nil
}

// checkNames applies the Iceberg door's name rule, so no name it refuses
// reaches a backend through this door.
func checkNames(rt Route) error {
	for _, n := range []string{rt.Catalog, rt.Schema, rt.Table} {
		if n == "" {
			continue
		}
		if p := icerest.NameProblem(n); p != "" {
			return Errorf(http.StatusBadRequest, InvalidArgument, "invalid name %q: %s", n, p)
		}
	}
	return nil
}
