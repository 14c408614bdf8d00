package sharing

import (
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Planning a query over the manifests (planning local) is most of what a
// query of an unchanged table costs (BENCHMARKS.md): the manifest list and
// every manifest are read and decoded again. The files of one snapshot are
// fixed (manifests are immutable, and a snapshot's list never changes), so
// the plan of one snapshot of one parsed metadata under one set of hints is
// kept and served to the next query. The key holds the parsed metadata
// itself: translate.ParsedMetadata shares one parse per distinct metadata
// bytes, and historical versions come from s.metadata, so a table whose
// metadata changed in any byte is planned again. Limits are applied after.
// Memory: at most maxPlannedTasks file tasks (each a data file with its
// column stats), no plan above maxPlanTasks kept.
const (
	maxPlannedTasks = 50_000
	maxPlanTasks    = 10_000
	maxPlans        = 256
)

type planKey struct {
	meta  table.Metadata // compared by identity: one value per parse
	snap  int64
	hints string
}

func planKeyOf(v version, q QueryRequest) planKey {
	return planKey{meta: v.Meta, snap: v.Snap.SnapshotID,
		hints: string(q.JSONPredicateHints) + "\x00" + strings.Join(q.PredicateHints, "\x00")}
}

// planMemo is a least-recently-used set of plans bounded by their tasks.
type planMemo struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[planKey, []table.FileScanTask]
	tasks int
}

func (m *planMemo) get(k planKey) ([]table.FileScanTask, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lru == nil {
		return nil, false
	}
	return m.lru.Get(k)
}

// add keeps tasks, which no one may modify from now on.
func (m *planMemo) add(k planKey, tasks []table.FileScanTask) {
	if len(tasks) > maxPlanTasks {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lru == nil {
		m.lru, _ = simplelru.NewLRU(maxPlans, func(_ planKey, t []table.FileScanTask) { m.tasks -= len(t) })
	}
	if m.lru.Contains(k) {
		return
	}
	m.lru.Add(k, tasks)
	m.tasks += len(tasks)
	for m.tasks > maxPlannedTasks {
		m.lru.RemoveOldest()
	}
}
