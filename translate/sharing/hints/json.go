package hints

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// jnode is one op of a jsonPredicateHints document.
type jnode struct {
	Op        string          `json:"op"`
	Children  []*jnode        `json:"children"`
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value"`
	ValueType string          `json:"valueType"`
}

// JSON converts a jsonPredicateHints document into an Iceberg filter over
// schema s.
//
// Best effort and always safe for pruning: a part that cannot be converted
// is widened (dropped from an AND, making an OR / NOT containing it
// AlwaysTrue), so the result never prunes a file that could match. Returns
// (iceberg.AlwaysTrue{}, err) when nothing usable remains; err explains what
// was ignored (the caller logs it and goes on). An empty hint is no filter
// and no error.
func JSON(hint string, s *iceberg.Schema) (expr iceberg.BooleanExpression, err error) {
	defer guard(&expr, &err)
	if strings.TrimSpace(hint) == "" {
		return iceberg.AlwaysTrue{}, nil
	}
	if s == nil {
		return iceberg.AlwaysTrue{}, errors.New("hints ignored: no schema")
	}
	if len(hint) > maxJSONBytes {
		return iceberg.AlwaysTrue{}, fmt.Errorf("jsonPredicateHints ignored: longer than %d bytes", maxJSONBytes)
	}
	// Each predicate level is an object plus its children array.
	clean, err := precheckJSON(hint, 2*maxDepth+1)
	if err != nil {
		return iceberg.AlwaysTrue{}, fmt.Errorf("jsonPredicateHints ignored: %w", err)
	}
	var root *jnode
	if err := json.Unmarshal(clean, &root); err != nil {
		return iceberg.AlwaysTrue{}, fmt.Errorf("jsonPredicateHints ignored: %w", err)
	}
	c := &conv{s: s, utc: true}
	return c.finish(c.json(root, 1))
}

// precheckJSON bounds the nesting before encoding/json recurses into it, and
// drops trailing commas (the protocol's own "not null" example has one).
func precheckJSON(in string, limit int) ([]byte, error) {
	out := make([]byte, 0, len(in))
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(in); i++ {
		b := in[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case b == '\\':
				esc = true
			case b == '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == '{' || b == '[':
			if depth++; depth > limit {
				return nil, fmt.Errorf("nested deeper than %d predicates", maxDepth)
			}
		case b == '}' || b == ']':
			depth--
		case b == ',':
			j := i + 1
			for j < len(in) && strings.IndexByte(" \t\r\n", in[j]) >= 0 {
				j++
			}
			if j < len(in) && (in[j] == '}' || in[j] == ']') {
				continue
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// valueTypes maps the protocol's value types (V1 and V2) to kinds.
var valueTypes = map[string]kind{
	"bool": kBool, "boolean": kBool, "int": kInt, "integer": kInt, "long": kLong,
	"float": kFloat, "double": kDouble, "string": kString, "date": kDate,
	"timestamp": kTimestamp,
}

var jsonCompare = map[string]iceberg.Operation{
	"equal": iceberg.OpEQ, "lessthan": iceberg.OpLT, "lessthanorequal": iceberg.OpLTEQ,
	"greaterthan": iceberg.OpGT, "greaterthanorequal": iceberg.OpGTEQ,
}

func (c *conv) json(n *jnode, depth int) res {
	if n == nil {
		return c.fail("null predicate")
	}
	if depth > maxDepth {
		return c.fail("nested deeper than %d predicates", maxDepth)
	}
	op := strings.ToLower(n.Op)
	kids := n.Children
	for _, k := range kids {
		if k == nil {
			return c.fail("%s: null child", quote(n.Op))
		}
	}
	switch op {
	case "and", "or":
		if len(kids) < 2 {
			return c.fail("%s needs at least two children, has %d", op, len(kids))
		}
		rs := make([]res, len(kids))
		for i, k := range kids {
			rs[i] = c.json(k, depth+1)
		}
		if op == "and" {
			return and(rs)
		}
		return or(rs)
	case "not":
		if len(kids) != 1 {
			return c.fail("not needs one child, has %d", len(kids))
		}
		return c.not(c.json(kids[0], depth+1))
	case "isnull":
		if len(kids) != 1 || !strings.EqualFold(kids[0].Op, "column") {
			return c.fail("isNull needs one column child")
		}
		k, err := colKind(kids[0])
		if err != nil {
			return c.fail("isNull: %v", err)
		}
		return c.isNull(kids[0].Name, k, false)
	}
	cmp, ok := jsonCompare[op]
	if !ok {
		return c.fail("unsupported op %s", quote(n.Op))
	}
	if len(kids) != 2 {
		return c.fail("%s needs two children, has %d", n.Op, len(kids))
	}
	col, lit := kids[0], kids[1]
	if strings.EqualFold(col.Op, "literal") {
		col, lit, cmp = lit, col, flip(cmp)
	}
	if !strings.EqualFold(col.Op, "column") || !strings.EqualFold(lit.Op, "literal") {
		return c.fail("%s: only column-vs-literal comparisons are supported", n.Op)
	}
	ck, err := colKind(col)
	if err != nil {
		return c.fail("%s: %v", n.Op, err)
	}
	lk, ok := valueTypes[strings.ToLower(lit.ValueType)]
	if !ok {
		return c.fail("%s: literal has unknown valueType %s", n.Op, quote(lit.ValueType))
	}
	if lk != ck {
		// The protocol compares values of one type; a mismatch would need
		// casts we cannot mirror exactly.
		return c.fail("%s: column %s is %s but literal is %s", n.Op, quote(col.Name), ck, lk)
	}
	raw, err := litValue(lit.Value)
	if err != nil {
		return c.fail("%s: %v", n.Op, err)
	}
	return c.compare(cmp, col.Name, ck, raw, lk)
}

func colKind(n *jnode) (kind, error) {
	if n.Name == "" {
		return 0, errors.New("column without name")
	}
	k, ok := valueTypes[strings.ToLower(n.ValueType)]
	if !ok {
		return 0, fmt.Errorf("column %s has unknown valueType %s", quote(n.Name), quote(n.ValueType))
	}
	return k, nil
}

// litValue reads a literal's value: a JSON string per the protocol (a bare
// number or boolean is taken as its text); an explicit null is the null
// literal (nil). A missing value is an error, not null: guessing null would
// turn `equal` into IsNull and prune what the client asked for.
func litValue(v json.RawMessage) (*string, error) {
	if len(v) == 0 {
		return nil, errors.New("literal without value")
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, err
	}
	var s string
	switch x := x.(type) {
	case nil:
		return nil, nil
	case string:
		s = x
	case float64, bool:
		s = strings.TrimSpace(string(v))
	default:
		return nil, errors.New("literal value is not a string")
	}
	return &s, nil
}
