package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/lakegate/lakegate/duration"
)

const msgReloadFailed = "policy reload failed; keeping the previous policy"

func observed(level zapcore.Level) (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(level)
	return zap.New(core), logs
}

// slowMachine is the evaluation timeout of tests that are not about
// timeouts: CI machines (2 shared cores, -race) can stall an evaluation
// past the 100ms default, which would fail closed and flake the test.
const slowMachine = 10 * time.Second

// newEngine builds an engine over the repository's policies (the test's
// working directory) without the reloader.
func newEngine(t testing.TB, pkg string) *Engine {
	t.Helper()
	cfg := Config{Dir: ".", Package: pkg, Timeout: duration.Duration(slowMachine), ReloadInterval: -1}
	e, err := New(context.Background(), cfg, zap.NewNop())
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// writePolicy replaces a file atomically so the poller never reads a
// half-written file (which would log a spurious parse error).
func writePolicy(t testing.TB, dir, name, src string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(src), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
}

func policyDir(t testing.TB, src string) string {
	t.Helper()
	dir := t.TempDir()
	writePolicy(t, dir, "policy.rego", src)
	return dir
}

func request(id string, groups []string, op string, ns ...string) Input {
	return Input{
		Principal:    Principal{ID: id, Groups: groups},
		Operation:    op,
		API:          "iceberg",
		APIOperation: op,
		Resource:     Resource{Catalog: "main", Backend: "embedded", Namespace: ns, Table: "orders"},
		Request:      Request{Method: "GET", Path: "/v1/main/namespaces/sales/tables/orders"},
		Context:      Context{Time: "2025-01-02T03:04:05Z", ClientIP: "127.0.0.1"},
	}
}

func TestRolesDecisions(t *testing.T) {
	e := newEngine(t, "lakegate.roles")
	principals := map[string][]string{
		"admin":       {"admin"},
		"writer":      {"writer"},
		"reader":      {"staff", "reader"},
		"salesReader": {"reader:sales"},
		"salesWriter": {"writer:sales"},
		"nobody":      {"staff"},
		"anonymous":   nil,
	}
	type op struct {
		name string
		ns   []string
	}
	ops := []op{
		{"getConfig", nil},
		{"listNamespaces", nil},
		{"loadTable", []string{"sales"}},
		{"planTableScan", []string{"sales", "eu"}},
		{"updateTable", []string{"sales"}},
		{"createNamespace", []string{"sales", "new"}},
		{"loadCredentials", []string{"sales"}},
		{"createView", []string{"sales"}},
		{"renameTable", []string{"sales"}},
		{"loadTable", []string{"finance"}},
		{"dropTable", []string{"finance"}},
	}
	// allowed[principal] lists the indexes into ops that must be allowed;
	// every other pair must be denied.
	allowed := map[string][]int{
		"admin":       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		"writer":      {0, 1, 2, 3, 4, 5, 6, 8, 9, 10},
		"reader":      {0, 1, 2, 3, 9},
		"salesReader": {0, 1, 2, 3},
		"salesWriter": {0, 1, 2, 3, 4, 5, 6, 8},
		"nobody":      {},
		"anonymous":   {},
	}
	ctx := context.Background()
	for who, groups := range principals {
		for i, o := range ops {
			t.Run(fmt.Sprintf("%s/%s%v", who, o.name, o.ns), func(t *testing.T) {
				d, err := e.Decide(ctx, request(who, groups, o.name, o.ns...))
				require.NoError(t, err)
				want := contains(allowed[who], i)
				assert.Equal(t, want, d.Allow, "reason: %s", d.Reason)
				assert.NotEmpty(t, d.Reason)
			})
		}
	}
	n, yes := int64(len(principals)*len(ops)), int64(0)
	for _, idx := range allowed {
		yes += int64(len(idx))
	}
	assert.Equal(t, Stats{Decisions: n, Allowed: yes, Denied: n - yes}, e.Stats())
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func TestRolesReasons(t *testing.T) {
	e := newEngine(t, "lakegate.roles")
	cases := []struct {
		in   Input
		want string
	}{
		{request("r", []string{"reader"}, "updateTable", "sales"), "reader may not updateTable"},
		{request("r", []string{"reader"}, "loadCredentials", "sales"),
			"reader may not loadCredentials: readers never receive vended credentials"},
		{request("w", []string{"writer"}, "dropView", "sales"), "writer may not dropView: view changes need admin"},
		{request("eve", nil, "loadTable", "sales"), `principal "eve" has no lakegate role`},
		{request("s", []string{"reader:sales"}, "loadTable", "finance"), `principal "s" has no role on namespace "finance"`},
	}
	for _, c := range cases {
		d, err := e.Decide(context.Background(), c.in)
		require.NoError(t, err)
		assert.False(t, d.Allow)
		assert.Equal(t, c.want, d.Reason)
	}
}

func TestObligations(t *testing.T) {
	ctx := context.Background()
	roles := newEngine(t, "lakegate.roles")
	strip := func(e *Engine, groups ...string) bool {
		d, err := e.Decide(ctx, request("u", groups, "loadTable", "sales"))
		require.NoError(t, err)
		require.True(t, d.Allow, d.Reason)
		return d.Obligations.StripCredentials
	}
	assert.True(t, strip(roles, "reader"))
	assert.True(t, strip(roles, "reader:sales"))
	assert.False(t, strip(roles, "writer"))
	assert.False(t, strip(roles, "reader", "writer:sales"), "writer on the namespace outranks global reader")
	assert.False(t, strip(roles, "admin"))

	nvc := newEngine(t, "lakegate.no_vended_credentials")
	assert.True(t, strip(nvc, "contractors"))
	assert.False(t, strip(nvc, "staff"))
	d, err := nvc.Decide(ctx, request("c", []string{"contractors"}, "loadCredentials", "sales"))
	require.NoError(t, err)
	assert.False(t, d.Allow)

	all := newEngine(t, "lakegate.allow_all")
	assert.False(t, strip(all))
}

func TestDemoPolicy(t *testing.T) {
	e := newEngine(t, "lakegate.demo")
	ctx := context.Background()
	anon := request("anonymous", nil, "dropTable", "db")
	d, err := e.Decide(ctx, anon)
	require.NoError(t, err)
	assert.True(t, d.Allow)

	anon.Resource.Table = "protected"
	d, err = e.Decide(ctx, anon)
	require.NoError(t, err)
	assert.False(t, d.Allow)
	assert.Contains(t, d.Reason, "protected")
}

func page(namespaces ...string) []Item {
	items := make([]Item, len(namespaces))
	for i, ns := range namespaces {
		items[i] = Item{Namespace: strings.Split(ns, "."), Table: fmt.Sprintf("t%d", i)}
	}
	return items
}

func TestFilter(t *testing.T) {
	e := newEngine(t, "lakegate.roles")
	ctx := context.Background()
	in := request("u", []string{"reader:sales"}, "listTables")
	in.Items = page("sales", "finance", "sales.eu", "hr", "salesish")
	got, err := e.Filter(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true, false, false}, got)

	in.Principal.Groups = []string{"reader"}
	got, err = e.Filter(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true, true}, got)

	in.Principal.Groups = []string{"staff"}
	got, err = e.Filter(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, make([]bool, 5), got)

	in.Items = nil
	got, err = e.Filter(ctx, in)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestFilterFailsClosed(t *testing.T) {
	cases := map[string]struct {
		src  string
		want error
	}{
		"no visible rule": {`package t
decision := {"allow": true}`, ErrUndefined},
		"visible undefined": {`package t
decision := {"allow": true}
visible := {0} if input.operation == "nope"`, ErrUndefined},
		"index out of range": {`package t
decision := {"allow": true}
visible := {0, 7}`, ErrInvalid},
		"not a set": {`package t
decision := {"allow": true}
visible := "all"`, ErrInvalid},
		"array of indexes works": {`package t
decision := {"allow": true}
visible := [1]`, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := New(context.Background(), Config{Dir: policyDir(t, c.src), Package: "t", ReloadInterval: -1}, zap.NewNop())
			require.NoError(t, err)
			defer e.Close()
			in := request("u", nil, "listTables")
			in.Items = page("a", "b")
			got, err := e.Filter(context.Background(), in)
			if c.want == nil {
				require.NoError(t, err)
				assert.Equal(t, []bool{false, true}, got)
				return
			}
			assert.ErrorIs(t, err, c.want)
			assert.Equal(t, []bool{false, false}, got, "fail closed: all hidden")
			assert.Equal(t, int64(1), e.Stats().Errors)
		})
	}
}

