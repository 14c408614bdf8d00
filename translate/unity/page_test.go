package unity

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listCatalogs pages: max_results names after page_token, and a token
// while more follow; following the tokens yields every name once.
func TestCatalogPage(t *testing.T) {
	all := []string{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		query string
		page  []string
		next  string
	}{
		{"", all, ""},
		{"max_results=0", all, ""},
		{"max_results=5", all, ""},
		{"max_results=9", all, ""},
		{"max_results=2", []string{"a", "b"}, "b"},
		{"max_results=2&page_token=b", []string{"c", "d"}, "d"},
		{"max_results=2&page_token=d", []string{"e"}, ""},
		{"page_token=c", []string{"d", "e"}, ""},
		{"page_token=e", []string{}, ""},
		// a token naming a catalog gone (or hidden) since goes on after it
		{"max_results=1&page_token=bb", []string{"c"}, "c"},
		{"page_token=zz", []string{}, ""},
	} {
		page, next, err := CatalogPage(all, query(tc.query))
		require.NoError(t, err, tc.query)
		assert.Equal(t, tc.page, append([]string{}, page...), tc.query)
		assert.Equal(t, tc.next, next, tc.query)
	}
	var seen []string
	token := ""
	for range len(all) + 1 {
		page, next, err := CatalogPage(all, query("max_results=2&page_token="+token))
		require.NoError(t, err)
		seen = append(seen, page...)
		if next == "" {
			break
		}
		token = next
	}
	assert.Equal(t, all, seen)
	page, next, err := CatalogPage(nil, query("max_results=3"))
	require.NoError(t, err)
	assert.Empty(t, page)
	assert.Empty(t, next)
}

func TestMaxResults(t *testing.T) {
	for _, bad := range []string{"-1", "x", "1.5", " 1"} {
		_, _, err := CatalogPage([]string{"a"}, query("max_results="+bad))
		requireError(t, err, http.StatusBadRequest, InvalidArgument, `max_results must be a non-negative integer, not "`+bad+`"`, bad)
		_, err = pageQuery(query("max_results="+bad), maxTablesPage)
		requireError(t, err, http.StatusBadRequest, InvalidArgument, `max_results must be a non-negative integer, not "`+bad+`"`, bad)
	}
	for q, want := range map[string]string{
		"":                           "",
		"max_results=0":              "",
		"max_results=7":              "pageSize=7",
		"max_results=51":             "pageSize=50",
		"page_token=t%26x":           "pageToken=t%26x",
		"max_results=3&page_token=x": "pageSize=3&pageToken=x",
	} {
		got, err := pageQuery(query(q), maxTablesPage)
		require.NoError(t, err, q)
		assert.Equal(t, want, got.Encode(), q)
	}
}
