package embedded

import (
	"encoding/base64"
	"sort"
)

// paginate returns one page of items (sorted by key here) after the page
// token, and the token of the next page ("" on the last page). Tokens are
// the base64 of the last key returned: stateless, and stable while items
// are added or removed between pages.
func paginate[T any](items []T, key func(T) string, token string, size int) ([]T, string, error) {
	sort.Slice(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	start := 0
	if token != "" {
		after, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return nil, "", badRequest("invalid pageToken %q", token)
		}
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > string(after) })
	}
	if size <= 0 || start+size >= len(items) {
		return items[start:], "", nil
	}
	page := items[start : start+size]
	return page, base64.RawURLEncoding.EncodeToString([]byte(key(page[len(page)-1]))), nil
}