// TestFailClosed covers the ways a policy can fail to produce a decision.
// The engine skips the load check (TestLoadCheck), which would refuse
// most of these: an input the check does not try can fail the same ways.
func TestFailClosed(t *testing.T) {
	cases := map[string]struct {
		src     string
		timeout time.Duration
		want    error
		reason  string
	}{
		"timeout": {`package t
slow if {
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i + j < 0
}
decision := {"allow": true} if not slow`, 50 * time.Millisecond, ErrTimeout, "policy evaluation timed out after 50ms"},
		"allow is a string": {`package t
decision := {"allow": "true"}`, 0, ErrInvalid, "policy result is malformed: data.t.decision.allow is a string, not a boolean"},
		"allow missing": {`package t
decision := {"reason": "forgot"}`, 0, ErrInvalid, "policy result is malformed: data.t.decision.allow is null or missing, not a boolean"},
		"decision not an object": {`package t
decision := true`, 0, ErrInvalid, "policy result is malformed: data.t.decision is a boolean, not an object"},
		"obligation malformed": {`package t
decision := {"allow": true, "obligations": {"strip_credentials": "yes"}}`, 0, ErrInvalid,
			"policy result is malformed: data.t.decision.obligations.strip_credentials is a string, not a boolean"},
		"undefined for this input": {`package t
decision := {"allow": true} if input.operation == "getConfig"`, 0, ErrUndefined,
			"policy result is undefined: no data.t.decision for this input"},
		"evaluation error": {`package t
decision := {"allow": true} if input.api == "iceberg"
decision := {"allow": false} if input.operation == "loadTable"`, 0, nil, "policy evaluation failed (eval_conflict_error)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			log, logs := observed(zap.InfoLevel)
			cfg := Config{Dir: policyDir(t, c.src), Package: "t", Timeout: duration.Duration(c.timeout), ReloadInterval: -1}
			e, err := open(context.Background(), cfg, log, false)
			require.NoError(t, err)
			defer e.Close()

			start := time.Now()
			d, err := e.Decide(context.Background(), request("u", []string{"admin"}, "loadTable", "sales"))
			require.Error(t, err)
			if c.want != nil {
				assert.ErrorIs(t, err, c.want)
			}
			assert.Equal(t, Decision{Allow: false, Reason: c.reason}, d)
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Equal(t, Stats{Decisions: 1, Denied: 1, Errors: 1}, e.Stats())

			failures := logs.FilterMessage("policy decision failed; denying").All()
			require.Len(t, failures, 1)
			fields := failures[0].ContextMap()
			assert.Equal(t, "loadTable", fields["operation"])
			assert.Equal(t, "u", fields["principal"])
			assert.Equal(t, c.reason, fields["reason"])
			assert.NotEmpty(t, fields["error"])
		})
	}
}

