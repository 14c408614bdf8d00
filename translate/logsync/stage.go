// Package logsync is the pipeline stage that keeps the tables whose truth
// is a Delta log (EXTERNAL Delta tables: their engines commit straight to
// their _delta_log and never tell the catalog) in step with their logs.
//
// The stage is each catalog's upstream.Refresher, so it sits where every
// door's call enters the pipeline: an Iceberg LoadTable, the UC Delta
// API's load and UC's getTable and listTables (translate/delta loads
// through the pipeline), and Delta Sharing's loads. Before such a load is
// answered, the stage lists the table's log and, when the answer is older
// than the log's latest version, has the Delta translator (Log) bring the
// Iceberg side up to it; the load is then served again. Its own calls
// (Log's loads and commits) enter the pipeline beneath it, so a sync
// never re-enters the stage, and no context flag tells them apart.
//
// The promise it keeps: a load answers at least the log version that was
// latest when the load began. The log is listed after the load began, and
// a load that finds the table behind that version serves it again once
// the table is at it, whoever synced it (this load, another load waiting
// on the same lock, another replica).
package logsync

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Table names a table of a lakegate catalog.
type Table struct {
	Catalog   string
	Namespace []string
	Name      string
}

// Log is the Delta side of the stage: what a Delta log says and how a
// table's Iceberg side is brought to it (translate/delta). Its calls reach
// the catalog beneath the stage. Its errors are in the Iceberg model: the
// pipeline writes them as they are.
type Log interface {
	// Owned reports, from a table's properties, a table whose truth is
	// its Delta log.
	Owned(props map[string]string) bool
	// Synced is the log version a table with these properties was last
	// brought to; ok is false when it never was.
	Synced(props map[string]string) (v int64, ok bool)
	// Latest lists the table's log: its latest version; ok is false when
	// the log has no commit yet, or the table is no longer the log's.
	Latest(ctx context.Context, t Table) (v int64, ok bool, err error)
	// SyncTo brings the table's Iceberg side to version v of its log or
	// later, under the table's lock shared by the replicas; it does
	// nothing when the table is there already.
	SyncTo(ctx context.Context, t Table, v int64) error
	// Writable refuses an Iceberg write to the table when its truth is
	// its Delta log (a missing table is the write's own answer to give).
	Writable(ctx context.Context, t Table) error
}

// Stage is the log sync stage of the catalogs' pipelines
// (upstream.Refresher). Build it with New.
type Stage struct {
	log    Log
	tables registry
}

// New is the stage over log.
func New(log Log) *Stage {
	return &Stage{log: log, tables: registry{byName: map[string][]*entry{}}}
}

// Refresh brings a table whose truth is its Delta log up to the log's
// latest version before its LoadTable answer is served. answer is what
// the pipeline read of the answer in its one pass; for every other table
// the stage looks at its properties only. changed reports that the table
// is newer than answer: the pipeline then serves the load again.
func (s *Stage) Refresh(ctx context.Context, catalog string, rt icerest.Route, answer *icerest.TableAnswer) (bool, error) {
	if answer == nil || !s.log.Owned(answer.Properties) {
		s.tables.forget(catalog, rt.Namespace, rt.Table)
		return false, nil
	}
	t := Table{Catalog: catalog, Namespace: rt.Namespace, Name: rt.Table}
	served, ok := s.log.Synced(answer.Properties)
	if !ok {
		served = -1
	}
	// Listed now, after the load began: at least the version that was
	// latest then.
	latest, ok, err := s.log.Latest(ctx, t)
	if err != nil || !ok || served >= latest {
		return false, err
	}
	if err := s.syncTo(ctx, t, latest); err != nil {
		return false, err
	}
	// Behind the log's latest: serve the load again, whoever synced it
	// (a load that waited on the lock finds it synced by another, and
	// must not serve what it loaded before).
	return true, nil
}

// syncTo syncs t to v, one sync of a table at a time in this process: the
// loads that arrive together wait here rather than in the store's lock
// (a Redis round trip each with a Redis store), then find the table
// synced.
func (s *Stage) syncTo(ctx context.Context, t Table, v int64) error {
	e := s.tables.learn(t)
	select {
	case e.gate <- struct{}{}:
	case <-ctx.Done():
		return icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"waiting for the sync of the Delta log of %v: %v", t.Name, ctx.Err())
	}
	defer func() { <-e.gate }()
	return s.log.SyncTo(ctx, t, v)
}

// CheckWrite refuses an Iceberg updateTable or commitTransaction that
// touches a table whose truth is its Delta log: the next sync would undo
// it. The route's table, or every table of a transaction, as the
// request's one parse read them (q.Touched).
func (s *Stage) CheckWrite(ctx context.Context, catalog string, q icerest.Request) error {
	rt := q.Route
	ids := []icerest.Identifier{{Namespace: rt.Namespace, Name: rt.Table}}
	if rt.Operation == icerest.OpCommitTransaction {
		ids = q.Touched.Identifiers
	}
	for _, id := range ids {
		if err := s.log.Writable(ctx, Table{Catalog: catalog, Namespace: id.Namespace, Name: id.Name}); err != nil {
			return err
		}
	}
	return nil
}

// registry is the tables this process has seen to be a Delta log's: it
// learns one from a load answer whose properties say so, and forgets it
// when an answer says otherwise (dropped and created again as Iceberg,
// or registered from UniForm metadata). Each has the gate its syncs pass
// one at a time. Entries are found by table name, a lookup that costs a
// plain table's load no allocation.
type registry struct {
	mu     sync.RWMutex
	byName map[string][]*entry
}

type entry struct {
	table Table
	gate  chan struct{}
}

func (r *registry) learn(t Table) *entry {
	r.mu.RLock()
	e := r.find(t.Catalog, t.Namespace, t.Name)
	r.mu.RUnlock()
	if e != nil {
		return e
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e = r.find(t.Catalog, t.Namespace, t.Name); e == nil {
		t.Namespace = slices.Clone(t.Namespace) // the route's is the request's
		e = &entry{table: t, gate: make(chan struct{}, 1)}
		r.byName[t.Name] = append(r.byName[t.Name], e)
	}
	return e
}

func (r *registry) forget(catalog string, ns []string, name string) {
	r.mu.RLock()
	known := r.find(catalog, ns, name) != nil
	r.mu.RUnlock()
	if !known {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byName[name] = slices.DeleteFunc(r.byName[name], func(e *entry) bool { return e.is(catalog, ns, name) })
	if len(r.byName[name]) == 0 {
		delete(r.byName, name)
	}
}

// find is the entry of a table; the caller holds mu.
func (r *registry) find(catalog string, ns []string, name string) *entry {
	for _, e := range r.byName[name] {
		if e.is(catalog, ns, name) {
			return e
		}
	}
	return nil
}

func (e *entry) is(catalog string, ns []string, name string) bool {
	return e.table.Name == name && e.table.Catalog == catalog && slices.Equal(e.table.Namespace, ns)
}
