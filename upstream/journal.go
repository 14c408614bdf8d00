package upstream

import (
	"net/http"
	"slices"
	"time"

	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// WithJournal records in j every table commit the backend confirms
// through this pipeline (commitlog: the catalog browser's "last
// commits").
func WithJournal(j *commitlog.Journal) PipelineOption { return func(p *Pipeline) { p.Journal = j } }

// journaled are the operations whose success is a table commit.
var journaled = map[string]bool{
	icerest.OpUpdateTable: true, icerest.OpCommitTransaction: true,
	icerest.OpCreateTable: true, icerest.OpRegisterTable: true,
}

// serveJournaled runs a commit and, once the backend has confirmed it
// (a 2xx that is not a replay of an earlier request's answer), notes
// each table it changed in the journal. The answer is captured to read
// its status and metadata location; the record is written by the
// journal's own goroutine, not here.
func (p *Pipeline) serveJournaled(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, refreshed bool) {
	rec := Capture(func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		p.serveRequest(w, r, q, principal, refreshed)
	}, r, q)
	ok := rec.Status >= 200 && rec.Status < 300 && rec.Header.Get(ReplayedHeader) == ""
	var location string
	if ok && q.Route.Operation != icerest.OpCommitTransaction {
		// A staged create has none: nothing was created yet.
		location = rec.Table().MetadataLocation
		ok = location != ""
	}
	rec.WriteTo(w)
	if ok {
		p.note(r, q, principal, location)
	}
}

// note queues one entry per table q committed.
func (p *Pipeline) note(r *http.Request, q icerest.Request, principal, location string) {
	base := commitlog.Entry{Time: time.Now().UTC(), Principal: principal, Operation: q.Route.Operation,
		IdempotencyKey: r.Header.Get("Idempotency-Key"), MetadataLocation: location}
	if rec := telemetry.From(r.Context()); rec != nil {
		base.Door = rec.API
	}
	rt := q.Route
	switch rt.Operation {
	case icerest.OpCreateTable, icerest.OpRegisterTable:
		e := base
		e.Kinds = []string{map[string]string{icerest.OpCreateTable: "create", icerest.OpRegisterTable: "register"}[rt.Operation]}
		p.Journal.Note(commitlog.Table{Catalog: p.Catalog, Namespace: rt.Namespace, Name: q.Touched.Name}, e)
	default:
		for _, c := range q.Commits {
			e := base
			e.Kinds, e.SnapshotIDs = commitKinds(c), c.Snapshots
			t := commitlog.Table{Catalog: p.Catalog, Namespace: rt.Namespace, Name: rt.Table}
			if rt.Operation == icerest.OpCommitTransaction {
				t.Namespace, t.Name = c.Table.Namespace, c.Table.Name
			}
			p.Journal.Note(t, e)
		}
	}
}

// actionKinds names what an update action changes, for people; an
// action not named here is shown as itself.
var actionKinds = map[string]string{
	"add-schema": "schema", "set-current-schema": "schema",
	"add-spec": "partition spec", "set-default-spec": "partition spec", "remove-partition-specs": "partition spec",
	"add-sort-order": "sort order", "set-default-sort-order": "sort order",
	"set-properties": "properties", "remove-properties": "properties",
	"set-snapshot-ref": "refs", "remove-snapshot-ref": "refs",
	"remove-snapshots": "expire snapshots", "set-location": "location",
	"upgrade-format-version": "format version", "assign-uuid": "create",
	"set-statistics": "statistics", "remove-statistics": "statistics",
	"set-partition-statistics": "statistics", "remove-partition-statistics": "statistics",
	"add-encryption-key": "encryption", "remove-encryption-key": "encryption",
}

// commitKinds are what c changed: its snapshots' operations first
// (append, overwrite, ...), then its other changes, each once. A ref
// moved to a snapshot the commit adds is part of adding it.
func commitKinds(c icerest.Commit) []string {
	kinds := slices.Clone(c.Operations)
	if len(c.Snapshots) > 0 && len(kinds) == 0 {
		kinds = append(kinds, "snapshot")
	}
	for _, a := range c.Actions {
		k, ok := actionKinds[a]
		switch {
		case a == "add-snapshot" || (k == "refs" && len(c.Snapshots) > 0):
			continue
		case !ok:
			k = a
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if c.AssertCreate && !slices.Contains(kinds, "create") {
		kinds = append([]string{"create"}, kinds...)
	}
	return kinds
}
