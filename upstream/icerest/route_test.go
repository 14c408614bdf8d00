package icerest

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fillEndpoint fills an Endpoints template ("METHOD /v1/{prefix}/...") with
// escaped values; prefix "" gives the prefix-less form.
func fillEndpoint(tmpl, prefix, ns, tbl, view, plan string) (method, path string) {
	method, path, _ = strings.Cut(tmpl, " ")
	if prefix == "" {
		path = strings.Replace(path, "/{prefix}", "", 1)
	}
	path = strings.NewReplacer("{prefix}", prefix, "{namespace}", ns, "{table}", tbl,
		"{view}", view, "{plan-id}", plan, "{function}", "f%2F1").Replace(path)
	return method, path
}

// TestParseRouteEveryEndpoint parses every advertised endpoint in both the
// prefixed and the prefix-less form and checks the whole Route.
func TestParseRouteEveryEndpoint(t *testing.T) {
	if len(Endpoints) != 33 {
		t.Fatalf("Endpoints has %d entries; update this test", len(Endpoints))
	}
	for op, tmpl := range Endpoints {
		for _, prefixed := range []bool{true, false} {
			prefix := ""
			if prefixed {
				prefix = "my%20cat"
			}
			method, path := fillEndpoint(tmpl, prefix, "a%1Fb%2Fc", "t%2F1", "v%3F1", "plan%2Fx")
			want := Route{Operation: op}
			if prefixed {
				want.Prefix, want.HasPrefix = "my cat", true
			}
			if strings.Contains(tmpl, "{namespace}") {
				want.Namespace = []string{"a", "b/c"}
			}
			if strings.Contains(tmpl, "{table}") {
				want.Table = "t/1"
			}
			if strings.Contains(tmpl, "{view}") {
				want.View = "v?1"
			}
			if strings.Contains(tmpl, "{plan-id}") {
				want.PlanID = "plan/x"
			}
			if strings.Contains(tmpl, "{function}") {
				want.Function = "f/1"
			}
			t.Run(method+" "+path, func(t *testing.T) {
				got, err := ParseRoute(method, path, "")
				if err != nil {
					t.Fatalf("ParseRoute: %v", err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("got %+v, want %+v", got, want)
				}
				// A trailing slash names the same resource.
				got, err = ParseRoute(method, path+"/", "")
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("with trailing slash: got %+v, %v", got, err)
				}
			})
		}
	}
}