func TestCancelledContextDenies(t *testing.T) {
	e := newEngine(t, "lakegate.roles")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := e.Decide(ctx, request("u", []string{"admin"}, "loadTable", "sales"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Decision{Reason: "request cancelled during policy evaluation"}, d)
}

func TestNewFailsOnBrokenDir(t *testing.T) {
	ctx := context.Background()
	broken := policyDir(t, "package t\n\ndecision := {\"allow\": true\n")
	onlyTests := t.TempDir()
	writePolicy(t, onlyTests, "t_test.rego", "package t_test\n\ntest_x := true\n")
	cases := map[string]Config{
		"syntax error":      {Dir: broken, Package: "t"},
		"compile error":     {Dir: policyDir(t, "package t\n\ndecision := {\"allow\": nosuch(1)}\n"), Package: "t"},
		"missing dir":       {Dir: filepath.Join(t.TempDir(), "nope"), Package: "t"},
		"empty dir":         {Dir: t.TempDir(), Package: "t"},
		"only test files":   {Dir: onlyTests, Package: "t"},
		"wrong package":     {Dir: ".", Package: "lakegate.nope"},
		"no package":        {Dir: "."},
		"malformed package": {Dir: ".", Package: "lakegate..roles"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := New(ctx, cfg, zap.NewNop())
			assert.Error(t, err)
			assert.Nil(t, e)
		})
	}
}

