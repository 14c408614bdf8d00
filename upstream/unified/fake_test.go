package unified

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// fakeMember is a member catalog in memory: namespaces, tables per
// namespace, its own opaque page tokens and page size, and a record of
// every call it was sent.
type fakeMember struct {
	name       string
	pageSize   int  // its own largest page (0: everything)
	ownPages   bool // pages by pageSize alone, ignoring the client's
	namespaces [][]string
	tables     map[string][]string // dotted namespace -> names
	config     upstream.CatalogConfig

	mu    sync.Mutex
	calls []fakeCall
}

type fakeCall struct {
	Op        string
	Namespace []string
	Query     string
	Body      string
	Principal string
}

func newFake(name string, namespaces ...string) *fakeMember {
	f := &fakeMember{name: name, tables: map[string][]string{}}
	for _, ns := range namespaces {
		f.namespaces = append(f.namespaces, strings.Split(ns, "."))
	}
	return f
}

func (f *fakeMember) Config(context.Context) (*upstream.CatalogConfig, error) {
	cc := f.config
	return &cc, nil
}

func (f *fakeMember) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeMember) has(ns []string) bool {
	return slices.ContainsFunc(f.namespaces, func(n []string) bool { return slices.Equal(n, ns) })
}

func (f *fakeMember) Serve(w http.ResponseWriter, r *http.Request, rt icerest.Route, principal string) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Op: rt.Operation, Namespace: rt.Namespace, Query: r.URL.RawQuery, Body: string(body), Principal: principal})
	f.mu.Unlock()
	switch rt.Operation {
	case icerest.OpListNamespaces:
		f.list(w, r)
	case icerest.OpNamespaceExists:
		if f.has(rt.Namespace) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	case icerest.OpLoadNamespaceMetadata:
		if !f.has(rt.Namespace) {
			icerest.WriteError(w, r, icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace, "no namespace"))
			return
		}
		icerest.WriteJSON(w, http.StatusOK, map[string]any{"namespace": rt.Namespace, "properties": map[string]string{"owner": f.name}})
	case icerest.OpCreateNamespace:
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		icerest.WriteJSON(w, http.StatusOK, map[string]any{"namespace": req["namespace"], "properties": map[string]string{}})
	case icerest.OpListTables, icerest.OpListViews:
		ids := []map[string]any{}
		for _, n := range f.tables[strings.Join(rt.Namespace, ".")] {
			ids = append(ids, map[string]any{"namespace": rt.Namespace, "name": n})
		}
		icerest.WriteJSON(w, http.StatusOK, map[string]any{"identifiers": ids, "next-page-token": "member-token"})
	case icerest.OpLoadTable:
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		icerest.WriteJSON(w, http.StatusOK, map[string]any{
			"metadata-location": "s3://b/m.json", "metadata": map[string]any{"format-version": 2},
			"config": map[string]string{"s3.endpoint": "http://table-own"},
		})
	case icerest.OpLoadView:
		icerest.WriteJSON(w, http.StatusOK, map[string]any{
			"metadata-location": "s3://b/v.json",
			"metadata": map[string]any{"view-uuid": "u", "versions": []any{
				map[string]any{"version-id": 1, "default-namespace": rt.Namespace,
					"representations": []any{map[string]any{"type": "sql", "sql": "SELECT * FROM " + strings.Join(rt.Namespace, ".") + ".t", "dialect": "spark"}}},
			}},
		})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// list pages through the namespaces under `parent` with its own tokens
// (hex offsets, prefixed so no other member's would pass).
func (f *fakeMember) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var parent []string
	if p := q.Get("parent"); p != "" {
		parent = strings.Split(p, icerest.UnitSeparator)
		if !f.has(parent) {
			icerest.WriteError(w, r, icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace, "no parent"))
			return
		}
	}
	var children [][]string
	for _, ns := range f.namespaces {
		if len(ns) == len(parent)+1 && hasPrefix(ns, parent) {
			children = append(children, ns)
		}
	}
	slices.SortFunc(children, slices.Compare)
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		raw, err := hex.DecodeString(strings.TrimPrefix(tok, f.name+":"))
		if err != nil || !strings.HasPrefix(tok, f.name+":") {
			icerest.WriteError(w, r, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "bad token"))
			return
		}
		start, _ = strconv.Atoi(string(raw))
	}
	n := len(children) - start
	if s, _ := strconv.Atoi(q.Get("pageSize")); s > 0 && s < n && !f.ownPages {
		n = s
	}
	if f.pageSize > 0 && f.pageSize < n {
		n = f.pageSize
	}
	page := map[string]any{"namespaces": children[start : start+n]}
	if start+n < len(children) {
		page["next-page-token"] = f.name + ":" + hex.EncodeToString([]byte(strconv.Itoa(start+n)))
	}
	icerest.WriteJSON(w, http.StatusOK, page)
}

// fixture: a, and everything under it, in first; b in second (as bee);
// sales.eu in prod as eu; everything else in third.
func fixture(t *testing.T) (*Backend, map[string]*fakeMember) {
	t.Helper()
	fakes := map[string]*fakeMember{
		"first":  newFake("first", "a", "a.x", "a.y", "z"),
		"second": newFake("second", "bee", "bee.one"),
		"prod":   newFake("prod", "eu", "eu.de", "eu.fr", "us"),
		"third":  newFake("third", "a", "c", "d", "e", "f", "sales", "sales.us"),
	}
	cfg := Config{Routes: []Rule{
		{Namespace: []string{"a"}, Catalog: "first"},
		{Namespace: []string{"b"}, Catalog: "second", As: []string{"bee"}},
		{Namespace: []string{"sales", "eu"}, Catalog: "prod", As: []string{"eu"}},
	}, Default: "third"}
	members := map[string]Member{}
	for k, v := range fakes {
		members[k] = v
	}
	b, err := New("all", cfg, members)
	require.NoError(t, err)
	return b, fakes
}

// do serves one request through b for principal alice.
func do(t *testing.T, b *Backend, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rt, err := icerest.ParseRoute(method, strings.SplitN(path, "?", 2)[0], icerest.UnitSeparator)
	require.NoError(t, err)
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req = req.WithContext(caller.With(req.Context(), caller.Caller{Principal: "alice"}))
	rec := httptest.NewRecorder()
	q, err := icerest.ParseRequest(req, rt) // as the pipeline does before its backend
	if err != nil {
		icerest.WriteError(rec, req, err)
		return rec
	}
	b.Serve(rec, req, q)
	return rec
}

func totalCalls(fakes map[string]*fakeMember) int {
	n := 0
	for _, f := range fakes {
		n += len(f.Calls())
	}
	return n
}