func TestParseRoute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		path   string
		sep    string
		want   Route
	}{
		{"config", "GET", "/v1/config", "", Route{Operation: OpGetConfig}},
		{"oauth tokens", "POST", "/v1/oauth/tokens", "", Route{Operation: OpGetToken}},
		{"list namespaces prefix-less", "GET", "/v1/namespaces", "",
			Route{Operation: OpListNamespaces}},
		{"list namespaces prefixed", "GET", "/v1/cat/namespaces", "",
			Route{Operation: OpListNamespaces, Prefix: "cat", HasPrefix: true}},
		{"escaped prefix", "GET", "/v1/my%2Fcat/namespaces", "",
			Route{Operation: OpListNamespaces, Prefix: "my/cat", HasPrefix: true}},
		{"prefix that looks like a path word", "GET", "/v1/tablesx/namespaces", "",
			Route{Operation: OpListNamespaces, Prefix: "tablesx", HasPrefix: true}},
		{"single level namespace", "GET", "/v1/cat/namespaces/ns", "",
			Route{Operation: OpLoadNamespaceMetadata, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}}},
		{"multi level %1F", "HEAD", "/v1/namespaces/a%1Fb%1Fc", "",
			Route{Operation: OpNamespaceExists, Namespace: []string{"a", "b", "c"}}},
		{"lower-case %1f", "DELETE", "/v1/namespaces/a%1fb", "",
			Route{Operation: OpDropNamespace, Namespace: []string{"a", "b"}}},
		{"explicit 0x1F separator", "GET", "/v1/namespaces/a%1Fb", UnitSeparator,
			Route{Operation: OpLoadNamespaceMetadata, Namespace: []string{"a", "b"}}},
		{"custom separator .", "GET", "/v1/cat/namespaces/a.b.c/tables", ".",
			Route{Operation: OpListTables, Prefix: "cat", HasPrefix: true, Namespace: []string{"a", "b", "c"}}},
		{"custom separator, 0x1F still accepted", "GET", "/v1/namespaces/a.b%1Fc", ".",
			Route{Operation: OpLoadNamespaceMetadata, Namespace: []string{"a", "b", "c"}}},
		{"dot is a plain character without custom separator", "GET", "/v1/namespaces/a.b", "",
			Route{Operation: OpLoadNamespaceMetadata, Namespace: []string{"a.b"}}},
		{"multi-byte separator", "GET", "/v1/namespaces/a::b", "::",
			Route{Operation: OpLoadNamespaceMetadata, Namespace: []string{"a", "b"}}},
		{"escaped slash in namespace level", "GET", "/v1/namespaces/a%2Fb%1Fc/tables", "",
			Route{Operation: OpListTables, Namespace: []string{"a/b", "c"}}},
		{"escaped slash in table name", "GET", "/v1/cat/namespaces/ns/tables/a%2Fb", "",
			Route{Operation: OpLoadTable, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}, Table: "a/b"}},
		{"escaped space, percent and unicode in table name", "POST", "/v1/namespaces/ns/tables/a%20b%25c%C3%A9", "",
			Route{Operation: OpUpdateTable, Namespace: []string{"ns"}, Table: "a b%cé"}},
		{"plus is not a space in paths", "DELETE", "/v1/namespaces/ns/tables/a+b", "",
			Route{Operation: OpDropTable, Namespace: []string{"ns"}, Table: "a+b"}},
		{"table called like a path word", "HEAD", "/v1/namespaces/tables/tables/tables", "",
			Route{Operation: OpTableExists, Namespace: []string{"tables"}, Table: "tables"}},
		{"register", "POST", "/v1/cat/namespaces/ns/register", "",
			Route{Operation: OpRegisterTable, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}}},
		{"properties", "POST", "/v1/namespaces/a%1Fb/properties", "",
			Route{Operation: OpUpdateProperties, Namespace: []string{"a", "b"}}},
		{"credentials", "GET", "/v1/cat/namespaces/ns/tables/t/credentials", "",
			Route{Operation: OpLoadCredentials, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}, Table: "t"}},
		{"metrics", "POST", "/v1/namespaces/ns/tables/t/metrics", "",
			Route{Operation: OpReportMetrics, Namespace: []string{"ns"}, Table: "t"}},
		{"plan", "POST", "/v1/cat/namespaces/ns/tables/t/plan", "",
			Route{Operation: OpPlanTableScan, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}, Table: "t"}},
		{"fetch plan", "GET", "/v1/cat/namespaces/ns/tables/t/plan/p-123", "",
			Route{Operation: OpFetchPlanningResult, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}, Table: "t", PlanID: "p-123"}},
		{"cancel plan with escaped id", "DELETE", "/v1/namespaces/ns/tables/t/plan/a%2Fb%3D%3D", "",
			Route{Operation: OpCancelPlanning, Namespace: []string{"ns"}, Table: "t", PlanID: "a/b=="}},
		{"tasks", "POST", "/v1/namespaces/ns/tables/t/tasks", "",
			Route{Operation: OpFetchScanTasks, Namespace: []string{"ns"}, Table: "t"}},
		{"rename table", "POST", "/v1/cat/tables/rename", "",
			Route{Operation: OpRenameTable, Prefix: "cat", HasPrefix: true}},
		{"rename view", "POST", "/v1/views/rename", "", Route{Operation: OpRenameView}},
		{"transactions", "POST", "/v1/cat/transactions/commit", "",
			Route{Operation: OpCommitTransaction, Prefix: "cat", HasPrefix: true}},
		{"list views", "GET", "/v1/namespaces/ns/views", "",
			Route{Operation: OpListViews, Namespace: []string{"ns"}}},
		{"create view", "POST", "/v1/namespaces/ns/views", "",
			Route{Operation: OpCreateView, Namespace: []string{"ns"}}},
		{"replace view with escaped name", "POST", "/v1/cat/namespaces/ns/views/v%2F1", "",
			Route{Operation: OpReplaceView, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}, View: "v/1"}},
		{"view exists", "HEAD", "/v1/namespaces/ns/views/v", "",
			Route{Operation: OpViewExists, Namespace: []string{"ns"}, View: "v"}},
		{"trailing slash", "GET", "/v1/cat/namespaces/ns/tables/", "",
			Route{Operation: OpListTables, Prefix: "cat", HasPrefix: true, Namespace: []string{"ns"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRoute(tc.method, tc.path, tc.sep)
			if err != nil {
				t.Fatalf("ParseRoute(%s %s): %v", tc.method, tc.path, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseRoute(%s %s):\n got %+v\nwant %+v", tc.method, tc.path, got, tc.want)
			}
		})
	}
}