// TestLoadCheck: a policy that parses and compiles but fails when
// evaluated on ordinary requests (getConfig, loadTable, updateTable) would
// deny everything, so it is refused at load, naming the request and the
// error; a policy that merely leaves them undefined (a deny) loads.
// TestReloadFailClosed shows a reload to one keeps the previous policy.
func TestLoadCheck(t *testing.T) {
	refused := map[string]struct{ src, errText string }{
		"conflict": {`package t
decision := {"allow": true}
decision := {"allow": false} if input.api == "iceberg"`, "fails on a getConfig request: policy evaluation: "},
		"conflict in a helper rule": {`package t
level := 1 if input.principal.id != ""
level := 2 if input.context.time != ""
decision := {"allow": level > 1}`, "eval_conflict_error"},
		"conflict on a write only": {`package t
decision := {"allow": false}
decision := {"allow": true} if input.request.method == "POST"`, "fails on a updateTable request"},
		"malformed decision": {`package t
decision := {"allow": "yes"}`, "data.t.decision.allow is a string, not a boolean"},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			e, err := New(context.Background(), Config{Dir: policyDir(t, c.src), Package: "t", ReloadInterval: -1}, zap.NewNop())
			require.Error(t, err)
			assert.Nil(t, e)
			assert.Contains(t, err.Error(), "policies: data.t.decision fails on a ")
			assert.Contains(t, err.Error(), c.errText)
		})
	}
	undefined := `package t
decision := {"allow": true} if "admin" in input.principal.groups`
	e, err := New(context.Background(), Config{Dir: policyDir(t, undefined), Package: "t", ReloadInterval: -1}, zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, e.Close())
}

// TestReloadFailClosed: a broken edit keeps the old policy deciding and is
// logged; the fixed file then takes over.
func TestReloadFailClosed(t *testing.T) {
	ctx := context.Background()
	dir := policyDir(t, "package t\n\ndecision := {\"allow\": true, \"reason\": \"v1\"}\n")
	log, logs := observed(zap.InfoLevel)
	e, err := New(ctx, Config{Dir: dir, Package: "t", ReloadInterval: duration.Duration(5 * time.Millisecond)}, log)
	require.NoError(t, err)
	defer e.Close()
	reason := func() string {
		d, err := e.Decide(ctx, request("u", nil, "loadTable", "sales"))
		require.NoError(t, err)
		return d.Reason
	}
	require.Equal(t, "v1", reason())

	steps := []struct{ src, errText string }{
		{"package t\n\ndecision := {\"allow\": true\n", "rego_parse_error"},
		{"package t\n\ndecision := {\"allow\": nosuch(1)}\n", "rego_type_error"},
		// Same size as the previous step, possibly within the same mtime
		// tick: the atomic rename still shows as a change.
		{"package other\n\ndecision := {\"allow\": false}\n", "no rule data.t.decision"},
		// Parses and compiles, but fails at evaluation (TestLoadCheck).
		{"package t\n\ndecision := {\"allow\": true}\ndecision := {\"allow\": false} if input.operation == \"loadTable\"\n",
			"eval_conflict_error"},
	}
	for i, s := range steps {
		writePolicy(t, dir, "policy.rego", s.src)
		require.Eventually(t, func() bool { return logs.FilterMessage(msgReloadFailed).Len() == i+1 },
			5*time.Second, 5*time.Millisecond, "step %d not logged", i)
		entry := logs.FilterMessage(msgReloadFailed).All()[i]
		assert.Equal(t, zapcore.ErrorLevel, entry.Level)
		assert.Contains(t, entry.ContextMap()["error"], s.errText)
		assert.Equal(t, "v1", reason(), "old policy keeps deciding after step %d", i)
	}

	writePolicy(t, dir, "policy.rego", "package t\n\ndecision := {\"allow\": false, \"reason\": \"v2\"}\n")
	require.Eventually(t, func() bool { return reason() == "v2" }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, logs.FilterMessage("policies reloaded").Len())
	assert.Equal(t, len(steps), logs.FilterMessage(msgReloadFailed).Len(), "a broken file is reported once, not every poll")

	// Rego unit tests next to a policy are not part of it.
	writePolicy(t, dir, "policy_test.rego", "package t_test\n\nthis is not rego\n")
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, len(steps), logs.FilterMessage(msgReloadFailed).Len())
	assert.Equal(t, "v2", reason())
}

