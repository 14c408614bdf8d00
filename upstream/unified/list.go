package unified

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// A listing of namespaces under a parent (the top level included) reads
// two sources in turn: first the children that rules make (a rule's
// prefix one level below the parent, or a level on the way to a deeper
// rule), then the listing of the member that holds the parent (the
// default member at the top level), filtered to the namespaces the
// unified catalog reaches there. A page token says which source is being
// read and where in it: the offset among the rule children, or the
// member's own page token and how many entries of that member page were
// already served, so a member's pagination carries on under ours whatever
// its page size.

// pageToken is a position in a merged namespace listing.
type pageToken struct {
	// Source is 0 while the rule children are read, 1 for the member's
	// listing.
	Source int `json:"s"`
	// Offset is the next rule child (source 0).
	Offset int `json:"o,omitempty"`
	// Member is the member listed (source 1), checked on return.
	Member string `json:"m,omitempty"`
	// Token is the member's page token for the page being read ("" for
	// its first page).
	Token string `json:"t,omitempty"`
	// Skip is how many entries of that page were served already.
	Skip int `json:"k,omitempty"`
}

// maxPageToken bounds a page token: its member's own token, encoded,
// with room to spare.
const maxPageToken = 8 << 10

func (p pageToken) encode() string {
	raw, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// parsePageToken reads a client's pageToken ("" is the start).
func parsePageToken(s string) (pageToken, error) {
	var p pageToken
	if s == "" {
		return p, nil
	}
	bad := func(why string) (pageToken, error) {
		return pageToken{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "invalid pageToken: %s", why)
	}
	if len(s) > maxPageToken {
		return bad("too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return bad("not a page token of this catalog")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || dec.More() {
		return bad("not a page token of this catalog")
	}
	switch {
	case p.Source != 0 && p.Source != 1:
		return bad("unknown source")
	case p.Offset < 0 || p.Skip < 0:
		return bad("negative position")
	case p.Source == 0 && (p.Member != "" || p.Token != "" || p.Skip != 0):
		return bad("inconsistent position")
	case p.Source == 1 && p.Offset != 0:
		return bad("inconsistent position")
	}
	return p, nil
}

// maxMemberCalls bounds the member pages one page of ours reads: a member
// that answers short pages makes a short page here too, never a loop.
const maxMemberCalls = 8

// listNamespaces serves a merged listNamespaces.
func (b *Backend) listNamespaces(w http.ResponseWriter, r *http.Request, req icerest.Request) error {
	q := req.Query // read, never changed: the member calls get queries of their own
	var parent []string
	if p := q.Get("parent"); p != "" {
		var err error
		if parent, err = icerest.DecodeNamespace(p, icerest.UnitSeparator); err != nil {
			return err
		}
	}
	_, paged := q["pageToken"]
	size := 0
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "pageSize must be a positive integer, got %q", s)
		}
		size, paged = n, true
	}
	pos, err := parsePageToken(q.Get("pageToken"))
	if err != nil {
		return err
	}
	// The member holding the parent, listed after the rule children.
	var home *target
	if len(parent) == 0 {
		if m := b.router.fallback(); m != nil {
			home = &target{m: m, mem: b.members[m.member]}
		}
	} else if t, err := b.target(parent); err == nil {
		home = &t
	} else if !b.router.ruleBelow(parent) {
		return err
	} // else a level on the way to rules, in no member: their children only
	if pos.Source == 1 && (home == nil || pos.Member != home.m.member) {
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "invalid pageToken: not one of this listing")
	}
	full := func(out [][]string) bool { return size > 0 && len(out) >= size }

	out := [][]string{}
	if pos.Source == 0 {
		children := b.ruleChildren(r, parent, home)
		for pos.Offset < len(children) && !full(out) {
			out = append(out, children[pos.Offset])
			pos.Offset++
		}
		if pos.Offset >= len(children) {
			pos = pageToken{Source: 1}
			if home != nil {
				pos.Member = home.m.member
			}
		}
	}
	next := ""
	switch {
	case pos.Source == 0:
		next = pos.encode()
	case home == nil:
	case full(out):
		next = pos.encode()
	default:
		var rerr error
		if next, rerr = b.listMember(w, r, parent, *home, &out, pos, size, paged); rerr != nil || next == "-" {
			return rerr // "-": the member's error is answered
		}
	}
	page := map[string]any{"namespaces": out}
	if next != "" {
		page["next-page-token"] = next
	}
	icerest.WriteJSON(w, http.StatusOK, page)
	return nil
}

