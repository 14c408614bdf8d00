package translate

import (
	"crypto/sha256"
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Parsing a table's metadata is most of what a translated LoadTable costs
// once the answer is in the L1 cache (BENCHMARKS.md, "What a translated
// LoadTable costs"), and the same bytes come back on every hit. So the
// metadata iceberg-go parsed is kept, keyed by the SHA-256 of the exact
// bytes it was parsed from: equal bytes parse to equal metadata, whatever
// the backend, so a changed or lenient backend cannot be served a stale
// parse. Hashing costs a few percent of parsing. Callers share the parsed
// value and must not modify it.
var parsed = newMetadataMemo(1024, 32<<20)

// metadataMemo is a least-recently-used set of parsed metadata, bounded
// by entries and by the bytes they were parsed from. Metadata larger than
// an eighth of the bound is parsed every time rather than evict the rest.
type metadataMemo struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[[sha256.Size]byte, memoized]
	bytes    int64
	maxBytes int64
}

type memoized struct {
	md   table.Metadata
	size int64
}

func newMetadataMemo(entries int, maxBytes int64) *metadataMemo {
	m := &metadataMemo{maxBytes: maxBytes}
	m.lru, _ = simplelru.NewLRU(entries, func(_ [sha256.Size]byte, v memoized) { m.bytes -= v.size })
	return m
}

func keyOf(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }

// parse returns b's metadata, parsed once per distinct b.
func (m *metadataMemo) parse(b []byte) (table.Metadata, error) {
	size := int64(len(b))
	if size > m.maxBytes/8 {
		return table.ParseMetadataBytes(b)
	}
	key := keyOf(b)
	m.mu.Lock()
	v, ok := m.lru.Get(key)
	m.mu.Unlock()
	if ok {
		return v.md, nil
	}
	md, err := table.ParseMetadataBytes(b)
	if err != nil {
		return nil, err // failures are rare and not kept
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.lru.Contains(key) {
		m.lru.Add(key, memoized{md: md, size: size})
		m.bytes += size
		for m.bytes > m.maxBytes {
			m.lru.RemoveOldest()
		}
	}
	return md, nil
}