// TestReloadFollowsSymlinks mimics a Kubernetes ConfigMap update: the
// policy file is a symlink whose target is swapped; the link itself keeps
// its name, size and mtime.
func TestReloadFollowsSymlinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, v), 0o755))
		src := fmt.Sprintf("package t\n\ndecision := {\"allow\": true, \"reason\": %q}\n", v)
		writePolicy(t, filepath.Join(dir, v), "policy.rego", src)
	}
	link := func(v string) {
		tmp := filepath.Join(dir, ".link")
		require.NoError(t, os.Symlink(filepath.Join(v, "policy.rego"), tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "policy.rego")))
	}
	link("v1")
	e, err := New(ctx, Config{Dir: dir, Package: "t", ReloadInterval: duration.Duration(5 * time.Millisecond)}, zap.NewNop())
	require.NoError(t, err)
	defer e.Close()
	reason := func() string {
		d, err := e.Decide(ctx, request("u", nil, "getConfig"))
		require.NoError(t, err)
		return d.Reason
	}
	require.Equal(t, "v1", reason())
	link("v2")
	require.Eventually(t, func() bool { return reason() == "v2" }, 5*time.Second, 5*time.Millisecond)
}

func TestLogsNoClaimsAndDebugDecisions(t *testing.T) {
	log, logs := observed(zap.DebugLevel)
	e, err := New(context.Background(), Config{Dir: ".", Package: "lakegate.roles", Timeout: duration.Duration(slowMachine), ReloadInterval: -1}, log)
	require.NoError(t, err)
	defer e.Close()
	in := request("alice", []string{"reader"}, "updateTable", "sales")
	in.Principal.Claims = map[string]any{"email": "alice@example.com", "token": "s3cr3t"}
	_, err = e.Decide(context.Background(), in)
	require.NoError(t, err)

	entries := logs.FilterMessage("policy decision").All()
	require.Len(t, entries, 1)
	f := entries[0].ContextMap()
	assert.Equal(t, "updateTable", f["operation"])
	assert.Equal(t, "alice", f["principal"])
	assert.Equal(t, false, f["allow"])
	assert.Equal(t, "reader may not updateTable", f["reason"])
	assert.Equal(t, map[string]any{"catalog": "main", "backend": "embedded",
		"namespace": []any{"sales"}, "table": "orders"}, f["resource"])
	for _, entry := range logs.All() {
		for k, v := range entry.ContextMap() {
			s := fmt.Sprint(v)
			assert.NotContains(t, s, "s3cr3t", "field %s", k)
			assert.NotContains(t, s, "alice@example.com", "field %s", k)
		}
	}
}

