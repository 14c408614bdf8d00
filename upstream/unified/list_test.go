package unified

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// listAll pages through a listing with pageSize size (0: none sent) and
// returns every namespace, dotted, in order.
func listAll(t *testing.T, b *Backend, parent string, size int) []string {
	t.Helper()
	var out []string
	token := ""
	for page := 0; ; page++ {
		require.Less(t, page, 100, "the listing ends")
		q := url.Values{}
		if parent != "" {
			q.Set("parent", strings.ReplaceAll(parent, ".", icerest.UnitSeparator))
		}
		if size > 0 {
			q.Set("pageSize", strconv.Itoa(size))
		}
		if page > 0 {
			q.Set("pageToken", token)
		}
		rec := do(t, b, http.MethodGet, "/v1/all/namespaces?"+q.Encode(), "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var got struct {
			Namespaces [][]string `json:"namespaces"`
			Next       string     `json:"next-page-token"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		if size > 0 {
			require.LessOrEqual(t, len(got.Namespaces), size, "pageSize is honoured")
		}
		for _, ns := range got.Namespaces {
			out = append(out, strings.Join(ns, "."))
		}
		if got.Next == "" {
			return out
		}
		token = got.Next
	}
}

// Listings merge the members: the top level shows the rules' roots and
// the default member's namespaces no rule shadows; under a parent, the
// parent's member's children, renamed, and rules one level down. Every
// page size gives the same listing, whatever the members' own page sizes
// and tokens.
func TestMergedListingsAndPagination(t *testing.T) {
	want := map[string][]string{
		"":         {"a", "b", "c", "d", "e", "f", "sales"}, // third's a is shadowed by the rule a
		"a":        {"a.x", "a.y"},
		"b":        {"b.one"},
		"sales":    {"sales.eu", "sales.us"},
		"sales.eu": {"sales.eu.de", "sales.eu.fr"},
	}
	for _, memberPage := range []int{-1, 0, 1, 2, 3} {
		b, fakes := fixture(t)
		// each member pages on its own: 0 (all at once) or 1 to 5; -1:
		// members that ignore pageSize and answer pages of 3
		for i, name := range []string{"first", "second", "prod", "third"} {
			switch {
			case memberPage < 0:
				fakes[name].pageSize, fakes[name].ownPages = 3, true
			case memberPage > 0:
				fakes[name].pageSize = (memberPage+i)%5 + 1
			}
		}
		for parent, names := range want {
			for _, size := range []int{0, 1, 2, 3, 5, 100} {
				assert.Equal(t, names, listAll(t, b, parent, size), "parent %q, pageSize %d, member pages of %d", parent, size, memberPage)
			}
		}
	}
}

// A namespace that only leads to a rule shows in listings and lists the
// rule below it, even when its member does not have it.
func TestListingPathToRule(t *testing.T) {
	fakes := map[string]*fakeMember{"m": newFake("m", "q", "q.r"), "d": newFake("d", "top")}
	b, err := New("all", Config{Routes: []Rule{{Namespace: levels("p.q"), Catalog: "m", As: levels("q")}}, Default: "d"},
		map[string]Member{"m": fakes["m"], "d": fakes["d"]})
	require.NoError(t, err)
	assert.Equal(t, []string{"p", "top"}, listAll(t, b, "", 0))
	assert.Equal(t, []string{"p.q"}, listAll(t, b, "p", 0), "d has no p: its 404 is an empty listing")
	assert.Equal(t, []string{"p.q.r"}, listAll(t, b, "p.q", 1))

	// a rule whose namespace its member lacks is not listed
	fakes["m"].namespaces = nil
	assert.Empty(t, listAll(t, b, "p", 0))
}

func TestPageTokenRefused(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct{ name, token string }{
		{"not base64", "!!!"},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte(`{"s":1}`))},
		{"not json", b64("hello")},
		{"an array", b64(`[]`)},
		{"a string", b64(`"s"`)},
		{"unknown source", b64(`{"s":2}`)},
		{"negative source", b64(`{"s":-1}`)},
		{"negative offset", b64(`{"s":0,"o":-1}`)},
		{"negative skip", b64(`{"s":1,"k":-3}`)},
		{"member token in source 0", b64(`{"s":0,"t":"x"}`)},
		{"offset in source 1", b64(`{"s":1,"o":3}`)},
		{"unknown field", b64(`{"s":0,"x":1}`)},
		{"trailing data", b64(`{"s":0}{}`)},
		{"wrong types", b64(`{"s":"0"}`)},
		{"huge number", b64(`{"s":0,"o":1e400}`)},
		{"too long", b64(`{"s":1,"t":"` + strings.Repeat("x", maxPageToken) + `"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePageToken(tc.token)
			require.Error(t, err)
			assert.Equal(t, http.StatusBadRequest, icerest.AsError(err).Code)
		})
	}

	// A token of another listing, or a member's own, is refused by the
	// listing too.
	b, _ := fixture(t)
	for _, tok := range []string{pageToken{Source: 1, Member: "prod"}.encode(), "third:31"} {
		rec := do(t, b, http.MethodGet, "/v1/all/namespaces?pageToken="+url.QueryEscape(tok), "")
		assert.Equal(t, http.StatusBadRequest, rec.Code, tok)
	}
}

// FuzzPageToken: no page token panics the parser, and every token it
// takes means what it encodes to again.
func FuzzPageToken(f *testing.F) {
	for _, seed := range []string{"", pageToken{Source: 1, Member: "third", Token: "t", Skip: 2}.encode(),
		pageToken{Offset: 3}.encode(), "!!!", "e30"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePageToken(s)
		if err != nil {
			assert.Equal(t, http.StatusBadRequest, icerest.AsError(err).Code)
			return
		}
		again, err := parsePageToken(p.encode())
		require.NoError(t, err)
		assert.Equal(t, p, again)
	})
}
