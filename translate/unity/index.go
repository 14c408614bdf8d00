package unity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lakegate/lakegate/translate/delta"
)

// TableIndex maps UC table ids (a table's Iceberg uuid, TableInfo's
// table_id) to the tables' names: generateTemporaryTableCredentials names
// a table by id alone, and Iceberg REST finds tables only by name.
//
// It is filled whenever this API shows or creates a table (getTable,
// listTables, createTable), which is how a client learns an id. An entry
// is a hint, never trusted: the table it names is loaded and its uuid
// compared before anything is vended, so a table renamed or dropped since
// costs a lookup miss, not a wrong answer. A miss falls back to a bounded
// scan of what the caller may list (Service.FindTable), which refills it.
type TableIndex interface {
	Remember(ctx context.Context, id string, ref delta.Ref) error
	Lookup(ctx context.Context, id string) (*delta.Ref, error)
}

// MemoryIndex is the index of one process (no Redis configured). It keeps
// at most maxMemoryIndex ids; past that it forgets an arbitrary one, which
// a later scan finds again.
type MemoryIndex struct {
	mu  sync.Mutex
	ids map[string]delta.Ref
}

// maxMemoryIndex bounds the memory index: a table id and name are about
// 100 bytes, so some 10 MB at most.
const maxMemoryIndex = 100_000

// NewMemoryIndex returns an empty in-process index.
func NewMemoryIndex() *MemoryIndex { return &MemoryIndex{ids: map[string]delta.Ref{}} }

func (m *MemoryIndex) Remember(_ context.Context, id string, ref delta.Ref) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, known := m.ids[id]; !known && len(m.ids) >= maxMemoryIndex {
		for old := range m.ids {
			delete(m.ids, old)
			break
		}
	}
	m.ids[id] = ref
	return nil
}

func (m *MemoryIndex) Lookup(_ context.Context, id string) (*delta.Ref, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ref, ok := m.ids[id]
	if !ok {
		return nil, nil
	}
	return &ref, nil
}

// RedisIndex is the index replicas share, and which outlives a restart:
// one key per table id, <prefix><id> → the table's name as JSON, expiring
// redisIndexTTL after the table was last shown (a table nobody looks at
// for that long is found again by a scan). One key per command, so it
// runs on a Redis Cluster as is.
type RedisIndex struct {
	rdb    redis.UniversalClient
	prefix string
}

// redisIndexTTL is how long an id is remembered after it was last shown.
const redisIndexTTL = 30 * 24 * time.Hour

// NewRedisIndex keeps the index in rdb under keys starting with prefix.
func NewRedisIndex(rdb redis.UniversalClient, prefix string) *RedisIndex {
	return &RedisIndex{rdb: rdb, prefix: prefix}
}

// indexEntry is a table's name as the index stores it.
type indexEntry struct {
	Catalog   string   `json:"catalog"`
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func (r *RedisIndex) Remember(ctx context.Context, id string, ref delta.Ref) error {
	b, err := json.Marshal(indexEntry(ref))
	if err != nil {
		return err
	}
	return r.rdb.Set(ctx, r.prefix+id, b, redisIndexTTL).Err()
}

func (r *RedisIndex) Lookup(ctx context.Context, id string) (*delta.Ref, error) {
	b, err := r.rdb.Get(ctx, r.prefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e indexEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Catalog == "" || len(e.Namespace) == 0 || e.Name == "" {
		return nil, fmt.Errorf("table id %s: unreadable index entry", id)
	}
	ref := delta.Ref(e)
	return &ref, nil
}
