package icerest

//go:generate go run ./internal/specgen -spec spec/iceberg-rest-catalog-open-api.yaml -out schema_gen.json

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/lakegate/lakegate/internal/strictjson"
)

// The request schemas are the Iceberg REST OpenAPI document's
// (spec/iceberg-rest-catalog-open-api.yaml), compiled by internal/specgen
// into schema_gen.json: regenerate with `go generate ./upstream/icerest`
// after updating the YAML (TestSchemaTableFresh fails until then).
//
//go:embed schema_gen.json
var schemaTable []byte

// node is one schema of the table (internal/specgen's Node): the checks
// that apply to a JSON value, all of them.
type node struct {
	Ref      string           `json:"ref"`
	Types    []string         `json:"types"`
	Format   string           `json:"format"`
	Min      *int64           `json:"min"`
	Enum     []string         `json:"enum"`
	Required []string         `json:"required"`
	Props    map[string]*node `json:"props"`
	Extra    *node            `json:"extra"`
	Closed   bool             `json:"closed"`
	Items    *node            `json:"items"`
	AnyOf    []*node          `json:"anyOf"`
	Tag      string           `json:"tag"`
	Cases    map[string]*node `json:"cases"`

	target *node             // Ref resolved
	folds  map[string]string // Props' names by strictjson.Fold
	alts   shape             // n resolved, with its alternatives (expand)
}

type operationSchema struct {
	Body  *node            `json:"body"`
	Query map[string]*node `json:"query"`
}

// operationSchemas are the request schemas by operation id.
var operationSchemas = loadSchemas(schemaTable)