func TestParseRouteErrors(t *testing.T) {
	const (
		notFound   = http.StatusNotFound
		badRequest = http.StatusBadRequest
		notAllowed = http.StatusMethodNotAllowed
	)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		sep    string
		code   int
		typ    string
	}{
		{"empty path", "GET", "", "", notFound, NotFound},
		{"root", "GET", "/", "", notFound, NotFound},
		{"no version", "GET", "/namespaces", "", notFound, NotFound},
		{"v1 alone", "GET", "/v1", "", notFound, NotFound},
		{"other version", "GET", "/v2/namespaces", "", notFound, NotFound},
		{"v1 slash only", "GET", "/v1/", "", badRequest, BadRequest},
		{"unknown prefix-less endpoint", "GET", "/v1/functions", "", notFound, NotFound},
		{"prefix alone", "GET", "/v1/cat", "", notFound, NotFound},
		{"prefix alone with slash", "GET", "/v1/cat/", "", notFound, NotFound},
		{"unknown endpoint under prefix", "GET", "/v1/cat/functions", "", notFound, NotFound},
		{"prefix then a prefix", "GET", "/v1/cat/cat/namespaces", "", notFound, NotFound},
		{"unknown namespace sub-resource", "GET", "/v1/namespaces/ns/procedures", "", notFound, NotFound},
		{"unknown table sub-resource", "GET", "/v1/namespaces/ns/tables/t/snapshots", "", notFound, NotFound},
		{"config with prefix", "GET", "/v1/cat/config", "", notFound, NotFound},
		{"oauth with prefix", "POST", "/v1/cat/oauth/tokens", "", notFound, NotFound},
		{"config trailing segment", "GET", "/v1/config/x", "", notFound, NotFound},
		{"oauth wrong leaf", "POST", "/v1/oauth/token", "", notFound, NotFound},
		{"oauth alone", "POST", "/v1/oauth", "", notFound, NotFound},
		{"tables alone", "POST", "/v1/tables", "", notFound, NotFound},
		{"tables/renamex", "POST", "/v1/tables/renamex", "", notFound, NotFound},
		{"transactions trailing", "POST", "/v1/transactions/commit/x", "", notFound, NotFound},
		{"views rename trailing", "POST", "/v1/cat/views/rename/x", "", notFound, NotFound},
		{"properties trailing", "POST", "/v1/namespaces/ns/properties/x", "", notFound, NotFound},
		{"register trailing", "POST", "/v1/namespaces/ns/register/x", "", notFound, NotFound},
		{"credentials trailing", "GET", "/v1/namespaces/ns/tables/t/credentials/x", "", notFound, NotFound},
		{"metrics trailing", "POST", "/v1/namespaces/ns/tables/t/metrics/x", "", notFound, NotFound},
		{"tasks trailing", "POST", "/v1/namespaces/ns/tables/t/tasks/x", "", notFound, NotFound},
		{"plan id trailing", "GET", "/v1/namespaces/ns/tables/t/plan/p/x", "", notFound, NotFound},
		{"view trailing", "GET", "/v1/namespaces/ns/views/v/x", "", notFound, NotFound},

		{"wrong method on config", "POST", "/v1/config", "", notAllowed, UnsupportedOperation},
		{"wrong method on oauth", "GET", "/v1/oauth/tokens", "", notAllowed, UnsupportedOperation},
		{"wrong method on namespaces", "DELETE", "/v1/namespaces", "", notAllowed, UnsupportedOperation},
		{"wrong method on namespace", "POST", "/v1/cat/namespaces/ns", "", notAllowed, UnsupportedOperation},
		{"wrong method on properties", "GET", "/v1/namespaces/ns/properties", "", notAllowed, UnsupportedOperation},
		{"wrong method on table", "PUT", "/v1/namespaces/ns/tables/t", "", notAllowed, UnsupportedOperation},
		{"lower-case method", "get", "/v1/namespaces/ns/tables/t", "", notAllowed, UnsupportedOperation},
		{"wrong method on plan", "GET", "/v1/namespaces/ns/tables/t/plan", "", notAllowed, UnsupportedOperation},
		{"wrong method on plan id", "POST", "/v1/namespaces/ns/tables/t/plan/p", "", notAllowed, UnsupportedOperation},
		{"wrong method on rename", "GET", "/v1/tables/rename", "", notAllowed, UnsupportedOperation},
		{"wrong method on transactions", "PUT", "/v1/cat/transactions/commit", "", notAllowed, UnsupportedOperation},
		{"wrong method on view", "PATCH", "/v1/namespaces/ns/views/v", "", notAllowed, UnsupportedOperation},

		{"empty prefix", "GET", "/v1//namespaces", "", badRequest, BadRequest},
		{"bad percent-encoding in prefix", "GET", "/v1/c%ZZ/namespaces", "", badRequest, BadRequest},
		{"bad percent-encoding in namespace", "GET", "/v1/namespaces/%ZZ", "", badRequest, BadRequest},
		{"truncated percent-encoding in namespace", "GET", "/v1/namespaces/ns%1", "", badRequest, BadRequest},
		{"bad percent-encoding in table", "GET", "/v1/namespaces/ns/tables/t%G0", "", badRequest, BadRequest},
		{"bad percent-encoding in view", "GET", "/v1/namespaces/ns/views/v%", "", badRequest, BadRequest},
		{"bad percent-encoding in plan id", "GET", "/v1/namespaces/ns/tables/t/plan/%zz", "", badRequest, BadRequest},
		{"empty namespace level", "GET", "/v1/namespaces/a%1F%1Fb", "", badRequest, BadRequest},
		{"leading empty level", "GET", "/v1/namespaces/%1Fa", "", badRequest, BadRequest},
		{"trailing empty level", "GET", "/v1/namespaces/a%1F/tables", "", badRequest, BadRequest},
		{"empty level with custom separator", "GET", "/v1/namespaces/a..b", ".", badRequest, BadRequest},
		{"separator only", "GET", "/v1/namespaces/.", ".", badRequest, BadRequest},
		{"empty namespace segment", "GET", "/v1/namespaces//tables", "", badRequest, BadRequest},
		{"empty table name", "GET", "/v1/namespaces/ns/tables//credentials", "", badRequest, BadRequest},
		{"empty view name", "GET", "/v1/namespaces/ns/views//", "", badRequest, BadRequest},
		{"empty plan id", "GET", "/v1/namespaces/ns/tables/t/plan//", "", badRequest, BadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := ParseRoute(tc.method, tc.path, tc.sep)
			if err == nil {
				t.Fatalf("ParseRoute(%s %q) = %+v, want a %d error", tc.method, tc.path, rt, tc.code)
			}
			if apiErr(t, err).Code != tc.code || apiErr(t, err).Type != tc.typ {
				t.Fatalf("ParseRoute(%s %q): got %d %s (%s), want %d %s",
					tc.method, tc.path, apiErr(t, err).Code, apiErr(t, err).Type, apiErr(t, err).Message, tc.code, tc.typ)
			}
			if apiErr(t, err).Message == "" {
				t.Fatal("empty error message")
			}
			if !reflect.DeepEqual(rt, Route{}) {
				t.Fatalf("a failed parse returned %+v", rt)
			}
		})
	}
}

