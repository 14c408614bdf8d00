package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/duration"
)

// The engine's fast path (input built as AST, results read as AST, its
// own virtual cache and cancel flag) must decide exactly as OPA does with
// its defaults. These tests hold it to the plain path it replaced: input
// through encoding/json, OPA's own caches, and results converted to Go
// values before parsing.

// TestVirtualCacheMatchesOPA replays random operations on both caches.
func TestVirtualCacheMatchesOPA(t *testing.T) {
	terms := []*ast.Term{
		ast.VarTerm("data"), ast.StringTerm("p"), ast.StringTerm("q"), ast.StringTerm("r"),
		ast.IntNumberTerm(1), ast.IntNumberTerm(2), ast.BooleanTerm(true), ast.NullTerm(),
		ast.ArrayTerm(ast.StringTerm("a")), ast.ObjectTerm(ast.Item(ast.StringTerm("k"), ast.IntNumberTerm(1))),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randRef := func() ast.Ref {
		ref := ast.Ref{terms[0]}
		for range rng.IntN(4) {
			ref = append(ref, terms[1+rng.IntN(len(terms)-1)])
		}
		return ref
	}
	values := []*ast.Term{nil, ast.StringTerm("v1"), ast.StringTerm("v2"), ast.BooleanTerm(false)}
	for run := range 200 {
		want := topdown.NewVirtualCache()
		got := newVirtualCache()
		depth := 0
		for step := range 300 {
			ref := randRef()
			switch op := rng.IntN(20); {
			case op == 0:
				want.Push()
				got.Push()
				depth++
			case op == 1 && depth > 0:
				want.Pop()
				got.Pop()
				depth--
			case op < 10:
				v := values[rng.IntN(len(values))]
				want.Put(ref, v)
				got.Put(ref, v)
				// Callers may reuse the ref they passed; the cache must not care.
				ref[0] = ast.VarTerm("input")
			default:
				wv, wu := want.Get(ref)
				gv, gu := got.Get(ref)
				require.True(t, wv == gv && wu == gu, "run %d step %d: Get(%v) = %v, %v; want %v, %v", run, step, ref, gv, gu, wv, wu)
			}
		}
		assert.Equal(t, refStrings(want.Keys()), refStrings(got.Keys()), "run %d", run)
		got.release()
	}
}

func refStrings(refs []ast.Ref) []string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.String()
	}
	slices.Sort(s)
	return s
}

// The parsers the engine had when OPA converted results to Go values; the
// AST parsers must agree with them on every value.
func legacyParseDecision(v any, rule string) (Decision, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s is %s, not an object", ErrInvalid, rule, legacyTypeName(v))
	}
	allow, ok := obj["allow"].(bool)
	if !ok {
		return Decision{}, fmt.Errorf("%w: %s.allow is %s, not a boolean", ErrInvalid, rule, legacyTypeName(obj["allow"]))
	}
	d := Decision{Allow: allow}
	d.Reason, _ = obj["reason"].(string)
	if o := obj["obligations"]; o != nil {
		om, ok := o.(map[string]any)
		if !ok {
			return Decision{}, fmt.Errorf("%w: %s.obligations is %s, not an object", ErrInvalid, rule, legacyTypeName(o))
		}
		if s, present := om["strip_credentials"]; present {
			if d.Obligations.StripCredentials, ok = s.(bool); !ok {
				return Decision{}, fmt.Errorf("%w: %s.obligations.strip_credentials is %s, not a boolean",
					ErrInvalid, rule, legacyTypeName(s))
			}
		}
	}
	if !d.Allow && d.Reason == "" {
		d.Reason = "denied by policy"
	}
	return d, nil
}

