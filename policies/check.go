package policies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// checkPrincipal is who the check inputs come from: no group a policy
// grants anything to, so a healthy policy denies it, without error.
const checkPrincipal = "lakegate-policy-check"

// checkInputs are the requests a new policy set is tried on before it may
// decide: real Iceberg operations, shaped as the Iceberg door shapes them
// (see modules/gateway policyRequest.input), at time now.
func checkInputs(now time.Time) []Input {
	p := Principal{ID: checkPrincipal, Groups: []string{checkPrincipal}}
	env := Context{Time: now.UTC().Format(time.RFC3339), ClientIP: "127.0.0.1"}
	tbl := Resource{Catalog: "lakegate_check", Backend: "embedded", Namespace: []string{"lakegate_check"}, Table: "t"}
	tblPath := "/v1/lakegate_check/namespaces/lakegate_check/tables/t"
	one := func(op, method, path string, res Resource) Input {
		return Input{Principal: p, Operation: op, API: "iceberg", APIOperation: op, Resource: res,
			Request: Request{Method: method, Path: path}, Context: env}
	}
	return []Input{
		one("getConfig", "GET", "/v1/config", Resource{Catalog: tbl.Catalog, Backend: tbl.Backend}),
		one("loadTable", "GET", tblPath, tbl),
		one("updateTable", "POST", tblPath, tbl),
	}
}

// check evaluates set's decision on checkInputs. A policy that fails on
// one of them with an evaluation error (a conflict, a builtin error under
// strict mode) or a malformed decision would deny every such request, so
// it is refused and the previous set, if any, keeps deciding. Undefined
// is an answer a policy may give (a deny); a timeout says as much about
// the machine as about the policy, so it is only logged.
func (e *Engine) check(ctx context.Context, set *policySet) error {
	for _, in := range checkInputs(time.Now()) {
		rs, err := e.eval(ctx, set.decision, &in)
		if err == nil {
			_, err = parseDecision(rs, e.cfg.Package)
		}
		switch {
		case err == nil, errors.Is(err, ErrUndefined), ctx.Err() != nil:
		case errors.Is(err, ErrTimeout):
			e.log.Warn("policy check timed out; loading the policy anyway",
				zap.String("operation", in.Operation), zap.Error(err))
			return nil
		default:
			return fmt.Errorf("policies: data.%s.decision fails on a %s request: %w",
				e.cfg.Package, in.Operation, err)
		}
	}
	return nil
}