// TestParseRouteMethodNotAllowedMessage checks that the 405 message names
// every allowed method, in a stable order.
func TestParseRouteMethodNotAllowedMessage(t *testing.T) {
	var first string
	for i := range 20 {
		_, err := ParseRoute("PUT", "/v1/namespaces/ns/tables/t", "")
		if err == nil {
			t.Fatal("PUT on a table parsed")
		}
		if i == 0 {
			first = apiErr(t, err).Message
		} else if apiErr(t, err).Message != first {
			t.Fatalf("405 message is not stable: %q vs %q", apiErr(t, err).Message, first)
		}
	}
	for _, m := range []string{"DELETE", "GET", "HEAD", "POST"} {
		if !strings.Contains(first, m) {
			t.Fatalf("405 message %q does not name %s", first, m)
		}
	}
}

// TestMethodNotAllowedAnswer checks the 405 a client gets: typed as an
// unsupported operation (what Iceberg clients make of 405) with the Allow
// header HTTP requires.
func TestMethodNotAllowedAnswer(t *testing.T) {
	_, err := ParseRoute("PUT", "/v1/namespaces", "")
	if err == nil {
		t.Fatal("PUT on namespaces parsed")
	}
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("PUT", "/v1/namespaces", nil), err)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("status %d, want 405", rec.Code)
	}
	if got := rec.Header().Get("Allow"); got != "GET, POST" {
		t.Fatalf("Allow = %q, want \"GET, POST\"", got)
	}
	var body struct{ Error Error }
	if jerr := json.Unmarshal(rec.Body.Bytes(), &body); jerr != nil || body.Error.Type != UnsupportedOperation || body.Error.Code != 405 {
		t.Fatalf("body %s (%v), want a 405 UnsupportedOperationException", rec.Body, jerr)
	}
}

