// Package commitlog keeps a short record of the recent commits that went
// through the gateway, per table: who committed, when, through which
// door, what kind of change, and what it resulted in. It is what the
// catalog browser shows as a table's "last commits"; the access log has
// every commit too, but is not readable per table.
//
// Records are small and hold no body and no secret: names, a principal
// id, operation kinds, snapshot ids, a metadata location and the
// client's Idempotency-Key. They are bounded per table (MaxPerTable, the
// newest kept) and in time (TTL). The Redis store is shared by replicas;
// the memory store is one process's.
package commitlog

import (
	"context"
	"time"

	"github.com/lakegate/lakegate/cache"
)

// Bounds of what is kept.
const (
	// MaxPerTable is how many commits a table's record keeps, newest first.
	MaxPerTable = 50
	// TTL is how long a table's record lives after its last commit.
	TTL = 7 * 24 * time.Hour
	// maxTables bounds the tables the memory store keeps (the least
	// recently committed to is dropped first).
	maxTables = 10000
)

// Table names a table of one of the gateway's catalogs.
type Table struct {
	Catalog   string
	Namespace []string
	Name      string
}

// Entry is one commit the backend confirmed.
type Entry struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	// Door is the front door the commit came through: iceberg, delta or
	// unity ("" when not through a door).
	Door string `json:"door,omitempty"`
	// Operation is the Iceberg operation: updateTable or
	// commitTransaction (one entry per table it changed).
	Operation string `json:"operation"`
	// Kinds are what the commit changed, read from its updates: the
	// snapshot operations it adds (append, overwrite, delete, replace) and
	// the other changes (schema, partition spec, sort order, properties,
	// refs, ...).
	Kinds []string `json:"kinds"`
	// SnapshotIDs are the snapshots it adds.
	SnapshotIDs []int64 `json:"snapshot-ids,omitempty"`
	// MetadataLocation is the table's metadata file after the commit, when
	// the backend's answer names it (an updateTable's does).
	MetadataLocation string `json:"metadata-location,omitempty"`
	// IdempotencyKey is the client's Idempotency-Key, if it sent one.
	IdempotencyKey string `json:"idempotency-key,omitempty"`
}

// Store keeps the entries of each table.
type Store interface {
	// Add puts e first in t's record, drops what is past MaxPerTable and
	// renews the record's TTL.
	Add(ctx context.Context, t Table, e Entry) error
	// List returns t's entries, newest first.
	List(ctx context.Context, t Table) ([]Entry, error)
	// Shared tells whether replicas see the same entries.
	Shared() bool
}

// key is a table's key: the LoadTable cache's, unambiguous for any
// names.
func key(t Table) string { return cache.TableKey(t.Catalog, t.Namespace, t.Name) }
