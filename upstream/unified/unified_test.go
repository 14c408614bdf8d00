package unified

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

func levels(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// The longest prefix wins; `as` renames the prefix, and the rest of the
// namespace follows it; no rule and no default is a 404.
func TestRouting(t *testing.T) {
	cfg := Config{Routes: []Rule{
		{Namespace: levels("sales"), Catalog: "prod"},
		{Namespace: levels("sales.eu"), Catalog: "prod-eu", As: levels("eu")},
		{Namespace: levels("ml"), Catalog: "nessie"},
		{Namespace: levels("ml.deep.er"), Catalog: "lake", As: levels("x.y")},
	}, Default: "main"}
	withoutDefault := cfg
	withoutDefault.Default = ""
	for _, tc := range []struct {
		cfg            Config
		ns             string
		member, memNS  string
		noSuchNamespce bool
	}{
		{cfg, "sales", "prod", "sales", false},
		{cfg, "sales.us", "prod", "sales.us", false},
		{cfg, "sales.eu", "prod-eu", "eu", false},
		{cfg, "sales.eu.de.q1", "prod-eu", "eu.de.q1", false},
		{cfg, "salesx", "main", "salesx", false},
		{cfg, "ml.deep", "nessie", "ml.deep", false},
		{cfg, "ml.deep.er.z", "lake", "x.y.z", false},
		{cfg, "other.thing", "main", "other.thing", false},
		{withoutDefault, "other", "", "", true},
		{withoutDefault, "sales.eu.x", "prod-eu", "eu.x", false},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			rt, err := compile(tc.cfg)
			require.NoError(t, err)
			m, ok := rt.route(levels(tc.ns))
			if tc.noSuchNamespce {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.member, m.member)
			assert.Equal(t, levels(tc.memNS), m.toMember(levels(tc.ns)))
			back, ok := rt.toVirtual(tc.member, levels(tc.memNS))
			require.True(t, ok, "the member's name maps back")
			assert.Equal(t, levels(tc.ns), back)
		})
	}

	rt, err := compile(cfg)
	require.NoError(t, err)
	// The member's namespaces a longer rule shadows, or no rule reaches,
	// have no unified name.
	for _, c := range []struct{ member, ns string }{
		{"prod", "sales.eu"}, // sales.eu is prod-eu's
		{"nessie", "ml.deep.er"},
		{"prod-eu", "us"},
		{"main", "sales"},
		{"lake", "x"},
	} {
		_, ok := rt.toVirtual(c.member, levels(c.ns))
		assert.False(t, ok, "%s in %s", c.ns, c.member)
	}
}

func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"empty", Config{}, "needs routes, a default member, or both"},
		{"no catalog", Config{Routes: []Rule{{Namespace: levels("a")}}}, "no member catalog"},
		{"no namespace", Config{Routes: []Rule{{Catalog: "m"}}}, "no namespace"},
		{"empty level", Config{Routes: []Rule{{Namespace: []string{"a", ""}, Catalog: "m"}}}, "empty namespace level"},
		{"empty as level", Config{Routes: []Rule{{Namespace: levels("a"), As: []string{""}, Catalog: "m"}}}, "empty namespace level"},
		{"empty as", Config{Routes: []Rule{{Namespace: levels("a"), As: []string{}, Catalog: "m"}}}, "as names no namespace"},
		{"control character", Config{Routes: []Rule{{Namespace: []string{"a\x00"}, Catalog: "m"}}}, "control character"},
		{"dot dot", Config{Routes: []Rule{{Namespace: []string{".."}, Catalog: "m"}}}, "is not allowed"},
		{"twice", Config{Routes: []Rule{{Namespace: levels("a.b"), Catalog: "m"}, {Namespace: levels("a.b"), Catalog: "n"}}}, "configured twice"},
		{"two names for one member namespace", Config{Routes: []Rule{
			{Namespace: levels("a"), Catalog: "m", As: levels("x")},
			{Namespace: levels("b"), Catalog: "m", As: levels("x")},
		}}, "under different names"},
		{"renamed into the default's names", Config{Routes: []Rule{
			{Namespace: levels("a"), Catalog: "m", As: levels("x")},
		}, Default: "m"}, "under different names"},
		{"nested inconsistently", Config{Routes: []Rule{
			{Namespace: levels("a"), Catalog: "m", As: levels("x")},
			{Namespace: levels("b"), Catalog: "m", As: levels("x.y")},
		}}, "under different names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Consistent nesting and identity routes to the default are fine.
	for _, ok := range []Config{
		{Routes: []Rule{{Namespace: levels("a"), Catalog: "m", As: levels("x")}, {Namespace: levels("a.b"), Catalog: "m", As: levels("x.b")}}},
		{Routes: []Rule{{Namespace: levels("a"), Catalog: "m"}}, Default: "m"},
		{Default: "m"},
	} {
		assert.NoError(t, ok.Validate())
	}
	_, err := New("all", Config{Default: "m"}, map[string]Member{})
	assert.ErrorContains(t, err, `member catalog "m" is not given`)
}

