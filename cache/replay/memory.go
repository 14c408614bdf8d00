package replay

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Memory is an in-process Store: one gateway, no sharing. It is bounded:
// once it holds MemoryMaxRecords records or MemoryMaxBytes of bodies, new
// claims are refused as ErrUnavailable (the request is not run, 503)
// until records expire. A kept record is never evicted early: that would
// let a retry apply twice.
type Memory struct {
	mu         sync.Mutex
	records    map[string]memEntry
	bytes      int64
	maxRecords int
	maxBytes   int64
	stop       chan struct{}
}

// Memory store bounds.
const (
	MemoryMaxRecords       = 100_000
	MemoryMaxBytes   int64 = 256 << 20
)

// ErrFull is a Memory store at its bounds; it wraps ErrUnavailable.
var ErrFull = fmt.Errorf("%w: the in-memory replay store is full", ErrUnavailable)

type memEntry struct {
	rec     Record
	expires time.Time
}

// NewMemory returns an empty in-process store that sweeps expired records.
func NewMemory() *Memory {
	return NewBoundedMemory(MemoryMaxRecords, MemoryMaxBytes)
}

// NewBoundedMemory is NewMemory with its own bounds.
func NewBoundedMemory(maxRecords int, maxBytes int64) *Memory {
	m := &Memory{records: map[string]memEntry{}, maxRecords: maxRecords, maxBytes: maxBytes, stop: make(chan struct{})}
	go m.sweep(time.Minute)
	return m
}

// put and del keep bytes in step with records; the lock must be held.
func (m *Memory) put(key string, e memEntry) {
	m.del(key)
	m.records[key] = e
	m.bytes += int64(len(e.rec.Body))
}

func (m *Memory) del(key string) {
	if old, ok := m.records[key]; ok {
		m.bytes -= int64(len(old.rec.Body))
		delete(m.records, key)
	}
}

func (m *Memory) sweep(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-t.C:
			m.mu.Lock()
			for k, e := range m.records {
				if now.After(e.expires) {
					m.del(k)
				}
			}
			m.mu.Unlock()
		}
	}
}

// live returns the unexpired entry for key; the lock must be held.
func (m *Memory) live(key string) (memEntry, bool) {
	e, ok := m.records[key]
	if ok && time.Now().After(e.expires) {
		m.del(key)
		return memEntry{}, false
	}
	return e, ok
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, key string, rec Record, lease time.Duration) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.live(key); ok {
		return e.rec, false, nil
	}
	if len(m.records) >= m.maxRecords || m.bytes >= m.maxBytes {
		return Record{}, false, ErrFull
	}
	m.put(key, memEntry{rec, time.Now().Add(lease)})
	return rec, true, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key)
	return e.rec, ok, nil
}

// Extend implements Store.
func (m *Memory) Extend(_ context.Context, key, owner string, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.live(key); ok && e.rec.Owner == owner {
		if e.rec.Sent {
			e.rec.LeaseUntil = time.Now().Add(lease).UnixMilli()
		} else {
			e.expires = time.Now().Add(lease)
		}
		m.put(key, e)
	}
	return nil
}

// MarkSent implements Store.
func (m *Memory) MarkSent(_ context.Context, key, owner string, lease, lifetime time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key)
	if !ok || e.rec.Owner != owner || e.rec.Final {
		return ErrClaimLost
	}
	e.rec.Sent, e.rec.LeaseUntil = true, time.Now().Add(lease).UnixMilli()
	e.expires = time.Now().Add(lifetime)
	m.put(key, e)
	return nil
}

// Finalize implements Store.
func (m *Memory) Finalize(_ context.Context, key, owner string, rec Record, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.live(key); ok && e.rec.Owner != owner {
		return nil // the claim was lost (lease expired and retaken): keep the newer one
	}
	m.put(key, memEntry{rec, time.Now().Add(ttl)})
	return nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, key, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.live(key); ok && e.rec.Owner == owner {
		m.del(key)
	}
	return nil
}

// TakeOver implements Store.
func (m *Memory) TakeOver(_ context.Context, key, owner string, lease time.Duration) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live(key)
	if !ok || !e.rec.Lapsed(time.Now()) {
		return e.rec, false, nil
	}
	e.rec.Owner, e.rec.LeaseUntil = owner, time.Now().Add(lease).UnixMilli()
	m.put(key, e)
	return e.rec, true, nil
}

// Close stops the sweeper.
func (m *Memory) Close() error {
	close(m.stop)
	return nil
}
