package policies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// policySet is one loaded generation of the policy directory: compiled
// once, prepared once, then shared read-only by every evaluation.
type policySet struct {
	files    []string
	decision rego.PreparedEvalQuery
	visible  *rego.PreparedEvalQuery // nil when the package has no visible rule
	// memo remembers decisions by input; nil when the policy calls a
	// non-deterministic builtin (time.now_ns, http.send, rand...), whose
	// answers a memo would freeze. A new set starts with an empty memo.
	memo *lru.Cache[[32]byte, Decision]
}

// memoSize bounds remembered decisions. Inputs carry the time to the
// second, so entries age out on their own as requests move on.
const memoSize = 10000

// load parses, compiles and prepares every policy file in dir. Any parse
// or compile error fails the whole set, so a half-edited directory never
// becomes the active policy.
func load(ctx context.Context, dir, pkg string) (*policySet, error) {
	files, err := policyFiles(dir)
	if err != nil {
		return nil, err
	}
	modules, err := parseFiles(files)
	if err != nil {
		return nil, err
	}
	c := ast.NewCompiler()
	if c.Compile(modules); c.Failed() {
		return nil, fmt.Errorf("policies: compiling %s: %w", dir, c.Errors)
	}
	set := &policySet{files: files}
	if deterministic(c) {
		if set.memo, err = lru.New[[32]byte, Decision](memoSize); err != nil {
			return nil, err
		}
	}
	if !hasRule(c, pkg, "decision") {
		return nil, fmt.Errorf("policies: no rule data.%s.decision in %s (wrong package?)", pkg, dir)
	}
	if set.decision, err = prepare(ctx, c, pkg, "decision"); err != nil {
		return nil, err
	}
	if hasRule(c, pkg, "visible") {
		pq, err := prepare(ctx, c, pkg, "visible")
		if err != nil {
			return nil, err
		}
		set.visible = &pq
	}
	return set, nil
}

// policyFiles lists dir's policy files in name order. Rego unit tests
// (*_test.rego) are left out: they are for `opa test`, not the gateway.
func policyFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	var files []string
	for _, ent := range entries {
		if isPolicyFile(ent.Name()) && !ent.IsDir() {
			files = append(files, filepath.Join(dir, ent.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("policies: no *.rego files in %s", dir)
	}
	sort.Strings(files)
	return files, nil
}

func isPolicyFile(name string) bool {
	return strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego")
}

func parseFiles(files []string) (map[string]*ast.Module, error) {
	modules := make(map[string]*ast.Module, len(files))
	var errs []error
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m, err := ast.ParseModuleWithOpts(f, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		modules[f] = m
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("policies: parsing: %w", errors.Join(errs...))
	}
	return modules, nil
}

// hasRule reports whether the package defines rule (directly or through
// rules under it, e.g. `decision.allow := ...`). Checking at load turns a
// mistyped package into a load error instead of denying every request.
func hasRule(c *ast.Compiler, pkg, rule string) bool {
	ref, err := ast.ParseRef("data." + pkg + "." + rule)
	return err == nil && len(c.GetRules(ref)) > 0
}

// prepare builds the shared prepared query for data.<pkg>.<rule> on the
// already compiled set, so the second query does not compile it again.
func prepare(ctx context.Context, c *ast.Compiler, pkg, rule string) (rego.PreparedEvalQuery, error) {
	q := "data." + pkg + "." + rule
	pq, err := rego.New(rego.Query(q), rego.Compiler(c)).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("policies: preparing %s: %w", q, err)
	}
	return pq, nil
}

// checkPackage rejects package names that cannot form a data reference.
func checkPackage(pkg string) error {
	ref, err := ast.ParseRef("data." + pkg)
	if err != nil || len(ref) < 2 || !ref.IsGround() {
		return fmt.Errorf("policies: invalid package %q", pkg)
	}
	return nil
}

// deterministic reports whether no rule calls a non-deterministic builtin:
// then a decision is a function of the input alone and may be memoized.
func deterministic(c *ast.Compiler) bool {
	found := false
	check := func(name string) {
		if b, ok := ast.BuiltinMap[name]; ok && b.Nondeterministic {
			found = true
		}
	}
	for _, m := range c.Modules {
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				check(e.Operator().String())
			}
			return found
		})
		ast.WalkTerms(m, func(t *ast.Term) bool {
			if call, ok := t.Value.(ast.Call); ok && len(call) > 0 {
				check(call[0].String())
			}
			return found
		})
	}
	return !found
}
