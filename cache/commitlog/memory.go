package commitlog

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is a Store in this process: each replica sees only the commits
// it served. It keeps at most maxTables tables, dropping the one least
// recently committed to.
type Memory struct {
	mu     sync.Mutex
	tables map[string]*list.Element // of *memTable, most recent first
	order  *list.List
	now    func() time.Time
}

type memTable struct {
	key     string
	entries []Entry // newest first
	expires time.Time
}

// NewMemory makes an empty memory store.
func NewMemory() *Memory {
	return &Memory{tables: map[string]*list.Element{}, order: list.New(), now: time.Now}
}

// Add implements Store.
func (m *Memory) Add(_ context.Context, t Table, e Entry) error {
	k := key(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.tables[k]
	if !ok {
		if m.order.Len() >= maxTables {
			oldest := m.order.Back()
			delete(m.tables, oldest.Value.(*memTable).key)
			m.order.Remove(oldest)
		}
		el = m.order.PushFront(&memTable{key: k})
		m.tables[k] = el
	}
	m.order.MoveToFront(el)
	mt := el.Value.(*memTable)
	if m.now().After(mt.expires) {
		mt.entries = nil
	}
	mt.entries = slices.Insert(mt.entries, 0, e)
	if len(mt.entries) > MaxPerTable {
		mt.entries = mt.entries[:MaxPerTable]
	}
	mt.expires = m.now().Add(TTL)
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, t Table) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.tables[key(t)]
	if !ok {
		return nil, nil
	}
	mt := el.Value.(*memTable)
	if m.now().After(mt.expires) {
		delete(m.tables, mt.key)
		m.order.Remove(el)
		return nil, nil
	}
	return slices.Clone(mt.entries), nil
}

// Shared implements Store: a process's memory is its own.
func (*Memory) Shared() bool { return false }
