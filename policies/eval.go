package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/rego"
)

// eval runs one prepared query against in under the configured timeout.
func (e *Engine) eval(ctx context.Context, pq rego.PreparedEvalQuery, in *Input) (rego.ResultSet, error) {
	v, err := in.value()
	if err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	// OPA notices cancellation only from a watcher goroutine, so a query
	// quick enough can finish on a dead context; refuse it up front.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout.D())
	defer cancel()
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		// OPA reports a cancelled query as its own error; our deadline is
		// what tells a timeout from a policy bug.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w after %s: %w", ErrTimeout, e.cfg.Timeout, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("policy evaluation: %w: %w", ctx.Err(), err)
		}
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	return rs, nil
}

// result returns the single value of a one-expression query, or
// ErrUndefined when the rule produced nothing.
func result(rs rego.ResultSet, rule string) (any, error) {
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("%w: no %s for this input", ErrUndefined, rule)
	}
	return rs[0].Expressions[0].Value, nil
}

// parseDecision reads data.<pkg>.decision. Only an object with a boolean
// allow is a decision; a malformed obligations object also fails, since
// an obligation we cannot read is one we cannot honour.
func parseDecision(rs rego.ResultSet, pkg string) (Decision, error) {
	rule := "data." + pkg + ".decision"
	v, err := result(rs, rule)
	if err != nil {
		return Decision{}, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s is %s, not an object", ErrInvalid, rule, typeName(v))
	}
	allow, ok := obj["allow"].(bool)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s.allow is %s, not a boolean", ErrInvalid, rule, typeName(obj["allow"]))
	}
	d := Decision{Allow: allow}
	d.Reason, _ = obj["reason"].(string)
	if d.Obligations, err = parseObligations(obj["obligations"], rule); err != nil {
		return Decision{}, err
	}
	if !d.Allow && d.Reason == "" {
		d.Reason = "denied by policy"
	}
	return d, nil
}

func parseObligations(v any, rule string) (Obligations, error) {
	var o Obligations
	if v == nil {
		return o, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return o, fmt.Errorf("%w: %s.obligations is %s, not an object", ErrInvalid, rule, typeName(v))
	}
	if s, present := obj["strip_credentials"]; present {
		if o.StripCredentials, ok = s.(bool); !ok {
			return o, fmt.Errorf("%w: %s.obligations.strip_credentials is %s, not a boolean",
				ErrInvalid, rule, typeName(s))
		}
	}
	return o, nil
}

// parseVisible reads data.<pkg>.visible, a set or array of item indexes.
// Any entry that is not an index of the page fails the whole page: a
// policy that gets indexes wrong cannot be trusted with the rest.
func parseVisible(rs rego.ResultSet, n int, pkg string) ([]bool, error) {
	rule := "data." + pkg + ".visible"
	v, err := result(rs, rule)
	if err != nil {
		return nil, err
	}
	idx, ok := v.([]any) // sets and arrays both arrive as []any
	if !ok {
		return nil, fmt.Errorf("%w: %s is %s, not a set of item indexes", ErrInvalid, rule, typeName(v))
	}
	visible := make([]bool, n)
	for _, x := range idx {
		i, err := index(x, n)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, rule, err)
		}
		visible[i] = true
	}
	return visible, nil
}

func index(x any, n int) (int, error) {
	num, ok := x.(json.Number)
	if !ok {
		return 0, fmt.Errorf("entry is %s, not an item index", typeName(x))
	}
	i, err := num.Int64()
	if err != nil || i < 0 || i >= int64(n) {
		return 0, fmt.Errorf("%s is not an index of a %d-item page", num, n)
	}
	return int(i), nil
}

// typeName names a JSON value's type the way a policy author thinks of it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null or missing"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