// Namespace operations go to the namespace's member under its name there,
// for the request's principal.
func TestNamespaceOperationsRouted(t *testing.T) {
	b, fakes := fixture(t)
	rec := do(t, b, http.MethodGet, "/v1/all/namespaces/sales%1Feu%1Fde", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"namespace":["sales","eu","de"],"properties":{"owner":"prod"}}`, rec.Body.String())
	assert.Equal(t, levels("eu.de"), fakes["prod"].Calls()[0].Namespace)

	rec = do(t, b, http.MethodGet, "/v1/all/namespaces/b%1Fone", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"namespace":["b","one"],"properties":{"owner":"second"}}`, rec.Body.String())
	calls := fakes["second"].Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, []string{"bee", "one"}, calls[0].Namespace)
	assert.Equal(t, "alice", calls[0].Principal)

	rec = do(t, b, http.MethodPost, "/v1/all/namespaces", `{"namespace":["b","two"],"properties":{"k":"v"}}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"namespace":["b","two"],"properties":{}}`, rec.Body.String())
	calls = fakes["second"].Calls()
	assert.JSONEq(t, `{"namespace":["bee","two"],"properties":{"k":"v"}}`, calls[len(calls)-1].Body)

	// A namespace that is only the way to a rule exists all the same.
	rec = do(t, b, http.MethodHead, "/v1/all/namespaces/sales", "")
	assert.Equal(t, http.StatusNoContent, rec.Code)
	noDefault, err := New("all", Config{Routes: []Rule{{Namespace: levels("p.q"), Catalog: "m"}}},
		map[string]Member{"m": newFake("m", "p.q")})
	require.NoError(t, err)
	rec = do(t, noDefault, http.MethodHead, "/v1/all/namespaces/p", "")
	assert.Equal(t, http.StatusNoContent, rec.Code)
	rec = do(t, noDefault, http.MethodGet, "/v1/all/namespaces/p", "")
	assert.JSONEq(t, `{"namespace":["p"],"properties":{}}`, rec.Body.String())
	assert.Equal(t, []string{"p"}, listAll(t, noDefault, "", 0))
	assert.Equal(t, []string{"p.q"}, listAll(t, noDefault, "p", 0))
	rec = do(t, noDefault, http.MethodGet, "/v1/all/namespaces?parent=elsewhere", "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	// Without a default, a namespace no rule covers is no namespace.
	rec = do(t, noDefault, http.MethodGet, "/v1/all/namespaces/elsewhere", "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, rec.Body.String(), icerest.NoSuchNamespace)
	rec = do(t, noDefault, http.MethodPost, "/v1/all/namespaces", `{"namespace":["elsewhere"]}`)
	assert.Equal(t, http.StatusNotFound, rec.Code)
}

// Scan planning, credentials and metrics go to the table's member, under
// its names, with their bodies as they are.
func TestTableOperationsRouted(t *testing.T) {
	b, fakes := fixture(t)
	for _, c := range []struct{ method, path, body, op string }{
		{http.MethodPost, "/v1/all/namespaces/sales%1Feu/tables/t/plan", `{"snapshot-id":1}`, icerest.OpPlanTableScan},
		{http.MethodGet, "/v1/all/namespaces/sales%1Feu/tables/t/plan/p1", "", icerest.OpFetchPlanningResult},
		{http.MethodPost, "/v1/all/namespaces/sales%1Feu/tables/t/tasks", `{"plan-task":"x"}`, icerest.OpFetchScanTasks},
		{http.MethodGet, "/v1/all/namespaces/sales%1Feu/tables/t/credentials", "", icerest.OpLoadCredentials},
		{http.MethodPost, "/v1/all/namespaces/sales%1Feu/tables/t/metrics",
			`{"report-type":"commit-report","table-name":"db.t","snapshot-id":1,"sequence-number":1,"operation":"append","metrics":{}}`, icerest.OpReportMetrics},
		{http.MethodDelete, "/v1/all/namespaces/sales%1Feu/tables/t", "", icerest.OpDropTable},
		{http.MethodHead, "/v1/all/namespaces/sales%1Feu/views/v", "", icerest.OpViewExists},
	} {
		rec := do(t, b, c.method, c.path, c.body)
		require.Equal(t, http.StatusNoContent, rec.Code, "%s: %s", c.op, rec.Body.String())
		calls := fakes["prod"].Calls()
		last := calls[len(calls)-1]
		assert.Equal(t, c.op, last.Op)
		assert.Equal(t, levels("eu"), last.Namespace, c.op)
		assert.Equal(t, c.body, last.Body, c.op)
	}
}

// Every answer that carries identifiers carries the unified names.
func TestIdentifiersRewrittenInAnswers(t *testing.T) {
	b, fakes := fixture(t)
	fakes["prod"].tables["eu.de"] = []string{"orders", "returns"}

	for _, op := range []string{"tables", "views"} {
		rec := do(t, b, http.MethodGet, "/v1/all/namespaces/sales%1Feu%1Fde/"+op+"?pageToken=", "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.JSONEq(t, `{"identifiers":[{"namespace":["sales","eu","de"],"name":"orders"},{"namespace":["sales","eu","de"],"name":"returns"}],
			"next-page-token":"member-token"}`, rec.Body.String(), "the member's own token passes: one member lists a namespace")
	}

	rec := do(t, b, http.MethodGet, "/v1/all/namespaces/sales%1Feu%1Fde/views/v", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var view struct {
		Metadata struct {
			Versions []struct {
				DefaultNamespace []string `json:"default-namespace"`
				Representations  []struct {
					SQL string `json:"sql"`
				} `json:"representations"`
			} `json:"versions"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &view))
	assert.Equal(t, levels("sales.eu.de"), view.Metadata.Versions[0].DefaultNamespace)
	assert.Equal(t, "SELECT * FROM eu.de.t", view.Metadata.Versions[0].Representations[0].SQL, "SQL is left as it is")
}