func TestDecodeNamespace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sep  string
		want []string // nil: an error
	}{
		{"a", "", []string{"a"}},
		{"a\x1fb", "", []string{"a", "b"}},
		{"a\x1fb", UnitSeparator, []string{"a", "b"}},
		{"a.b", "", []string{"a.b"}},
		{"a.b", ".", []string{"a", "b"}},
		{"a.b\x1fc", ".", []string{"a", "b", "c"}},
		{"a/b", "", []string{"a/b"}},
		{"a::b::c", "::", []string{"a", "b", "c"}},
		{"a b", "", []string{"a b"}},
		{"", "", nil},
		{"", ".", nil},
		{"\x1f", "", nil},
		{"a\x1f", "", nil},
		{"\x1fa", "", nil},
		{"a\x1f\x1fb", "", nil},
		{"a..b", ".", nil},
		{".a", ".", nil},
		{"a.", ".", nil},
		{"a.\x1fb", ".", nil},
	} {
		got, err := DecodeNamespace(tc.in, tc.sep)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("DecodeNamespace(%q, %q) = %q, want an error", tc.in, tc.sep, got)
		case tc.want == nil && (apiErr(t, err).Code != http.StatusBadRequest || apiErr(t, err).Type != BadRequest):
			t.Errorf("DecodeNamespace(%q, %q): got %v, want 400 %s", tc.in, tc.sep, err, BadRequest)
		case tc.want != nil && err != nil:
			t.Errorf("DecodeNamespace(%q, %q): %v", tc.in, tc.sep, err)
		case tc.want != nil && !slices.Equal(got, tc.want):
			t.Errorf("DecodeNamespace(%q, %q) = %q, want %q", tc.in, tc.sep, got, tc.want)
		}
	}
}