func legacyParseVisible(v any, n int, rule string) ([]bool, error) {
	idx, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %s, not a set of item indexes", ErrInvalid, rule, legacyTypeName(v))
	}
	visible := make([]bool, n)
	for _, x := range idx {
		num, ok := x.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%w: %s: entry is %s, not an item index", ErrInvalid, rule, legacyTypeName(x))
		}
		i, err := num.Int64()
		if err != nil || i < 0 || i >= int64(n) {
			return nil, fmt.Errorf("%w: %s: %s is not an index of a %d-item page", ErrInvalid, rule, num, n)
		}
		visible[i] = true
	}
	return visible, nil
}

func legacyTypeName(v any) string {
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

func astResult(t *ast.Term) rego.ResultSet {
	return rego.ResultSet{{Expressions: []*rego.ExpressionValue{{Value: t}}}}
}

func TestParsersMatchJSONForm(t *testing.T) {
	decisions := []string{
		`{"allow": true}`, `{"allow": false}`, `{"allow": true, "reason": "r"}`, `{"allow": false, "reason": ""}`,
		`{"allow": false, "reason": 7}`, `{"allow": "true"}`, `{"allow": null}`, `{"reason": "x"}`, `{}`,
		`true`, `"allow"`, `7`, `null`, `[1]`, `{"allow"}`, `{1: true}`, `{"allow": {"x": 1}}`, `{"allow": {1, 2}}`,
		`{"allow": [true]}`, `{"allow": true, "obligations": null}`, `{"allow": true, "obligations": {}}`,
		`{"allow": true, "obligations": {"strip_credentials": true}}`,
		`{"allow": true, "obligations": {"strip_credentials": false, "other": 1}}`,
		`{"allow": true, "obligations": {"strip_credentials": null}}`,
		`{"allow": true, "obligations": {"strip_credentials": "yes"}}`,
		`{"allow": true, "obligations": {"strip_credentials": {"a"}}}`,
		`{"allow": true, "obligations": true}`, `{"allow": true, "obligations": ["strip_credentials"]}`,
		`{"allow": true, "obligations": {1: true, "strip_credentials": true}}`,
		`{"allow": true, 1: false, ["allow"]: false, {"allow": 1}: 2}`,
	}
	for _, src := range decisions {
		term := ast.MustParseTerm(src)
		js, err := ast.JSON(term.Value)
		require.NoError(t, err, src)
		want, wantErr := legacyParseDecision(js, "data.t.decision")
		got, gotErr := parseDecision(astResult(term), "t")
		assert.Equal(t, want, got, src)
		assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), src)
	}
	visibles := []string{
		`{0, 2}`, `[1]`, `[]`, `set()`, `{0, 7}`, `[0, -1]`, `[1.0]`, `[1.5]`, `["0"]`, `[null]`, `{0, "a", 9, [1]}`,
		`{"a": 0}`, `"all"`, `3`, `true`, `null`, `[2, 1e0]`, `{1, 0, 3, 2, 5}`,
	}
	for _, src := range visibles {
		term := ast.MustParseTerm(src)
		js, err := ast.JSON(term.Value)
		require.NoError(t, err, src)
		want, wantErr := legacyParseVisible(js, 3, "data.t.visible")
		got, gotErr := parseVisible(astResult(term), 3, "t")
		assert.Equal(t, want, got, src)
		assert.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), src)
	}
}