// Request bodies that name tables or namespaces reach the member in its
// names.
func TestIdentifiersRewrittenInRequests(t *testing.T) {
	b, fakes := fixture(t)
	last := func(m string) fakeCall { c := fakes[m].Calls(); return c[len(c)-1] }

	rec := do(t, b, http.MethodPost, "/v1/all/tables/rename",
		`{"source":{"namespace":["sales","eu"],"name":"t"},"destination":{"namespace":["sales","eu","de"],"name":"u"}}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"source":{"namespace":["eu"],"name":"t"},"destination":{"namespace":["eu","de"],"name":"u"}}`, last("prod").Body)
	assert.Equal(t, icerest.OpRenameTable, last("prod").Op)

	rec = do(t, b, http.MethodPost, "/v1/all/views/rename",
		`{"source":{"namespace":["b"],"name":"v"},"destination":{"namespace":["b","one"],"name":"v"}}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"source":{"namespace":["bee"],"name":"v"},"destination":{"namespace":["bee","one"],"name":"v"}}`, last("second").Body)

	rec = do(t, b, http.MethodPost, "/v1/all/transactions/commit", `{"table-changes":[
		{"identifier":{"namespace":["a"],"name":"t1"},"requirements":[],"updates":[]},
		{"identifier":{"namespace":["a","x"],"name":"t2"},"requirements":[],"updates":[]}]}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"table-changes":[
		{"identifier":{"namespace":["a"],"name":"t1"},"requirements":[],"updates":[]},
		{"identifier":{"namespace":["a","x"],"name":"t2"},"requirements":[],"updates":[]}]}`, last("first").Body)

	rec = do(t, b, http.MethodPost, "/v1/all/transactions/commit", `{"table-changes":[
		{"identifier":{"namespace":["sales","eu"],"name":"t1"},"requirements":[],"updates":[]}]}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"table-changes":[{"identifier":{"namespace":["eu"],"name":"t1"},"requirements":[],"updates":[]}]}`, last("prod").Body)

	rec = do(t, b, http.MethodPost, "/v1/all/namespaces/sales%1Feu/tables/t",
		`{"identifier":{"namespace":["sales","eu"],"name":"t"},"requirements":[],"updates":[]}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"identifier":{"namespace":["eu"],"name":"t"},"requirements":[],"updates":[]}`, last("prod").Body)
	assert.Equal(t, levels("eu"), last("prod").Namespace)

	viewVersion := func(ns string) string {
		return `{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"representations":[{"type":"sql","sql":"SELECT 1","dialect":"spark"}],"default-namespace":` + ns + `}`
	}
	schema := `{"type":"struct","schema-id":0,"fields":[]}`
	rec = do(t, b, http.MethodPost, "/v1/all/namespaces/sales%1Feu/views",
		`{"name":"v","schema":`+schema+`,"view-version":`+viewVersion(`["sales","eu","de"]`)+`}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.Contains(t, last("prod").Body, `"default-namespace":["eu","de"]`)

	// A default-namespace in another member stays as it is.
	rec = do(t, b, http.MethodPost, "/v1/all/namespaces/sales%1Feu/views/v",
		`{"identifier":{"namespace":["sales","eu"],"name":"v"},"requirements":[],"updates":[{"action":"add-view-version","view-version":`+viewVersion(`["a"]`)+`}]}`)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.Contains(t, last("prod").Body, `"default-namespace":["a"]`)
	assert.Contains(t, last("prod").Body, `"identifier":{"name":"v","namespace":["eu"]}`)
}

// A rename or a transaction across members is refused before any member
// is written to: a transaction with no member call at all, a rename after
// asking the destination's member whether the namespace exists (a rename
// into a missing namespace is the spec's 404).
func TestAcrossMembersRefused(t *testing.T) {
	b, fakes := fixture(t)
	for _, body := range []struct{ path, body string }{
		{"/v1/all/tables/rename", `{"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["b"],"name":"t"}}`},
		{"/v1/all/views/rename", `{"source":{"namespace":["c"],"name":"t"},"destination":{"namespace":["sales","eu"],"name":"t"}}`},
		{"/v1/all/transactions/commit", `{"table-changes":[
			{"identifier":{"namespace":["a"],"name":"t1"},"requirements":[],"updates":[]},
			{"identifier":{"namespace":["a","x"],"name":"t2"},"requirements":[],"updates":[]},
			{"identifier":{"namespace":["c"],"name":"t3"},"requirements":[],"updates":[]}]}`},
	} {
		rec := do(t, b, http.MethodPost, body.path, body.body)
		assert.Equal(t, http.StatusNotAcceptable, rec.Code, body.path)
		assert.Contains(t, rec.Body.String(), icerest.UnsupportedOperation)
		assert.Regexp(t, `in \\"(first|third)\\".*in \\"(second|prod|third)\\"`, rec.Body.String())
	}
	for name, f := range fakes {
		for _, c := range f.Calls() {
			assert.Equal(t, icerest.OpNamespaceExists, c.Op, "member %s: only asked whether a namespace exists", name)
		}
	}

	rec := do(t, b, http.MethodPost, "/v1/all/tables/rename",
		`{"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["nowhere"],"name":"t"}}`)
	assert.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), icerest.NoSuchNamespace)
}