func loadSchemas(b []byte) map[string]*operationSchema {
	var t struct {
		Operations map[string]*operationSchema `json:"operations"`
		Schemas    map[string]*node            `json:"schemas"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		panic("icerest: schema_gen.json: " + err.Error())
	}
	seen := map[*node]bool{}
	for _, n := range t.Schemas {
		n.link(t.Schemas, seen)
	}
	for _, op := range t.Operations {
		op.Body.link(t.Schemas, seen)
		for _, q := range op.Query {
			q.link(t.Schemas, seen)
		}
	}
	for n := range seen { // once every reference is resolved
		n.alts = expand(nil, n)
	}
	return t.Operations
}

// link resolves every reference under n once.
func (n *node) link(schemas map[string]*node, seen map[*node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.folds = strictjson.Folds(slices.Collect(maps.Keys(n.Props)))
	if n.Ref != "" {
		n.target = schemas[n.Ref]
		if n.target == nil {
			panic("icerest: schema_gen.json: no schema " + n.Ref)
		}
	}
	for _, c := range n.children() {
		c.link(schemas, seen)
	}
}

func (n *node) children() []*node {
	c := append([]*node{n.Extra, n.Items}, n.AnyOf...)
	for _, p := range n.Props {
		c = append(c, p)
	}
	for _, k := range n.Cases {
		c = append(c, k)
	}
	return c
}

// check reports whether v (decoded with UseNumber) is valid under n.
// Extra fields an object's schema does not name pass unless the spec
// closes the object (additionalProperties: false, only in scan
// expressions): the spec allows them, engines send vendor fields, and a
// backend may take them; the embedded catalog ignores them too.
func (n *node) check(v any) error {
	for n.target != nil {
		n = n.target
	}
	if err := n.checkType(v); err != nil {
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		if err := n.checkObject(x); err != nil {
			return err
		}
	case []any:
		if n.Items != nil {
			for i, item := range x {
				if err := n.Items.check(item); err != nil {
					return fmt.Errorf("item %d: %w", i, err)
				}
			}
		}
	}
	return n.checkUnion(v)
}

// checkType checks v's JSON type, and for scalars its enum and format.
func (n *node) checkType(v any) error {
	if len(n.Types) > 0 && !slices.Contains(n.Types, jsonType(v, n.Types)) {
		return fmt.Errorf("must be %s", typeName(n))
	}
	switch x := v.(type) {
	case string:
		if len(n.Enum) > 0 && !slices.Contains(n.Enum, x) {
			return fmt.Errorf("must be one of %q", n.Enum)
		}
		if n.Format == "uuid" && uuid.Validate(x) != nil {
			return errors.New("must be a UUID")
		}
	case json.Number:
		return n.checkNumber(x)
	}
	return nil
}

// checkNumber checks a number's literal: an integer is digits only
// (1.5, 1e3 and 1e999 are not), within int64 or int32 as its format says.
func (n *node) checkNumber(x json.Number) error {
	if !slices.Contains(n.Types, "integer") {
		if f, err := strconv.ParseFloat(string(x), 64); err != nil || math.IsInf(f, 0) {
			return errors.New("must be a finite number")
		}
		return nil
	}
	bits := 64
	if n.Format == "int32" {
		bits = 32
	}
	i, err := strconv.ParseInt(string(x), 10, bits)
	if err != nil {
		return fmt.Errorf("must be %s", typeName(n))
	}
	if n.Min != nil && i < *n.Min {
		return fmt.Errorf("must be at least %d", *n.Min)
	}
	return nil
}

// checkObject checks required fields and each field's schema. A null
// field counts as absent, as clients that drop nulls mean the same; a
// required field may be null (or absent) only where the spec makes it
// nullable (assert-ref-snapshot-id's snapshot-id).
func (n *node) checkObject(o map[string]any) error {
	for _, name := range n.Required {
		if o[name] == nil && !n.Props[name].nullable() {
			return fmt.Errorf("%q is required", name)
		}
	}
	for name, v := range o {
		p := n.Props[name]
		if p == nil {
			p = n.Extra // a map's value: null is a value, not an absence
		} else if v == nil {
			continue
		}
		if p == nil && n.Closed {
			return fmt.Errorf("unknown field %q", name)
		}
		if p != nil {
			if err := p.check(v); err != nil {
				return fmt.Errorf("%q: %w", name, err)
			}
		}
	}
	return nil
}

// checkUnion picks the case named by the tag, or else needs one of AnyOf
// to match.
func (n *node) checkUnion(v any) error {
	if n.Tag != "" {
		o, _ := v.(map[string]any)
		tag, ok := o[n.Tag].(string)
		if !ok {
			return fmt.Errorf("%q is required", n.Tag)
		}
		c := n.Cases[tag]
		if c == nil {
			return fmt.Errorf("unknown %s %q", n.Tag, tag)
		}
		return c.check(v)
	}
	var first error
	tried := false
	for _, alt := range n.AnyOf {
		if !alt.mayMatch(v) {
			continue
		}
		tried = true
		err := alt.check(v)
		if err == nil {
			return nil
		}
		first = cmp.Or(first, err)
	}
	if !tried && len(n.AnyOf) > 0 {
		return n.AnyOf[0].check(v) // none fits: say why the first does not
	}
	return first
}

// mayMatch is a quick look at whether v is an instance of n at all: of
// one of its JSON types and, for an object with a "type" the schema
// enumerates (Type's list and map, the scan predicates), of that type.
// checkUnion tries only those, so its error is about the one alternative
// the client meant.
func (n *node) mayMatch(v any) bool {
	for n.target != nil {
		n = n.target
	}
	if len(n.Types) > 0 && !slices.Contains(n.Types, jsonType(v, n.Types)) {
		return false
	}
	o, ok := v.(map[string]any)
	if !ok || n.Props["type"] == nil || len(n.Props["type"].Enum) == 0 {
		return true
	}
	t, _ := o["type"].(string)
	return slices.Contains(n.Props["type"].Enum, t)
}

// nullable reports whether null is a valid value of n.
func (n *node) nullable() bool {
	for n != nil && n.target != nil {
		n = n.target
	}
	return n != nil && slices.Contains(n.Types, "null")
}

// jsonType names v's JSON type; a number is an "integer" when the schema
// asks for one (checkNumber then checks its literal).
func jsonType(v any, want []string) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if slices.Contains(want, "integer") {
			return "integer"
		}
		return "number"
	}
	return ""
}

func typeName(n *node) string {
	switch {
	case slices.Contains(n.Types, "integer") && n.Format == "int64":
		return "a long (an integer within int64)"
	case slices.Contains(n.Types, "integer"):
		return "an int (an integer within int32)"
	case slices.Contains(n.Types, "boolean"):
		return "true or false"
	case slices.Contains(n.Types, "object"):
		return "an object"
	case slices.Contains(n.Types, "array"):
		return "an array"
	case slices.Contains(n.Types, "string"):
		return "a string"
	}
	return fmt.Sprintf("of type %v", n.Types)
}