// listMember reads home's listing of the parent from pos into out until
// the page is full or the listing ends, and returns our next page token
// ("" at the end). A member error is written to w and "-" returned.
func (b *Backend) listMember(w http.ResponseWriter, r *http.Request, parent []string, home target,
	out *[][]string, pos pageToken, size int, paged bool,
) (string, error) {
	for calls := 0; ; calls++ {
		if calls == maxMemberCalls {
			return pos.encode(), nil
		}
		q := url.Values{}
		if len(home.ns) > 0 {
			q.Set("parent", strings.Join(home.ns, icerest.UnitSeparator))
		}
		if paged || pos.Token != "" {
			q.Set("pageToken", pos.Token)
		}
		if size > 0 {
			q.Set("pageSize", strconv.Itoa(size-len(*out)+pos.Skip))
		}
		query := q.Encode()
		mrt := icerest.Route{Operation: icerest.OpListNamespaces, Prefix: home.m.member, HasPrefix: true}
		rec := b.call(r, home.mem, mrt, nil, &query)
		if rec.Status == http.StatusNotFound && len(parent) > 0 && b.router.ruleBelow(parent) {
			return "", nil // the parent is only a path to rules below it
		}
		if rec.Status != http.StatusOK {
			rec.WriteTo(w)
			return "-", nil
		}
		var page struct {
			Namespaces [][]string `json:"namespaces"`
			Next       *string    `json:"next-page-token"`
		}
		if err := json.Unmarshal(rec.Bytes(), &page); err != nil {
			return "", icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
				"member catalog %q answered listNamespaces with a malformed body: %v", home.m.member, err)
		}
		entries := page.Namespaces
		if pos.Skip > len(entries) {
			pos.Skip = len(entries)
		}
		i := pos.Skip
		for ; i < len(entries) && !(size > 0 && len(*out) >= size); i++ {
			if v, ok := b.childOf(parent, home, entries[i]); ok {
				*out = append(*out, v)
			}
		}
		if i < len(entries) { // the page is full before this member page ends
			pos.Skip = i
			return pos.encode(), nil
		}
		if page.Next == nil || *page.Next == "" {
			return "", nil
		}
		pos.Token, pos.Skip = *page.Next, 0
		if size == 0 || len(*out) >= size {
			return pos.encode(), nil
		}
	}
}

// childOf is member entry e, listed by home under the parent, as a child
// of the parent in the unified catalog; false when the unified catalog
// reaches e by another route, or not at all.
func (b *Backend) childOf(parent []string, home target, e []string) ([]string, bool) {
	if len(e) != len(home.ns)+1 || !hasPrefix(e, home.ns) {
		return nil, false
	}
	v := append(slices.Clone(parent), e[len(e)-1])
	m, ok := b.router.route(v)
	if !ok || m != home.m || !slices.Equal(m.toMember(v), e) {
		return nil, false
	}
	return v, true
}

// ruleChildren are the children of parent that rules make, in rule
// order: the next level of every rule below the parent, when the member
// listing would not show it already. A rule's own namespace shows when
// its member has it; a level on the way to deeper rules shows always.
func (b *Backend) ruleChildren(r *http.Request, parent []string, home *target) [][]string {
	var out [][]string
	seen := map[string]bool{}
	rules := slices.Clone(b.router.mappings)
	slices.SortFunc(rules, func(x, y *mapping) int { return slices.Compare(x.virtual, y.virtual) })
	for _, m := range rules {
		if len(m.virtual) <= len(parent) || !hasPrefix(m.virtual, parent) {
			continue
		}
		v := m.virtual[:len(parent)+1]
		key := strings.Join(v, icerest.UnitSeparator)
		if seen[key] {
			continue
		}
		seen[key] = true
		t, err := b.target(v)
		if err != nil { // in no member: a level on the way to rules
			out = append(out, v)
			continue
		}
		// The member listing shows the children it holds under the same
		// mapping as the parent.
		same := home != nil && t.m == home.m
		exists, known := b.exists(r, t)
		switch {
		case exists && !same, !known && !same:
			out = append(out, v)
		case !exists && known && b.router.ruleBelow(v):
			out = append(out, v)
		}
	}
	return out
}
