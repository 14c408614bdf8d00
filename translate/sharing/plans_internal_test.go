package sharing

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
)

// TestPlanMemoBounds: plans are kept per metadata, snapshot and hints; a
// plan above maxPlanTasks is not kept; the total of kept tasks stays under
// maxPlannedTasks, the oldest plans going first.
func TestPlanMemoBounds(t *testing.T) {
	var m planMemo
	key := func(snap int64, hints string) planKey { return planKey{snap: snap, hints: hints} }
	_, ok := m.get(key(1, ""))
	assert.False(t, ok, "an empty memo")

	m.add(key(1, ""), make([]table.FileScanTask, 3))
	got, ok := m.get(key(1, ""))
	assert.True(t, ok)
	assert.Len(t, got, 3)
	_, ok = m.get(key(1, `{"op":"isNull"}`))
	assert.False(t, ok, "other hints, another plan")
	_, ok = m.get(key(2, ""))
	assert.False(t, ok, "another snapshot, another plan")

	m.add(key(3, ""), make([]table.FileScanTask, maxPlanTasks+1))
	_, ok = m.get(key(3, ""))
	assert.False(t, ok, "too big to keep")

	for snap := int64(10); snap < 10+maxPlannedTasks/maxPlanTasks+2; snap++ {
		m.add(key(snap, ""), make([]table.FileScanTask, maxPlanTasks))
	}
	assert.LessOrEqual(t, m.tasks, maxPlannedTasks)
	_, ok = m.get(key(1, ""))
	assert.False(t, ok, "the oldest went first")
	_, ok = m.get(key(10+maxPlannedTasks/maxPlanTasks+1, ""))
	assert.True(t, ok, "the newest stays")
}
