package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Per-evaluation options that do not depend on the request, built once.
var (
	// Nobody reads an evaluation's metrics; the no-op set saves creating
	// and timing a fresh one for every query.
	evalNoMetrics = rego.EvalMetrics(metrics.NoOp())
	// Results stay AST terms: parseDecision and parseVisible read the few
	// fields they need instead of OPA converting the whole value to Go.
	evalASTResult = rego.EvalGenerateJSON(func(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil })
)

// ctxCancel is the cancel flag OPA checks at every step of an evaluation,
// raised by ctx ending (the timeout included). Left to itself, OPA starts
// a goroutine per query that waits on ctx to raise its own flag; reading
// ctx.Err (an atomic load) costs less than that goroutine. Builtins still
// get ctx itself, deadline included.
type ctxCancel struct {
	ctx    context.Context
	raised atomic.Bool
}

func (c *ctxCancel) Cancel()         { c.raised.Store(true) }
func (c *ctxCancel) Cancelled() bool { return c.raised.Load() || c.ctx.Err() != nil }

// eval runs one prepared query against in under the configured timeout.
func (e *Engine) eval(ctx context.Context, pq rego.PreparedEvalQuery, in *Input) (rego.ResultSet, error) {
	v, err := in.value()
	if err != nil {
		return nil, fmt.Errorf("policy input: %w", err)
	}
	// OPA checks for cancellation only between steps, so a query
	// quick enough can finish on a dead context; refuse it up front.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout.D())
	defer cancel()
	vc := newVirtualCache()
	defer vc.release()
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(v), rego.EvalExternalCancel(&ctxCancel{ctx: ctx}),
		rego.EvalVirtualCache(vc), evalNoMetrics, evalASTResult)
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
func result(rs rego.ResultSet, rule string) (ast.Value, error) {
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("%w: no %s for this input", ErrUndefined, rule)
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok { // cannot happen: evalASTResult produced every value
		return nil, fmt.Errorf("%w: %s is %T, not a term", ErrInvalid, rule, rs[0].Expressions[0].Value)
	}
	return t.Value, nil
}

// Keys of the decision document.
var (
	keyAllow            = ast.StringTerm("allow")
	keyReason           = ast.StringTerm("reason")
	keyObligations      = ast.StringTerm("obligations")
	keyStripCredentials = ast.StringTerm("strip_credentials")
)

// get returns obj[k], or nil when k is absent. A decision is read as its
// JSON form would be, where only string keys can be named "allow" etc.
func get(obj ast.Object, k *ast.Term) ast.Value {
	if t := obj.Get(k); t != nil {
		return t.Value
	}
	return nil
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
	obj, ok := v.(ast.Object)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s is %s, not an object", ErrInvalid, rule, typeName(v))
	}
	allow, ok := get(obj, keyAllow).(ast.Boolean)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s.allow is %s, not a boolean", ErrInvalid, rule, typeName(get(obj, keyAllow)))
	}
	d := Decision{Allow: bool(allow)}
	if s, ok := get(obj, keyReason).(ast.String); ok {
		d.Reason = string(s)
	}
	if d.Obligations, err = parseObligations(get(obj, keyObligations), rule); err != nil {
		return Decision{}, err
	}
	if !d.Allow && d.Reason == "" {
		d.Reason = "denied by policy"
	}
	return d, nil
}

// parseObligations reads the obligations object; absent and null both
// mean none, while a strip_credentials that is present must be a boolean.
func parseObligations(v ast.Value, rule string) (Obligations, error) {
	var o Obligations
	if _, null := v.(ast.Null); v == nil || null {
		return o, nil
	}
	obj, ok := v.(ast.Object)
	if !ok {
		return o, fmt.Errorf("%w: %s.obligations is %s, not an object", ErrInvalid, rule, typeName(v))
	}
	if s := obj.Get(keyStripCredentials); s != nil {
		b, ok := s.Value.(ast.Boolean)
		if !ok {
			return o, fmt.Errorf("%w: %s.obligations.strip_credentials is %s, not a boolean",
				ErrInvalid, rule, typeName(s.Value))
		}
		o.StripCredentials = bool(b)
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
	visible := make([]bool, n)
	mark := func(x *ast.Term) error {
		i, err := index(x.Value, n)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, rule, err)
		}
		visible[i] = true
		return nil
	}
	switch idx := v.(type) {
	case ast.Set:
		err = idx.Iter(mark)
	case *ast.Array:
		err = idx.Iter(mark)
	default:
		return nil, fmt.Errorf("%w: %s is %s, not a set of item indexes", ErrInvalid, rule, typeName(v))
	}
	if err != nil {
		return nil, err
	}
	return visible, nil
}

func index(x ast.Value, n int) (int, error) {
	num, ok := x.(ast.Number)
	if !ok {
		return 0, fmt.Errorf("entry is %s, not an item index", typeName(x))
	}
	i, err := json.Number(num).Int64()
	if err != nil || i < 0 || i >= int64(n) {
		return 0, fmt.Errorf("%s is not an index of a %d-item page", json.Number(num), n)
	}
	return int(i), nil
}

// typeName names a value's type the way a policy author thinks of it, in
// JSON terms: a set is an array there, and an absent key is null.
func typeName(v ast.Value) string {
	switch v.(type) {
	case nil, ast.Null:
		return "null or missing"
	case ast.Boolean:
		return "a boolean"
	case ast.String:
		return "a string"
	case ast.Number:
		return "a number"
	case *ast.Array, ast.Set:
		return "an array"
	case ast.Object:
		return "an object"
	}
	return ast.ValueName(v)
}
