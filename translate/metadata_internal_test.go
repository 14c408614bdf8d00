package translate

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metadataJSON is a minimal valid v2 table metadata whose location is loc.
func metadataJSON(loc string) []byte {
	return []byte(fmt.Sprintf(`{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",`+
		`"location":%q,"last-sequence-number":0,"last-updated-ms":1700000000000,"last-column-id":1,`+
		`"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}],`+
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,`+
		`"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"properties":{}}`, loc))
}

// TestMetadataMemo: equal bytes are parsed once and share the result;
// other bytes are parsed on their own; failures and metadata above the
// size cap are parsed every time; the bytes bound evicts the oldest.
func TestMetadataMemo(t *testing.T) {
	m := newMetadataMemo(8, 1<<20)
	a1, err := m.parse(metadataJSON("file:///a"))
	require.NoError(t, err)
	a2, err := m.parse(metadataJSON("file:///a"))
	require.NoError(t, err)
	assert.Same(t, a1, a2, "the same bytes are served the same parse")
	b, err := m.parse(metadataJSON("file:///b"))
	require.NoError(t, err)
	assert.Equal(t, "file:///b", b.Location())
	assert.NotSame(t, a1, b)

	for _, bad := range []string{``, `{`, `{"format-version":9}`, `[]`, `{"format-version":2}`} {
		_, err := m.parse([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
	assert.Equal(t, 2, m.lru.Len(), "failures are not kept")

	one := int64(len(metadataJSON("file:///x0")))
	small := newMetadataMemo(100, 8*one+one/2) // room for 8 entries, cap one/8 of the bound ≥ one
	for i := range 10 {
		_, err := small.parse(metadataJSON(fmt.Sprintf("file:///x%d", i)))
		require.NoError(t, err)
	}
	assert.Equal(t, 8, small.lru.Len())
	assert.LessOrEqual(t, small.bytes, small.maxBytes)
	assert.False(t, small.lru.Contains(keyOf(metadataJSON("file:///x0"))), "the oldest went first")

	tiny := newMetadataMemo(100, one) // one > one/8: never kept
	_, err = tiny.parse(metadataJSON("file:///big"))
	require.NoError(t, err)
	assert.Zero(t, tiny.lru.Len())
}

// TestMetadataMemoConcurrent: concurrent parses of the same and of
// different metadata agree (run with -race).
func TestMetadataMemoConcurrent(t *testing.T) {
	m := newMetadataMemo(4, 1<<20)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loc := fmt.Sprintf("file:///t%d", i%6)
			md, err := m.parse(metadataJSON(loc))
			assert.NoError(t, err)
			assert.Equal(t, loc, md.Location())
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, m.lru.Len(), 4)
}
