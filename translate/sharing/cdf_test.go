package sharing

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
)

// Row keys tell apart what a naive join would not: null from "", and
// values split differently across columns.
func TestRowKeyDistinguishesRows(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	a, c := b.Field(0).(*array.StringBuilder), b.Field(1).(*array.StringBuilder)
	for _, row := range [][2]*string{{ptr("a"), ptr("bc")}, {ptr("ab"), ptr("c")}, {nil, ptr("")}, {ptr(""), ptr("")}, {ptr("a"), ptr("bc")}} {
		for i, v := range row {
			sb := []*array.StringBuilder{a, c}[i]
			if v == nil {
				sb.AppendNull()
			} else {
				sb.Append(*v)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	keys := map[string]int{}
	for i := 0; i < int(rec.NumRows()); i++ {
		keys[rowKey(rec, i)]++
	}
	assert.Len(t, keys, 4, "rows 0 and 4 are the same row; the others all differ")
	assert.Equal(t, 2, keys[rowKey(rec, 0)])
}

func ptr(s string) *string { return &s }