// TestEngineMatchesPlainOPA decides a corpus of policies and inputs both
// ways and expects the same decisions, list filters and errors.
func TestEngineMatchesPlainOPA(t *testing.T) {
	custom := map[string]string{
		"with and functions": `package t
import rego.v1
reader(g) if g in input.principal.groups
ops contains op if some op in ["loadTable", "listTables"]
decision := {"allow": allowed, "reason": concat(",", sort(input.principal.groups)), "obligations": {"strip_credentials": stripped}}
allowed if {
	input.operation in ops
	reader("reader") with input.principal.groups as ["reader"]
	not reader("reader")
}
allowed if "admin" in input.principal.groups
stripped := true if count(input.principal.groups) > 1 else := false
visible contains i if {
	some i, item in input.items
	ok(item.namespace[0]) with input.operation as "x"
}
ok(ns) if startswith(ns, "s")
`,
		"many function calls": `package t
import rego.v1
even(x) if x % 2 == 0
half(x) := x / 2 if even(x)
n := count([y | some x in numbers.range(1, 60); even(x); y := half(x); half(x) == y])
decision := {"allow": n == 30, "reason": sprintf("%d", [n])}
visible contains i if {
	some i, _ in input.items
	even(i)
	even(i) with input.operation as "other"
}
`,
		"else and undefined": `package t
import rego.v1
decision := {"allow": true, "reason": "first"} if {
	input.resource.table == "nope"
} else := {"allow": false} if {
	input.resource.namespace[5] == "x"
} else := {"allow": input.operation == "loadTable", "reason": input.principal.id}
`,
		"conflict": `package t
import rego.v1
decision := {"allow": true} if input.api == "iceberg"
decision := {"allow": false} if input.operation == "loadTable"
visible := {0} if input.api == "iceberg"
visible := {1} if input.operation == "listTables"
`,
		"builtin error": `package t
import rego.v1
decision := {"allow": to_number(input.operation) > 0}
`,
		"malformed": `package t
import rego.v1
decision := {"allow": true, "obligations": {"strip_credentials": input.principal.id}} if input.principal.id != ""
decision := {"allow": "yes"} if input.principal.id == ""
visible := {j | some i, _ in input.items; j := i + 5}
`,
		"claims": `package t
import rego.v1
decision := {"allow": input.principal.claims.level >= 2, "reason": json.marshal(input.principal.claims)}
visible contains i if {
	some i, _ in input.items
	input.principal.claims.tags[_] == "x"
}
`,
	}
	type target struct{ name, dir, pkg string }
	var targets []target
	for _, pkg := range []string{"lakegate.roles", "lakegate.demo", "lakegate.no_vended_credentials", "lakegate.allow_all"} {
		targets = append(targets, target{pkg, ".", pkg})
	}
	for name, src := range custom {
		targets = append(targets, target{name, policyDir(t, src), "t"})
	}
	inputs := []Input{
		request("u", []string{"admin"}, "loadTable", "sales"),
		request("u", []string{"reader:sales", "staff"}, "listTables", "sales", "eu"),
		request("u", []string{"writer:finance"}, "dropTable", "finance"),
		request("", nil, "getConfig"),
		request("c", []string{"contractors", "reader"}, "loadCredentials", "protected"),
		request("v", []string{"writer"}, "createView", "ops"),
		request("a", []string{"anonymous"}, "dropNamespace", "protected"),
	}
	inputs[1].Items = page("sales", "hr", "sales.eu", "ops")
	inputs[2].Items = page("finance")
	inputs[3].Principal.Claims = map[string]any{"level": 2.0, "tags": []any{"x", "y"}}
	inputs[4].Principal.Claims = map[string]any{"level": 1.0}
	inputs[4].Items = page("a", "b", "c")
	inputs[5].Request.AccessDelegation = []string{"vended-credentials"}

	ctx := context.Background()
	for _, tg := range targets {
		name, dir, pkg := tg.name, tg.dir, tg.pkg
		// Unchecked: the corpus holds policies the load check refuses.
		e, err := open(ctx, Config{Dir: dir, Package: pkg, Timeout: duration.Duration(slowMachine), ReloadInterval: -1}, zap.NewNop(), false)
		require.NoError(t, err, name)
		plainDecision, plainVisible := plainQueries(t, dir, pkg)
		for i, in := range inputs {
			doc := plainInput(t, in)
			label := fmt.Sprintf("%s input %d", name, i)

			want, wantErr := plainDecide(ctx, plainDecision, doc, pkg)
			got, gotErr := e.Decide(ctx, in)
			assert.Equal(t, want, got, label)
			assert.Equal(t, errText(wantErr), errText(gotErr), label)

			if plainVisible == nil || len(in.Items) == 0 {
				continue
			}
			wantVis, wantErr := plainFilter(ctx, *plainVisible, doc, len(in.Items), pkg)
			gotVis, gotErr := e.Filter(ctx, in)
			if wantErr != nil {
				wantVis = make([]bool, len(in.Items))
			}
			assert.Equal(t, wantVis, gotVis, label)
			assert.Equal(t, errText(wantErr), errText(gotErr), label)
		}
		require.NoError(t, e.Close())
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// plainQueries prepares the package's queries with OPA's defaults.
func plainQueries(t *testing.T, dir, pkg string) (rego.PreparedEvalQuery, *rego.PreparedEvalQuery) {
	files, err := policyFiles(dir)
	require.NoError(t, err)
	modules, err := parseFiles(files)
	require.NoError(t, err)
	c := ast.NewCompiler()
	c.Compile(modules)
	require.False(t, c.Failed(), "%v", c.Errors)
	prep := func(rule string) rego.PreparedEvalQuery {
		pq, err := rego.New(rego.Query("data."+pkg+"."+rule), rego.Compiler(c)).PrepareForEval(context.Background())
		require.NoError(t, err)
		return pq
	}
	decision := prep("decision")
	if !hasRule(c, pkg, "visible") {
		return decision, nil
	}
	visible := prep("visible")
	return decision, &visible
}

// plainInput is the input document by way of encoding/json, with nil
// slices as [] (the documented difference from Input's JSON form).
func plainInput(t *testing.T, in Input) any {
	for _, ss := range []*[]string{&in.Principal.Groups, &in.Request.AccessDelegation} {
		if *ss == nil {
			*ss = []string{}
		}
	}
	items := slices.Clone(in.Items)
	for i := range items {
		if items[i].Namespace == nil {
			items[i].Namespace = []string{}
		}
	}
	in.Items = items
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	return doc
}

func plainEval(ctx context.Context, pq rego.PreparedEvalQuery, doc any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, slowMachine)
	defer cancel()
	rs, err := pq.Eval(ctx, rego.EvalInput(doc))
	if err != nil {
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, nil
	}
	return rs[0].Expressions[0].Value, nil
}

func plainDecide(ctx context.Context, pq rego.PreparedEvalQuery, doc any, pkg string) (Decision, error) {
	rule := "data." + pkg + ".decision"
	v, err := plainEval(ctx, pq, doc)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: no %s for this input", ErrUndefined, rule)
	}
	if err != nil {
		return (&Engine{}).deny(err)
	}
	d, err := legacyParseDecision(v, rule)
	if err != nil {
		return (&Engine{}).deny(err)
	}
	return d, nil
}