// A table answer carries its member's overrides, and the defaults the
// members do not agree on, in its config, without replacing what the
// member set for the table; a 304 stays a 304.
func TestTableConfigFromMemberOverrides(t *testing.T) {
	b, fakes := fixture(t)
	fakes["first"].config.Overrides = map[string]string{
		"s3.endpoint": "http://member-wide", "s3.path-style-access": "true",
		"uri": "http://first", "prefix": "p", "namespace-separator": "%2E", "header.X": "y",
	}
	// A default every member agrees on is the unified catalog's own; one
	// they do not agree on goes with the table.
	for _, f := range fakes {
		f.config.Defaults = map[string]string{"write.format.default": "parquet", "s3.region": "r-" + f.name}
	}
	rec := do(t, b, http.MethodGet, "/v1/all/namespaces/a/tables/t", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got struct {
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, map[string]string{"s3.endpoint": "http://table-own", "s3.path-style-access": "true", "s3.region": "r-first"}, got.Config)
	cc, err := b.Config(context.Background())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"write.format.default": "parquet"}, cc.Defaults)
	assert.Equal(t, `"v1"`, rec.Header().Get("ETag"))

	req, _ := http.NewRequest(http.MethodGet, "/v1/all/namespaces/a/tables/t", nil)
	req.Header.Set("If-None-Match", `"v1"`)
	rt, _ := icerest.ParseRoute(http.MethodGet, "/v1/all/namespaces/a/tables/t", "")
	rec2 := upstream.Capture(b.Serve, req, icerest.Request{Route: rt})
	assert.Equal(t, http.StatusNotModified, rec2.Status)
	assert.Empty(t, rec2.Bytes())
}

