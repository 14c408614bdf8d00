package upstream

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// A write evicts what the policy was asked about: the tables its body
// names are those the request's one parse read (icerest.ParseRequest,
// Touched). A body that cannot be read, or that a backend could read
// otherwise than lakegate, is refused by that parse before the cache; a
// write that names no table evicts the whole catalog.
func TestTableCacheAffected(t *testing.T) {
	tc := &TableCache{Catalog: "lake"}
	ns := []string{"a", "b"}
	for _, c := range []struct {
		name    string
		rt      icerest.Route
		body    string // "": the route alone
		refused bool
		want    []string
	}{
		{"commit", icerest.Route{Operation: icerest.OpUpdateTable, Namespace: ns, Table: "t"}, `{"requirements":[],"updates":[]}`, false,
			[]string{cache.TableKey("lake", ns, "t")}},
		{"drop", icerest.Route{Operation: icerest.OpDropTable, Namespace: ns, Table: "t"}, ``, false,
			[]string{cache.TableKey("lake", ns, "t")}},
		{"create", icerest.Route{Operation: icerest.OpCreateTable, Namespace: ns}, `{"name":"t","schema":{"type":"struct","fields":[]}}`, false,
			[]string{cache.NamespacePrefix("lake", ns)}},
		{"rename", icerest.Route{Operation: icerest.OpRenameTable},
			`{"source":{"namespace":["a"],"name":"x"},"destination":{"namespace":["c"],"name":"y"}}`, false,
			[]string{cache.TableKey("lake", []string{"a"}, "x"), cache.TableKey("lake", []string{"c"}, "y")}},
		{"transaction", icerest.Route{Operation: icerest.OpCommitTransaction},
			`{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],"updates":[]},` +
				`{"identifier":{"namespace":["b"],"name":"y"},"requirements":[],"updates":[]}]}`, false,
			[]string{cache.TableKey("lake", []string{"a"}, "x"), cache.TableKey("lake", []string{"b"}, "y")}},
		{"rename, unreadable", icerest.Route{Operation: icerest.OpRenameTable}, `{"source":`, true,
			[]string{cache.CatalogPrefix("lake")}},
		// A backend decoding as Go does would rename z.z: the body is
		// refused before it gets there, and evicting everything is safe.
		{"rename, keys differing in case", icerest.Route{Operation: icerest.OpRenameTable},
			`{"source":{"namespace":["a"],"name":"x"},"destination":{"namespace":["c"],"name":"y"},"SOURCE":{"namespace":["z"],"name":"z"}}`, true,
			[]string{cache.CatalogPrefix("lake")}},
		{"transaction, not an array", icerest.Route{Operation: icerest.OpCommitTransaction}, `{"table-changes":{}}`, true,
			[]string{cache.CatalogPrefix("lake")}},
	} {
		q := icerest.Request{Route: c.rt}
		if c.body != "" {
			parsed, err := icerest.ParseRequest(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body)), c.rt)
			if c.refused {
				assert.Equal(t, http.StatusBadRequest, icerest.AsError(err).Code, c.name)
			} else {
				assert.NoError(t, err, c.name)
				q = parsed
			}
		}
		assert.Equal(t, c.want, tc.affected(q), c.name)
	}
}

// A held answer whose body a stage rewrote (a filtered listing, stripped
// credentials) goes out with its new length, not the backend's.
func TestCapturedWriteToKeepsLengthTrue(t *testing.T) {
	rec := Capture(func(w http.ResponseWriter, _ *http.Request, _ icerest.Request) {
		w.Header().Set("Content-Length", "12")
		_, _ = w.Write([]byte(`{"a":"long"}`))
	}, httptest.NewRequest(http.MethodGet, "/", nil), icerest.Request{})
	rec.SetBytes([]byte(`{}`))
	out := httptest.NewRecorder()
	rec.WriteTo(out)
	assert.Equal(t, "2", out.Header().Get("Content-Length"))
	assert.Equal(t, `{}`, out.Body.String())

	// An answer that declared none (HEAD, chunked) still declares none.
	bare := Capture(func(w http.ResponseWriter, _ *http.Request, _ icerest.Request) {
		w.WriteHeader(http.StatusNoContent)
	}, httptest.NewRequest(http.MethodHead, "/", nil), icerest.Request{})
	out = httptest.NewRecorder()
	bare.WriteTo(out)
	assert.Empty(t, out.Header().Values("Content-Length"))
}

// A body handed over whole (a cache entry's) is held, not copied, through
// captures one inside another, and a write after it still keeps both.
func TestCapturedHoldsASharedBody(t *testing.T) {
	entry := []byte(`{"metadata-location":"m"}`)
	hand := func(w http.ResponseWriter, _ *http.Request, _ icerest.Request) { writeBody(w, entry) }
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	outer := Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		Capture(hand, r, q).WriteTo(w)
	}, req, icerest.Request{})
	assert.Equal(t, entry, outer.Bytes())
	assert.Same(t, &entry[0], &outer.Bytes()[0], "the entry itself, no copy")

	more := Capture(func(w http.ResponseWriter, _ *http.Request, _ icerest.Request) {
		writeBody(w, entry)
		_, _ = w.Write([]byte("\n"))
	}, req, icerest.Request{})
	assert.Equal(t, string(entry)+"\n", string(more.Bytes()))
	assert.Equal(t, `{"metadata-location":"m"}`, string(entry), "the entry is unchanged")

	out := httptest.NewRecorder()
	outer.WriteTo(out)
	assert.Equal(t, string(entry), out.Body.String(), "a real client gets the bytes written")
}
