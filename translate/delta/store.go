package delta

import (
	"context"
	"sync"
	"time"
)

// Staged is a staging table: allocated by a Delta client, not yet created.
// It holds no credentials: those are vended anew on each request, so no
// secret outlives the call it was vended for.
type Staged struct {
	TableID   string   `json:"table-id"`
	Catalog   string   `json:"catalog"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
	Location  string   `json:"location"`
	Principal string   `json:"principal"`
}

// Store is the state the translator shares between replicas: staging
// tables (by table-id and by location) and per-table update locks. Memory
// serves one process; the gateway plugs in Redis when it is configured.
type Store interface {
	PutStaged(ctx context.Context, s Staged, ttl time.Duration) error
	StagedByID(ctx context.Context, id string) (*Staged, error)
	StagedByLocation(ctx context.Context, location string) (*Staged, error)
	DeleteStaged(ctx context.Context, s Staged) error
	// Lock serializes updates of one table (check etag, then commit), so two
	// updates asserting the same etag cannot both pass the check.
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// MemoryStore is the in-process Store.
type MemoryStore struct {
	mu     sync.Mutex
	staged map[string]memStaged
	byLoc  map[string]string
	locks  map[string]chan struct{}
	now    func() time.Time
}

type memStaged struct {
	s       Staged
	expires time.Time
}

// NewMemoryStore returns an empty in-process store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{staged: map[string]memStaged{}, byLoc: map[string]string{},
		locks: map[string]chan struct{}{}, now: time.Now}
}

func (m *MemoryStore) PutStaged(_ context.Context, s Staged, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.staged[s.TableID] = memStaged{s, m.now().Add(ttl)}
	m.byLoc[s.Location] = s.TableID
	return nil
}

func (m *MemoryStore) StagedByID(_ context.Context, id string) (*Staged, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.staged[id]
	if !ok || m.now().After(e.expires) {
		return nil, nil
	}
	s := e.s
	return &s, nil
}

func (m *MemoryStore) StagedByLocation(ctx context.Context, location string) (*Staged, error) {
	m.mu.Lock()
	id, ok := m.byLoc[location]
	m.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return m.StagedByID(ctx, id)
}

func (m *MemoryStore) DeleteStaged(_ context.Context, s Staged) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.staged, s.TableID)
	delete(m.byLoc, s.Location)
	return nil
}

// Lock waits for the key's lock or for ctx to end.
func (m *MemoryStore) Lock(ctx context.Context, key string) (func(), error) {
	for {
		m.mu.Lock()
		ch, held := m.locks[key]
		if !held {
			ch = make(chan struct{})
			m.locks[key] = ch
			m.mu.Unlock()
			return func() {
				m.mu.Lock()
				delete(m.locks, key)
				m.mu.Unlock()
				close(ch)
			}, nil
		}
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
