package policies

import (
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// virtualCache is a topdown.VirtualCache for one evaluation: what OPA's
// own does (remember each rule and function result by its full ref, in a
// stack of frames for `with`), stored flat. OPA's is a trie with a hash
// map and a node per ref segment, some fifty allocations for one decision
// of the shipped roles policy; this one keeps entries in a slice, found
// by a hash of the whole ref and then compared term by term, and is
// pooled between evaluations.
type virtualCache struct {
	frames []vcFrame
	// refs holds copies of the cached refs: callers may reuse the slice
	// they pass in, as OPA's trie (which keeps only the terms) allows.
	refs []*ast.Term
}

type vcFrame struct {
	entries []vcEntry
	// byHash indexes entries once a frame grows past linearScan, so a
	// policy that calls a function for every item of a long page stays
	// linear overall.
	byHash map[int]int // hash -> index of the latest entry with it
}

type vcEntry struct {
	hash      int
	ref       ast.Ref
	value     *ast.Term
	undefined bool
	prev      int // index of the previous entry with the same hash, or -1
}

const (
	linearScan = 16
	// maxPooledEntries keeps a cache that an unusually big evaluation
	// grew (frames, entries, ref copies) from staying in the pool.
	maxPooledEntries = 256
)

var virtualCaches = sync.Pool{New: func() any {
	return &virtualCache{frames: make([]vcFrame, 0, 4), refs: make([]*ast.Term, 0, 128)}
}}

func newVirtualCache() *virtualCache {
	c := virtualCaches.Get().(*virtualCache)
	c.Push()
	return c
}

// release returns c to the pool. The evaluation that used it is over, and
// nothing of OPA's keeps the cache itself, only the terms it handed out.
func (c *virtualCache) release() {
	for len(c.frames) > 0 {
		c.Pop()
	}
	n := 0
	for _, f := range c.frames[:cap(c.frames)] { // popped frames keep their storage
		n += cap(f.entries)
	}
	if n > maxPooledEntries || cap(c.frames) > 16 || cap(c.refs) > 8*maxPooledEntries {
		return
	}
	clear(c.refs)
	c.refs = c.refs[:0]
	virtualCaches.Put(c)
}

func (c *virtualCache) Push() {
	if len(c.frames) < cap(c.frames) {
		c.frames = c.frames[:len(c.frames)+1] // reuse the popped frame's storage
		return
	}
	c.frames = append(c.frames, vcFrame{})
}

func (c *virtualCache) Pop() {
	f := &c.frames[len(c.frames)-1]
	clear(f.entries) // drop the terms
	f.entries = f.entries[:0]
	if f.byHash != nil {
		clear(f.byHash)
	}
	c.frames = c.frames[:len(c.frames)-1]
}

func refHash(ref ast.Ref) int {
	h := len(ref)
	for _, t := range ref {
		h = h*31 + t.Value.Hash()
	}
	return h
}

func (f *vcFrame) find(ref ast.Ref, h int) int {
	if len(f.entries) <= linearScan {
		for i := range f.entries {
			if e := &f.entries[i]; e.hash == h && e.ref.Equal(ref) {
				return i
			}
		}
		return -1
	}
	i, ok := f.byHash[h]
	if !ok {
		return -1
	}
	for ; i >= 0; i = f.entries[i].prev {
		if f.entries[i].ref.Equal(ref) {
			return i
		}
	}
	return -1
}

// Get returns the value cached for ref: (value, false) when defined,
// (nil, true) when recorded as undefined, (nil, false) when not cached.
func (c *virtualCache) Get(ref ast.Ref) (*ast.Term, bool) {
	f := &c.frames[len(c.frames)-1]
	i := f.find(ref, refHash(ref))
	if i < 0 {
		return nil, false
	}
	if e := &f.entries[i]; !e.undefined {
		return e.value, false
	}
	return nil, true
}

// Put records value for ref; a nil value records ref as undefined.
func (c *virtualCache) Put(ref ast.Ref, value *ast.Term) {
	f := &c.frames[len(c.frames)-1]
	h := refHash(ref)
	i := f.find(ref, h)
	if i < 0 {
		i = c.add(f, ref, h)
	}
	if e := &f.entries[i]; value != nil {
		e.value = value
	} else {
		e.undefined = true
	}
}

func (c *virtualCache) add(f *vcFrame, ref ast.Ref, h int) int {
	if cap(c.refs)-len(c.refs) < len(ref) {
		// A new block; refs already handed out keep the old one.
		c.refs = make([]*ast.Term, 0, max(2*cap(c.refs), len(ref)))
	}
	start := len(c.refs)
	c.refs = append(c.refs, ref...)
	i := len(f.entries)
	f.entries = append(f.entries, vcEntry{hash: h, ref: c.refs[start:len(c.refs):len(c.refs)], prev: -1})
	switch {
	case i == linearScan:
		// Past linear scanning: index every entry so far.
		if f.byHash == nil {
			f.byHash = make(map[int]int, 2*linearScan)
		}
		for j := range f.entries {
			f.link(j)
		}
	case i > linearScan:
		f.link(i)
	}
	return i
}

func (f *vcFrame) link(i int) {
	e := &f.entries[i]
	if prev, ok := f.byHash[e.hash]; ok {
		e.prev = prev
	}
	f.byHash[e.hash] = i
}

// Keys returns the refs cached with a value in the active frame, as
// copies: OPA's trie builds new refs for its answer too.
func (c *virtualCache) Keys() []ast.Ref {
	f := &c.frames[len(c.frames)-1]
	var keys []ast.Ref
	for i := range f.entries {
		if f.entries[i].value != nil {
			keys = append(keys, slices.Clone(f.entries[i].ref))
		}
	}
	return keys
}
