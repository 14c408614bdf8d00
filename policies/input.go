package policies

import (
	"encoding/binary"
	"encoding/json"

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
	Backend   string   `json:"backend,omitempty"` // "embedded", "remote" or "unified"
	Namespace []string `json:"namespace,omitempty"`
	Table     string   `json:"table,omitempty"`
	View      string   `json:"view,omitempty"`
	Function  string   `json:"function,omitempty"` // loadFunction's
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
	// StorageAccess is what a signRequest would do to the table's files,
	// "read" or "write"; absent for other operations.
	StorageAccess string `json:"storage_access,omitempty"`
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
//
// Object keys are shared terms built once (AST terms are immutable once
// built), and the document's own terms come from one slab, so an input
// costs a few dozen allocations rather than a hundred.
func (in *Input) value() (ast.Value, error) {
	nt, ne := in.termCount()
	b := termBuilder{terms: make([]ast.Term, 0, nt), elems: make([]*ast.Term, 0, ne)}
	principal, err := b.principal(&in.Principal)
	if err != nil {
		return nil, err
	}
	kv := make([][2]*ast.Term, 0, 8)
	kv = append(kv,
		[2]*ast.Term{keyPrincipal, principal},
		[2]*ast.Term{keyOperation, b.str(in.Operation)},
		[2]*ast.Term{keyAPI, b.str(in.API)},
		[2]*ast.Term{keyAPIOperation, b.str(in.APIOperation)},
		[2]*ast.Term{keyResource, b.resource(&in.Resource)},
		[2]*ast.Term{keyRequest, b.request(&in.Request)},
		[2]*ast.Term{keyContext, b.object(
			[2]*ast.Term{keyTime, b.str(in.Context.Time)},
			[2]*ast.Term{keyClientIP, b.str(in.Context.ClientIP)})},
	)
	if len(in.Items) > 0 {
		items := make([]*ast.Term, len(in.Items))
		for i := range in.Items {
			items[i] = b.item(&in.Items[i])
		}
		kv = append(kv, [2]*ast.Term{keyItems, b.array(items)})
	}
	return ast.NewObject(kv...), nil
}

// Keys of the input document, shared by every input.
var (
	keyPrincipal         = ast.StringTerm("principal")
	keyOperation         = ast.StringTerm("operation")
	keyAPI               = ast.StringTerm("api")
	keyAPIOperation      = ast.StringTerm("api_operation")
	keyResource          = ast.StringTerm("resource")
	keyRequest           = ast.StringTerm("request")
	keyContext           = ast.StringTerm("context")
	keyTime              = ast.StringTerm("time")
	keyClientIP          = ast.StringTerm("client_ip")
	keyItems             = ast.StringTerm("items")
	keyID                = ast.StringTerm("id")
	keyGroups            = ast.StringTerm("groups")
	keyClaims            = ast.StringTerm("claims")
	keyCatalog           = ast.StringTerm("catalog")
	keyBackend           = ast.StringTerm("backend")
	keyNamespace         = ast.StringTerm("namespace")
	keyTable             = ast.StringTerm("table")
	keyView              = ast.StringTerm("view")
	keyFunction          = ast.StringTerm("function")
	keyLocation          = ast.StringTerm("location")
	keyShare             = ast.StringTerm("share")
	keyShareSchema       = ast.StringTerm("share_schema")
	keyShareTable        = ast.StringTerm("share_table")
	keyMethod            = ast.StringTerm("method")
	keyPath              = ast.StringTerm("path")
	keyAccessDelegation  = ast.StringTerm("access_delegation")
	keyHasIdempotencyKey = ast.StringTerm("has_idempotency_key")
	keyStorageAccess     = ast.StringTerm("storage_access")
)

// termCount is how many terms value takes from its slab (strings, arrays
// and objects; claims aside, which InterfaceToValue builds itself), and
// how many of them are array elements.
func (in *Input) termCount() (terms, elems int) {
	elems = len(in.Principal.Groups) + len(in.Resource.Namespace) + len(in.Request.AccessDelegation)
	for i := range in.Items {
		elems += len(in.Items[i].Namespace)
	}
	terms = 25 + 4*len(in.Items) + elems
	if in.Request.StorageAccess != "" {
		terms++
	}
	return terms, elems
}

// termBuilder hands out terms, and the element slices of arrays, from
// one slab each. Should a slab run out, append moves on to a new one;
// what was handed out stays valid in the old one.
type termBuilder struct {
	terms []ast.Term
	elems []*ast.Term
}

func (b *termBuilder) term(v ast.Value) *ast.Term {
	b.terms = append(b.terms, ast.Term{Value: v})
	return &b.terms[len(b.terms)-1]
}

func (b *termBuilder) str(s string) *ast.Term { return b.term(ast.String(s)) }

func (b *termBuilder) object(kv ...[2]*ast.Term) *ast.Term { return b.term(ast.NewObject(kv...)) }

func (b *termBuilder) array(ts []*ast.Term) *ast.Term { return b.term(ast.NewArray(ts...)) }

func (b *termBuilder) principal(p *Principal) (*ast.Term, error) {
	kv := make([][2]*ast.Term, 0, 3)
	kv = append(kv,
		[2]*ast.Term{keyID, b.str(p.ID)},
		[2]*ast.Term{keyGroups, b.strings(p.Groups)})
	if len(p.Claims) > 0 {
		// Claims are arbitrary JSON from a token; InterfaceToValue handles
		// the map[string]any/[]any/float64 shapes a JSON decoder produces.
		claims, err := ast.InterfaceToValue(p.Claims)
		if err != nil {
			return nil, err
		}
		kv = append(kv, [2]*ast.Term{keyClaims, ast.NewTerm(claims)})
	}
	return b.object(kv...), nil
}

func (b *termBuilder) resource(r *Resource) *ast.Term {
	kv := make([][2]*ast.Term, 0, 10)
	kv = b.optString(kv, keyCatalog, r.Catalog)
	kv = b.optString(kv, keyBackend, r.Backend)
	if len(r.Namespace) > 0 {
		kv = append(kv, [2]*ast.Term{keyNamespace, b.strings(r.Namespace)})
	}
	kv = b.optString(kv, keyTable, r.Table)
	kv = b.optString(kv, keyView, r.View)
	kv = b.optString(kv, keyFunction, r.Function)
	kv = b.optString(kv, keyLocation, r.Location)
	kv = b.optString(kv, keyShare, r.Share)
	kv = b.optString(kv, keyShareSchema, r.ShareSchema)
	kv = b.optString(kv, keyShareTable, r.ShareTable)
	return b.object(kv...)
}

func (b *termBuilder) request(r *Request) *ast.Term {
	method := [2]*ast.Term{keyMethod, b.str(r.Method)}
	path := [2]*ast.Term{keyPath, b.str(r.Path)}
	deleg := [2]*ast.Term{keyAccessDelegation, b.strings(r.AccessDelegation)}
	idem := [2]*ast.Term{keyHasIdempotencyKey, ast.InternedTerm(r.HasIdempotencyKey)}
	if r.StorageAccess == "" { // omitempty, and no slice built for the common case
		return b.object(method, path, deleg, idem)
	}
	return b.object(method, path, deleg, idem, [2]*ast.Term{keyStorageAccess, b.str(r.StorageAccess)})
}

func (b *termBuilder) item(it *Item) *ast.Term {
	kv := make([][2]*ast.Term, 0, 3)
	kv = append(kv, [2]*ast.Term{keyNamespace, b.strings(it.Namespace)})
	kv = b.optString(kv, keyTable, it.Table)
	kv = b.optString(kv, keyView, it.View)
	return b.object(kv...)
}

// optString appends k only when v is non-empty, like `json:",omitempty"`.
func (b *termBuilder) optString(kv [][2]*ast.Term, k *ast.Term, v string) [][2]*ast.Term {
	if v == "" {
		return kv
	}
	return append(kv, [2]*ast.Term{k, b.str(v)})
}

// strings renders a nil slice as [] rather than null (unlike
// encoding/json): policies can then iterate and count groups, namespaces
// and delegation modes without guarding against null.
func (b *termBuilder) strings(ss []string) *ast.Term {
	start := len(b.elems)
	for _, s := range ss {
		b.elems = append(b.elems, b.str(s))
	}
	// Capped, so that nothing appending to one array can reach the next.
	return b.array(b.elems[start:len(b.elems):len(b.elems)])
}

// appendKey appends an encoding of every field value() puts in the
// document: length-prefixed, in a fixed order, so two inputs share an
// encoding only when policies see the same document (a nil slice and an
// empty one are both [] there, and both encode as no entries). Claims,
// free-form JSON, are encoded by encoding/json, whose sorted keys make it
// deterministic; claims it cannot encode leave the input unmemoizable.
// It replaces json.Marshal of the whole input, whose reflection cost a
// few microseconds per decision.
func (in *Input) appendKey(b []byte) ([]byte, bool) {
	p := &in.Principal
	b = appendString(b, p.ID)
	b = appendStrings(b, p.Groups)
	if len(p.Claims) == 0 {
		b = append(b, 0)
	} else {
		claims, err := json.Marshal(p.Claims)
		if err != nil {
			return b, false
		}
		b = append(b, 1)
		b = appendString(b, string(claims))
	}
	b = appendString(b, in.Operation)
	b = appendString(b, in.API)
	b = appendString(b, in.APIOperation)
	r := &in.Resource
	for _, s := range [...]string{r.Catalog, r.Backend, r.Table, r.View, r.Function, r.Location, r.Share, r.ShareSchema, r.ShareTable} {
		b = appendString(b, s)
	}
	b = appendStrings(b, r.Namespace)
	b = appendString(b, in.Request.Method)
	b = appendString(b, in.Request.Path)
	b = appendStrings(b, in.Request.AccessDelegation)
	if in.Request.HasIdempotencyKey {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = appendString(b, in.Request.StorageAccess)
	b = appendString(b, in.Context.Time)
	b = appendString(b, in.Context.ClientIP)
	b = binary.AppendUvarint(b, uint64(len(in.Items)))
	for i := range in.Items {
		it := &in.Items[i]
		b = appendStrings(b, it.Namespace)
		b = appendString(b, it.Table)
		b = appendString(b, it.View)
	}
	return b, true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
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
	addString(enc, "function", r.Function)
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