// TestInputDocument pins the document policies see to the JSON encoding
// of Input (the contract), apart from nil slices, which become [].
func TestInputDocument(t *testing.T) {
	in := request("u", []string{"g"}, "loadTable", "a", "b")
	in.Principal.Claims = map[string]any{"n": 1.5, "l": []any{"x", true}, "o": map[string]any{"k": nil}}
	in.Request.AccessDelegation = []string{"vended-credentials"}
	in.Request.HasIdempotencyKey = true
	in.Items = []Item{{Namespace: []string{"a"}, View: "v"}, {Namespace: []string{}}}
	assertDocument(t, in)
	in.API, in.APIOperation = "sharing", "queryTable"
	in.Resource.Share, in.Resource.ShareSchema, in.Resource.ShareTable = "s", "c", "t"
	assertDocument(t, in)

	empty := Input{Items: nil}
	got, err := empty.value()
	require.NoError(t, err)
	want := ast.MustParseTerm(`{"principal": {"id": "", "groups": []}, "operation": "", "api": "",
		"api_operation": "", "resource": {}, "context": {"time": "", "client_ip": ""},
		"request": {"method": "", "path": "", "access_delegation": [], "has_idempotency_key": false}}`)
	assert.Equal(t, 0, want.Value.Compare(got), "got %v", got)
}

func assertDocument(t *testing.T, in Input) {
	t.Helper()
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	want, err := ast.InterfaceToValue(doc)
	require.NoError(t, err)
	got, err := in.value()
	require.NoError(t, err)
	assert.Equal(t, 0, want.Compare(got), "\nwant %v\n got %v", want, got)
}

// TestConcurrentDecideDuringReload: deciders never see an error or a torn
// policy while the directory flips between versions, some of them broken.
// The policies are small so that compiles, starved by eight busy deciders
// on two cores, stay quick.
func TestConcurrentDecideDuringReload(t *testing.T) {
	version := func(v string) string {
		return fmt.Sprintf("package t\n\ndecision := {\"allow\": true, \"reason\": %q}\n\nvisible contains 0\n", v)
	}
	versions := []string{version("v2"), "package t\n\ndecision := {", version("v1")}
	dir := policyDir(t, version("v1"))
	cfg := Config{Dir: dir, Package: "t", Timeout: duration.Duration(slowMachine), ReloadInterval: duration.Duration(time.Millisecond)}
	log, logs := observed(zap.InfoLevel)
	e, err := New(context.Background(), cfg, log)
	require.NoError(t, err)
	defer e.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := request(fmt.Sprintf("g%d", g), []string{"reader"}, "listTables", "sales")
			in.Items = page("sales", "finance")
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := decideAndFilter(e, in); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		writePolicy(t, dir, "policy.rego", versions[i%len(versions)])
		_ = e.reload(context.Background()) // alongside the poller's own reloads
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Positive(t, e.Stats().Decisions)
	assert.Zero(t, e.Stats().Errors)
	assert.GreaterOrEqual(t, logs.FilterMessage("policies reloaded").Len(), 13, "good versions swapped in")
	assert.GreaterOrEqual(t, logs.FilterMessage(msgReloadFailed).Len(), 6, "broken versions rejected")
}

func decideAndFilter(e *Engine, in Input) error {
	d, err := e.Decide(context.Background(), in)
	if err != nil {
		return err
	}
	if !d.Allow || (d.Reason != "v1" && d.Reason != "v2") {
		return fmt.Errorf("unexpected decision %+v", d)
	}
	vis, err := e.Filter(context.Background(), in)
	if err != nil {
		return err
	}
	if !vis[0] || vis[1] {
		return fmt.Errorf("unexpected visible %v", vis)
	}
	return nil
}

func TestCloseStopsReloader(t *testing.T) {
	dir := policyDir(t, "package t\n\ndecision := {\"allow\": true, \"reason\": \"v1\"}\n")
	e, err := New(context.Background(), Config{Dir: dir, Package: "t", ReloadInterval: duration.Duration(time.Millisecond)}, zap.NewNop())
	require.NoError(t, err)
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "Close is idempotent")
	writePolicy(t, dir, "policy.rego", "package t\n\ndecision := {\"allow\": true, \"reason\": \"v2\"}\n")
	time.Sleep(20 * time.Millisecond)
	d, err := e.Decide(context.Background(), request("u", nil, "getConfig"))
	require.NoError(t, err)
	assert.Equal(t, "v1", d.Reason, "no reloads after Close; deciding still works")
}