// /v1/config lists the endpoints every member serves; one that lists
// none serves the defaults clients assume.
func TestEndpointIntersection(t *testing.T) {
	ep := func(ops ...string) []string {
		var out []string
		for _, op := range ops {
			out = append(out, icerest.Endpoints[op])
		}
		return out
	}
	mk := func(cfgs ...upstream.CatalogConfig) *Backend {
		members := map[string]Member{}
		cfg := Config{}
		for i, cc := range cfgs {
			f := newFake(string(rune('a'+i)), "x")
			f.config = cc
			members[f.name] = f
			cfg.Routes = append(cfg.Routes, Rule{Namespace: []string{f.name}, Catalog: f.name})
		}
		b, err := New("all", cfg, members)
		require.NoError(t, err)
		return b
	}
	ctx := context.Background()

	cc, err := mk(
		upstream.CatalogConfig{Endpoints: ep(icerest.OpLoadTable, icerest.OpListViews, icerest.OpCreateTable), Defaults: map[string]string{"k": "same", "j": "one"}},
		upstream.CatalogConfig{Endpoints: ep(icerest.OpLoadTable, icerest.OpListViews), Defaults: map[string]string{"k": "same", "j": "two", "prefix": "p"}},
	).Config(ctx)
	require.NoError(t, err)
	assert.Equal(t, sorted(ep(icerest.OpLoadTable, icerest.OpListViews)), cc.Endpoints)
	assert.Equal(t, map[string]string{"k": "same"}, cc.Defaults)
	assert.Empty(t, cc.Overrides)

	cc, err = mk(
		upstream.CatalogConfig{Endpoints: ep(icerest.OpLoadTable, icerest.OpListViews)},
		upstream.CatalogConfig{}, // lists none: the defaults, which have no views
	).Config(ctx)
	require.NoError(t, err)
	assert.Equal(t, ep(icerest.OpLoadTable), cc.Endpoints)

	cc, err = mk(upstream.CatalogConfig{}, upstream.CatalogConfig{}).Config(ctx)
	require.NoError(t, err)
	assert.Empty(t, cc.Endpoints, "no member lists any: none listed")
}

func sorted(s []string) []string { slices.Sort(s); return s }

// The access log's record names the member a request went to and the
// namespace there, next to the unified names of the request.
func TestRecordNamesTheMember(t *testing.T) {
	b, _ := fixture(t)
	rt, err := icerest.ParseRoute(http.MethodGet, "/v1/all/namespaces/sales%1Feu%1Fde/tables", icerest.UnitSeparator)
	require.NoError(t, err)
	rec := &telemetry.Record{}
	req := httptest.NewRequest(http.MethodGet, "/v1/all/namespaces/sales%1Feu%1Fde/tables", http.NoBody)
	req = req.WithContext(telemetry.WithRecord(caller.With(req.Context(), caller.Caller{Principal: "alice"}), rec))
	b.Serve(httptest.NewRecorder(), req, icerest.Request{Route: rt})
	assert.Equal(t, "prod", rec.Member)
	assert.Equal(t, []string{"eu", "de"}, rec.MemberNamespace)
}
