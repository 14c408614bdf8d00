// Command specgen turns the Iceberg REST OpenAPI document into the compact
// request-schema table upstream/icerest walks (schema_gen.json): for each
// operation its request body schema and its query parameters, and every
// components/schemas entry they reach, with allOf merged and unions told
// apart by their discriminator. Run it with `go generate ./upstream/icerest`.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

func main() {
	spec := flag.String("spec", "spec/iceberg-rest-catalog-open-api.yaml", "the OpenAPI document")
	out := flag.String("out", "schema_gen.json", "the table to write")
	flag.Parse()
	doc, err := os.ReadFile(*spec)
	if err != nil {
		log.Fatal(err)
	}
	table, err := Generate(doc)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, table, 0o644); err != nil {
		log.Fatal(err)
	}
}

// Node is one schema of the table; upstream/icerest's node mirrors it.
type Node struct {
	Ref      string           `json:"ref,omitempty"`   // a components/schemas name
	Types    []string         `json:"types,omitempty"` // JSON types allowed; none: any
	Format   string           `json:"format,omitempty"`
	Min      *int64           `json:"min,omitempty"`
	Enum     []string         `json:"enum,omitempty"` // enum or const (strings)
	Required []string         `json:"required,omitempty"`
	Props    map[string]*Node `json:"props,omitempty"`
	Extra    *Node            `json:"extra,omitempty"`  // additionalProperties' schema
	Closed   bool             `json:"closed,omitempty"` // additionalProperties: false
	Items    *Node            `json:"items,omitempty"`
	AnyOf    []*Node          `json:"anyOf,omitempty"`
	Tag      string           `json:"tag,omitempty"` // the discriminator property picking one of Cases
	Cases    map[string]*Node `json:"cases,omitempty"`
}

// Operation is what an operation's request may carry.
type Operation struct {
	Body  *Node            `json:"body,omitempty"`
	Query map[string]*Node `json:"query,omitempty"`
}

// Table is the generated file.
type Table struct {
	Operations map[string]*Operation `json:"operations"`
	Schemas    map[string]*Node      `json:"schemas"`
}

type gen struct {
	schemas map[string]any // components/schemas, as YAML decoded them
	params  map[string]any // components/parameters
	out     map[string]*Node
}

