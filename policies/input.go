package policies

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"go.uber.org/zap/zapcore"
)

// Principal is the authenticated caller.
type Principal struct {
	ID     string         `json:"id"`
	Groups []string       `json:"groups"`
	Claims map[string]any `json:"claims,omitempty"`
}

// Resource is what the request addresses.
type Resource struct {
	Catalog   string   `json:"catalog,omitempty"`
	Backend   string   `json:"backend,omitempty"` // "embedded" or "remote"
	Namespace []string `json:"namespace,omitempty"`
	Table     string   `json:"table,omitempty"`
	View      string   `json:"view,omitempty"`
	// Location is a storage path the operation is about, where it names
	// one rather than a table (the Delta API's temporary path credentials).
	Location string `json:"location,omitempty"`
	// Share, ShareSchema and ShareTable name a Delta Sharing object as
	// recipients see it (api "sharing"); the fields above name the
	// Iceberg table behind it once resolved.
	Share       string `json:"share,omitempty"`
	ShareSchema string `json:"share_schema,omitempty"`
	ShareTable  string `json:"share_table,omitempty"`
}

// Request carries the HTTP facts a policy may care about.
type Request struct {
	Method            string   `json:"method"`
	Path              string   `json:"path"`
	AccessDelegation  []string `json:"access_delegation"`
	HasIdempotencyKey bool     `json:"has_idempotency_key"`
}

// Context is the environment of the request. Time is RFC3339.
type Context struct {
	Time     string `json:"time"`
	ClientIP string `json:"client_ip"`
}

// Item is one entry of a listing page being filtered.
type Item struct {
	Namespace []string `json:"namespace"`
	Table     string   `json:"table,omitempty"`
	View      string   `json:"view,omitempty"`
}

// Input is the document a policy sees as `input`.
type Input struct {
	Principal    Principal `json:"principal"`
	Operation    string    `json:"operation"`     // Iceberg operationId (icerest.Op*)
	API          string    `json:"api"`           // "iceberg" (later "delta", "sharing")
	APIOperation string    `json:"api_operation"` // the API's own operation name
	Resource     Resource  `json:"resource"`
	Request      Request   `json:"request"`
	Context      Context   `json:"context"`
	Items        []Item    `json:"items,omitempty"` // only for list filtering
}

// value converts the input straight to an AST value. rego.EvalInput would
// round-trip the struct through encoding/json on every evaluation; building
// the value directly is cheaper. The document matches the JSON encoding
// (tags and omitempty as declared above, pinned by a test) except that nil
// string slices appear as [] instead of null.
func (in *Input) value() (ast.Value, error) {
	principal, err := in.Principal.term()
	if err != nil {
		return nil, err
	}
	kv := [][2]*ast.Term{
		item("principal", principal),
		item("operation", ast.StringTerm(in.Operation)),
		item("api", ast.StringTerm(in.API)),
		item("api_operation", ast.StringTerm(in.APIOperation)),
		item("resource", in.Resource.term()),
		item("request", in.Request.term()),
		item("context", ast.ObjectTerm(
			item("time", ast.StringTerm(in.Context.Time)),
			item("client_ip", ast.StringTerm(in.Context.ClientIP)))),
	}
	if len(in.Items) > 0 {
		items := make([]*ast.Term, len(in.Items))
		for i := range in.Items {
			items[i] = in.Items[i].term()
		}
		kv = append(kv, item("items", ast.ArrayTerm(items...)))
	}
	return ast.NewObject(kv...), nil
}

func (p *Principal) term() (*ast.Term, error) {
	kv := [][2]*ast.Term{
		item("id", ast.StringTerm(p.ID)),
		item("groups", stringArray(p.Groups)),
	}
	if len(p.Claims) > 0 {
		// Claims are arbitrary JSON from a token; InterfaceToValue handles
		// the map[string]any/[]any/float64 shapes a JSON decoder produces.
		claims, err := ast.InterfaceToValue(p.Claims)
		if err != nil {
			return nil, err
		}
		kv = append(kv, item("claims", ast.NewTerm(claims)))
	}
	return ast.ObjectTerm(kv...), nil
}

func (r *Resource) term() *ast.Term {
	kv := make([][2]*ast.Term, 0, 9)
	kv = optString(kv, "catalog", r.Catalog)
	kv = optString(kv, "backend", r.Backend)
	if len(r.Namespace) > 0 {
		kv = append(kv, item("namespace", stringArray(r.Namespace)))
	}
	kv = optString(kv, "table", r.Table)
	kv = optString(kv, "view", r.View)
	kv = optString(kv, "location", r.Location)
	kv = optString(kv, "share", r.Share)
	kv = optString(kv, "share_schema", r.ShareSchema)
	kv = optString(kv, "share_table", r.ShareTable)
	return ast.ObjectTerm(kv...)
}

func (r *Request) term() *ast.Term {
	return ast.ObjectTerm(
		item("method", ast.StringTerm(r.Method)),
		item("path", ast.StringTerm(r.Path)),
		item("access_delegation", stringArray(r.AccessDelegation)),
		item("has_idempotency_key", ast.InternedTerm(r.HasIdempotencyKey)),
	)
}

func (it *Item) term() *ast.Term {
	kv := make([][2]*ast.Term, 0, 3)
	kv = append(kv, item("namespace", stringArray(it.Namespace)))
	kv = optString(kv, "table", it.Table)
	kv = optString(kv, "view", it.View)
	return ast.ObjectTerm(kv...)
}

func item(k string, v *ast.Term) [2]*ast.Term { return ast.Item(ast.InternedTerm(k), v) }

// optString appends k only when v is non-empty, like `json:",omitempty"`.
func optString(kv [][2]*ast.Term, k, v string) [][2]*ast.Term {
	if v == "" {
		return kv
	}
	return append(kv, item(k, ast.StringTerm(v)))
}

// stringArray renders a nil slice as [] rather than null (unlike
// encoding/json): policies can then iterate and count groups, namespaces
// and delegation modes without guarding against null.
func stringArray(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(ts...)
}

// MarshalLogObject lets the engine log a resource as a structured field
// without reflection.
func (r Resource) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	addString(enc, "catalog", r.Catalog)
	addString(enc, "backend", r.Backend)
	if len(r.Namespace) > 0 {
		_ = enc.AddArray("namespace", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
			for _, n := range r.Namespace {
				a.AppendString(n)
			}
			return nil
		}))
	}
	addString(enc, "table", r.Table)
	addString(enc, "view", r.View)
	addString(enc, "location", r.Location)
	addString(enc, "share", r.Share)
	addString(enc, "share_schema", r.ShareSchema)
	addString(enc, "share_table", r.ShareTable)
	return nil
}

func addString(enc zapcore.ObjectEncoder, k, v string) {
	if v != "" {
		enc.AddString(k, v)
	}
}