func TestDecodeNamespaceSegment(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sep  string
		want []string
	}{
		{"a%1Fb", "", []string{"a", "b"}},
		{"a%2Fb", "", []string{"a/b"}},
		{"a%2Eb", ".", []string{"a", "b"}}, // the separator is matched decoded
		{"a%25b", "", []string{"a%b"}},
		{"%ZZ", "", nil},
		{"a%", "", nil},
		{"a%1F%1Fb", "", nil},
		{"", "", nil},
	} {
		got, err := DecodeNamespaceSegment(tc.in, tc.sep)
		if tc.want == nil {
			if err == nil || apiErr(t, err).Code != http.StatusBadRequest || apiErr(t, err).Type != BadRequest {
				t.Errorf("DecodeNamespaceSegment(%q, %q) = %q, %v; want a 400 %s", tc.in, tc.sep, got, err, BadRequest)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("DecodeNamespaceSegment(%q, %q) = %q, %v; want %q", tc.in, tc.sep, got, err, tc.want)
		}
	}
}

func TestEncodeNamespace(t *testing.T) {
	for _, tc := range []struct {
		ns         []string
		sepEscaped string
		want       string
	}{
		{[]string{"a"}, "%1F", "a"},
		{[]string{"a", "b", "c"}, "%1F", "a%1Fb%1Fc"},
		{[]string{"a", "b"}, ".", "a.b"},
		{[]string{"a/b", "c d", "e%f", "é"}, "%1F", "a%2Fb%1Fc%20d%1Fe%25f%1F%C3%A9"},
		{[]string{"a?b#c"}, "%1F", "a%3Fb%23c"},
		{[]string{"a\x1fb"}, "%1F", "a%1Fb"}, // a level holding the separator cannot round-trip
		{nil, "%1F", ""},
	} {
		if got := EncodeNamespace(tc.ns, tc.sepEscaped); got != tc.want {
			t.Errorf("EncodeNamespace(%q, %q) = %q, want %q", tc.ns, tc.sepEscaped, got, tc.want)
		}
	}
}

// TestNamespaceRoundTrip encodes namespaces as path segments and parses
// them back through DecodeNamespaceSegment and ParseRoute.
func TestNamespaceRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ns         []string
		sep        string // decoded separator the server advertises
		sepEscaped string // as /v1/config advertises it
	}{
		{[]string{"a"}, "", "%1F"},
		{[]string{"a", "b", "c"}, "", "%1F"},
		{[]string{"a", "b"}, UnitSeparator, "%1F"},
		{[]string{"a.b", "c"}, "", "%1F"},
		{[]string{"a", "b"}, ".", "."},
		{[]string{"a", "b"}, ".", "%1F"}, // 0x1F is always accepted
		{[]string{"a/b", "c d", "e%f", "é", "x?y#z", "+"}, "", "%1F"},
		{[]string{"a/b", "c%1Fd"}, ".", "."}, // a literal "%1F" in a level is escaped as %251F
		{[]string{"a", "b"}, "::", "::"},
	} {
		seg := EncodeNamespace(tc.ns, tc.sepEscaped)
		got, err := DecodeNamespaceSegment(seg, tc.sep)
		if err != nil || !slices.Equal(got, tc.ns) {
			t.Errorf("round trip of %q via %q (sep %q): got %q, %v", tc.ns, seg, tc.sep, got, err)
			continue
		}
		rt, err := ParseRoute(http.MethodGet, "/v1/cat/namespaces/"+seg+"/tables", tc.sep)
		if err != nil || !slices.Equal(rt.Namespace, tc.ns) || rt.Operation != OpListTables {
			t.Errorf("ParseRoute with namespace %q: got %+v, %v", seg, rt, err)
		}
	}
}