// Generate builds the table from the OpenAPI document's bytes.
func Generate(doc []byte) ([]byte, error) {
	var d map[string]any
	if err := yaml.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	comps := obj(d["components"])
	g := &gen{schemas: obj(comps["schemas"]), params: obj(comps["parameters"]), out: map[string]*Node{}}
	t := Table{Operations: map[string]*Operation{}, Schemas: g.out}
	for _, path := range sortedKeys(obj(d["paths"])) {
		item := obj(obj(d["paths"])[path])
		for _, method := range sortedKeys(item) {
			op := obj(item[method])
			id, _ := op["operationId"].(string)
			if id == "" {
				continue
			}
			o := &Operation{Query: map[string]*Node{}}
			for _, raw := range append(list(item["parameters"]), list(op["parameters"])...) {
				if p := g.param(raw); p["in"] == "query" {
					o.Query[p["name"].(string)] = g.convert(obj(p["schema"]))
				}
			}
			if s := obj(obj(obj(obj(op["requestBody"])["content"])["application/json"])["schema"]); s != nil {
				o.Body = g.convert(s)
			}
			if o.Body != nil || len(o.Query) > 0 {
				t.Operations[id] = o
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (g *gen) param(p any) map[string]any {
	m := obj(p)
	if ref, ok := m["$ref"].(string); ok {
		return obj(g.params[refName(ref)])
	}
	return m
}

// ref converts a named schema once (recursive schemas such as Type and
// Predicate refer to themselves by name) and returns a reference to it.
func (g *gen) ref(name string) *Node {
	if _, ok := g.out[name]; !ok {
		g.out[name] = nil // taken: a cycle stops here
		n := g.convert(obj(g.schemas[name]))
		n.Required = slices.DeleteFunc(n.Required, func(f string) bool { return slices.Contains(omitted[name], f) })
		g.out[name] = n
	}
	return &Node{Ref: name}
}

// omitted are fields the spec requires that real clients leave out and
// every catalog accepts without: refusing them would refuse those
// clients. Iceberg Java (1.10) sends a CreateViewRequest without
// "properties" when the view has none; Nessie, the reference server and
// the embedded catalog take it.
var omitted = map[string][]string{
	"CreateViewRequest": {"properties"},
}

// convert turns one schema into a node.
func (g *gen) convert(s map[string]any) *Node {
	if ref, ok := s["$ref"].(string); ok && len(constraints(s)) == 1 {
		return g.ref(refName(ref))
	}
	s = g.flatten(s, true)
	n := &Node{Types: types(s), Required: strs(s["required"])}
	n.Format = format(s, n.Types)
	if c, ok := s["const"]; ok {
		n.Enum = []string{fmt.Sprint(c)}
	} else if e := strs(s["enum"]); e != nil {
		n.Enum = e
	}
	if m, ok := s["minimum"].(int); ok {
		v := int64(m)
		n.Min = &v
	}
	if props := obj(s["properties"]); len(props) > 0 {
		n.Props = map[string]*Node{}
		for _, k := range sortedKeys(props) {
			n.Props[k] = g.convert(obj(props[k]))
		}
	}
	switch ap := s["additionalProperties"].(type) {
	case bool:
		n.Closed = !ap
	case map[string]any:
		n.Extra = g.convert(ap)
	}
	if it := obj(s["items"]); it != nil {
		n.Items = g.convert(it)
	}
	g.union(n, s)
	return n
}

// union fills AnyOf, or Tag and Cases when the alternatives are told apart
// by one property: the spec's discriminator mapping (TableRequirement,
// ViewRequirement), or a const every alternative gives the same property
// (TableUpdate and ViewUpdate name their BaseUpdate actions this way).
// oneOf is read as anyOf: the spec's unions overlap (a number is both an
// IntegerTypeValue and a LongTypeValue), so "exactly one" would refuse
// every literal.
func (g *gen) union(n *Node, s map[string]any) {
	if d := obj(s["discriminator"]); d != nil && obj(d["mapping"]) != nil {
		n.Tag, n.Cases = d["propertyName"].(string), map[string]*Node{}
		for v, ref := range obj(d["mapping"]) {
			n.Cases[v] = g.ref(refName(ref.(string)))
		}
		return
	}
	alts := append(list(s["anyOf"]), list(s["oneOf"])...)
	for _, a := range alts {
		n.AnyOf = append(n.AnyOf, g.convert(obj(a)))
	}
	if tag, cases := g.tagged(alts); tag != "" {
		n.AnyOf, n.Tag, n.Cases = nil, tag, cases
	}
}

// tagged finds the property whose const tells alts apart, if there is one.
func (g *gen) tagged(alts []any) (string, map[string]*Node) {
	if len(alts) < 2 {
		return "", nil
	}
	for _, tag := range []string{"action", "type"} {
		cases := map[string]*Node{}
		for _, a := range alts {
			ref, _ := obj(a)["$ref"].(string)
			if ref == "" {
				break
			}
			c, ok := obj(obj(g.flatten(obj(g.schemas[refName(ref)]), false)["properties"])[tag])["const"].(string)
			if !ok || cases[c] != nil {
				break
			}
			cases[c] = g.ref(refName(ref))
		}
		if len(cases) == len(alts) {
			return tag, cases
		}
	}
	return "", nil
}

// flatten merges allOf parts, and a $ref's target with the keywords beside
// it (OpenAPI 3.1), into one schema: properties and required add up, a
// later keyword wins. Only the outermost schema keeps its discriminator
// (own): a subtype inherits BaseUpdate's fields, not its union.
func (g *gen) flatten(s map[string]any, own bool) map[string]any {
	var parts []map[string]any
	if ref, ok := s["$ref"].(string); ok {
		parts = append(parts, g.flatten(obj(g.schemas[refName(ref)]), false))
	}
	for _, p := range list(s["allOf"]) {
		parts = append(parts, g.flatten(obj(p), false))
	}
	if len(parts) == 0 {
		return s
	}
	out := map[string]any{}
	props := map[string]any{}
	var req []string
	for _, p := range append(parts, s) {
		for k, v := range p {
			switch k {
			case "$ref", "allOf":
			case "properties":
				maps.Copy(props, obj(v))
			case "required":
				req = append(req, strs(v)...)
			case "discriminator":
				if own {
					out[k] = v
				}
			default:
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(req) > 0 {
		slices.Sort(req)
		out["required"] = slices.Compact(req)
	}
	return out
}

// constraints are the keywords of s that constrain a value (annotations
// such as description and deprecated are not).
func constraints(s map[string]any) []string {
	var ks []string
	for k := range s {
		switch k {
		case "description", "deprecated", "example", "examples", "default", "readOnly", "title":
		default:
			ks = append(ks, k)
		}
	}
	return ks
}

// types are the JSON types s allows, null included when it is nullable.
func types(s map[string]any) []string {
	var ts []string
	switch t := s["type"].(type) {
	case string:
		ts = []string{t}
	case []any:
		ts = strs(t)
	}
	if s["nullable"] == true && len(ts) > 0 {
		ts = append(ts, "null")
	}
	return ts
}

// format is the format lakegate checks: int64 where the spec says so;
// int32 for every other integer (the reference implementation reads an
// integer without format as a Java int, and refuses a larger one); uuid.
func format(s map[string]any, ts []string) string {
	f, _ := s["format"].(string)
	switch {
	case slices.Contains(ts, "integer") && f == "int64":
		return "int64"
	case slices.Contains(ts, "integer"):
		return "int32"
	case f == "uuid":
		return "uuid"
	}
	return ""
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func list(v any) []any { l, _ := v.([]any); return l }

func strs(v any) []string {
	if s, ok := v.([]string); ok {
		return s
	}
	var out []string
	for _, x := range list(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