func plainFilter(ctx context.Context, pq rego.PreparedEvalQuery, doc any, n int, pkg string) ([]bool, error) {
	rule := "data." + pkg + ".visible"
	v, err := plainEval(ctx, pq, doc)
	if err == nil && v == nil {
		err = fmt.Errorf("%w: no %s for this input", ErrUndefined, rule)
	}
	if err != nil {
		return nil, err
	}
	return legacyParseVisible(v, n, rule)
}

// Strict builtin errors stay off, as before: a failing builtin makes its
// expression undefined rather than failing the evaluation.
func TestBuiltinErrorsStayUndefined(t *testing.T) {
	src := "package t\n\ndecision := {\"allow\": to_number(input.operation) > 0}\n"
	e, err := New(context.Background(), Config{Dir: policyDir(t, src), Package: "t", ReloadInterval: -1}, zap.NewNop())
	require.NoError(t, err)
	defer e.Close()
	_, err = e.Decide(context.Background(), request("u", nil, "loadTable"))
	assert.ErrorIs(t, err, ErrUndefined, "a builtin error is undefined, as strict builtin errors are off")
	assert.True(t, strings.Contains(err.Error(), "no data.t.decision"))
}

// TestMemoKeyFollowsDocument: two inputs share a memo key exactly when
// policies see the same document, over inputs drawn from a few short
// strings so that both equal and nearly equal documents come up often.
func TestMemoKeyFollowsDocument(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Mostly empty, so that inputs often differ in one field only.
	strs := []string{"", "", "", "", "", "", "", "", "a", "b", "ab"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	list := func() []string {
		switch rng.IntN(8) {
		case 0, 1, 2:
			return nil
		case 3, 4, 5:
			return []string{}
		default:
			ss := make([]string, 1+rng.IntN(2))
			for i := range ss {
				ss[i] = str()
			}
			return ss
		}
	}
	random := func() Input {
		in := Input{
			Principal: Principal{ID: str(), Groups: list()},
			Operation: str(), API: str(), APIOperation: str(),
			Resource: Resource{Catalog: str(), Backend: str(), Namespace: list(), Table: str(), View: str(),
				Location: str(), Share: str(), ShareSchema: str(), ShareTable: str()},
			Request: Request{Method: str(), Path: str(), AccessDelegation: list(), HasIdempotencyKey: rng.IntN(2) == 0},
			Context: Context{Time: str(), ClientIP: str()},
		}
		if rng.IntN(8) == 0 {
			in.Principal.Claims = map[string]any{"k": str()}
		}
		for range rng.IntN(3) / 2 {
			in.Items = append(in.Items, Item{Namespace: list(), Table: str(), View: str()})
		}
		return in
	}
	set := &policySet{memo: tinyMemo(t)}
	keyOf := map[string][32]byte{} // by the document's text, canonical (keys sorted)
	docOf := map[[32]byte]string{}
	repeats := 0
	for range 20000 {
		in := random()
		key, ok := memoKey(set, &in)
		require.True(t, ok)
		v, err := in.value()
		require.NoError(t, err)
		doc := v.String()
		if k, seen := keyOf[doc]; seen {
			require.Equal(t, k, key, "one document, two keys: %s", doc)
			repeats++
		}
		if d, seen := docOf[key]; seen {
			require.Equal(t, d, doc, "one key, two documents")
		}
		keyOf[doc], docOf[key] = key, doc
	}
	assert.Greater(t, repeats, 100, "the sample should hold many equal documents")
}

func tinyMemo(t *testing.T) *lru.Cache[[32]byte, Decision] {
	m, err := lru.New[[32]byte, Decision](1)
	require.NoError(t, err)
	return m
}

// TestMemoKeyCoversEveryField: setting any field of Input, at any depth,
// changes the memo key. A field added to Input (and so, by the contract,
// to the document) but not to appendKey would let two different
// documents share remembered decisions.
func TestMemoKeyCoversEveryField(t *testing.T) {
	set := &policySet{memo: tinyMemo(t)}
	base := Input{Items: []Item{{}}}
	baseKey, ok := memoKey(set, &base)
	require.True(t, ok)
	var visit func(path string, v reflect.Value)
	visit = func(path string, v reflect.Value) {
		for i := range v.NumField() {
			f, name := v.Field(i), path+"."+v.Type().Field(i).Name
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			switch f.Kind() {
			case reflect.Struct:
				visit(name, f)
				continue
			case reflect.String:
				f.SetString("x")
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Slice:
				if f.Type().Elem().Kind() == reflect.Struct {
					visit(name+"[0]", f.Index(0)) // base has one zero item
					f.Set(reflect.MakeSlice(f.Type(), 2, 2))
				} else {
					f.Set(reflect.ValueOf([]string{"x"}))
				}
			case reflect.Map:
				f.Set(reflect.ValueOf(map[string]any{"x": "y"}))
			default:
				t.Fatalf("%s: no test value for a %s", name, f.Kind())
			}
			key, ok := memoKey(set, &base)
			require.True(t, ok, name)
			assert.NotEqual(t, baseKey, key, "%s is not part of the memo key", name)
			f.Set(old)
		}
	}
	visit("Input", reflect.ValueOf(&base).Elem())
	key, _ := memoKey(set, &base)
	require.Equal(t, baseKey, key, "the walk restored every field")
}