func TestIsReservedPrefix(t *testing.T) {
	for _, name := range []string{"config", "oauth", "namespaces", "tables", "views", "transactions"} {
		if !IsReservedPrefix(name) {
			t.Errorf("%q is not reserved", name)
		}
	}
	for _, name := range []string{"", "cat", "Namespaces", "v1", "prefix"} {
		if IsReservedPrefix(name) {
			t.Errorf("%q is reserved", name)
		}
	}
}

// FuzzParseRoute checks that ParseRoute never panics, that every error is
// a client error in the spec's model, and that every success names an
// operation reachable with that method.
func FuzzParseRoute(f *testing.F) {
	for _, tmpl := range Endpoints {
		m, p := fillEndpoint(tmpl, "cat", "a%1Fb", "t", "v", "p")
		f.Add(m, p)
		m, p = fillEndpoint(tmpl, "", "a.b", "t%2F", "v", "p%")
		f.Add(m, p)
	}
	f.Add("GET", "/v1/config")
	f.Add("POST", "/v1/oauth/tokens")
	f.Add("GET", "/v1//namespaces")
	f.Add("GET", "/v1/namespaces/a%1F%1Fb")
	f.Add("PUT", "/v1/namespaces/ns/tables/t/plan/p/")
	f.Fuzz(func(t *testing.T, method, path string) {
		for _, sep := range []string{"", UnitSeparator, "."} {
			rt, err := ParseRoute(method, path, sep)
			if err != nil {
				if apiErr(t, err).Code < 400 || apiErr(t, err).Code > 499 {
					t.Fatalf("ParseRoute(%q, %q, %q): non-4xx error %v", method, path, sep, err)
				}
				if apiErr(t, err).Type == "" || apiErr(t, err).Message == "" {
					t.Fatalf("ParseRoute(%q, %q, %q): error without type or message: %+v", method, path, sep, err)
				}
				continue
			}
			if rt.Operation == "" {
				t.Fatalf("ParseRoute(%q, %q, %q): success without an operation: %+v", method, path, sep, rt)
			}
			if ep, ok := Endpoints[rt.Operation]; ok {
				if m, _, _ := strings.Cut(ep, " "); m != method {
					t.Fatalf("ParseRoute(%q, %q, %q) = %s, whose endpoint is %q", method, path, sep, rt.Operation, ep)
				}
			}
			if rt.HasPrefix != (rt.Prefix != "") {
				t.Fatalf("ParseRoute(%q, %q, %q): HasPrefix %v with prefix %q", method, path, sep, rt.HasPrefix, rt.Prefix)
			}
			if slices.Contains(rt.Namespace, "") {
				t.Fatalf("ParseRoute(%q, %q, %q): empty namespace level in %q", method, path, sep, rt.Namespace)
			}
			if want := strings.Contains(Endpoints[rt.Operation], "{namespace}"); want != (len(rt.Namespace) > 0) {
				t.Fatalf("ParseRoute(%q, %q, %q) = %+v: namespace presence does not match %s",
					method, path, sep, rt, rt.Operation)
			}
			if want := strings.Contains(Endpoints[rt.Operation], "{table}"); want != (rt.Table != "") {
				t.Fatalf("ParseRoute(%q, %q, %q) = %+v: table presence does not match %s", method, path, sep, rt, rt.Operation)
			}
			if want := strings.Contains(Endpoints[rt.Operation], "{view}"); want != (rt.View != "") {
				t.Fatalf("ParseRoute(%q, %q, %q) = %+v: view presence does not match %s", method, path, sep, rt, rt.Operation)
			}
			if want := strings.Contains(Endpoints[rt.Operation], "{plan-id}"); want != (rt.PlanID != "") {
				t.Fatalf("ParseRoute(%q, %q, %q) = %+v: plan id presence does not match %s", method, path, sep, rt, rt.Operation)
			}
		}
	})
}

// apiErr is the Iceberg error err must be.
func apiErr(t testing.TB, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T) is not an Iceberg error", err, err)
	}
	return e
}
