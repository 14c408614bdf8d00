package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// A keyed request whose outcome is unknown (it reached the backend, then
// failed with a 5xx, a timeout or a broken connection, or its gateway
// died) is resolved by the first retry, rather than run again blindly or
// refused for the key's whole lifetime:
//
//   - A backend that dedupes keys itself (it advertises
//     idempotency-key-lifetime, and the key is younger than that) is sent
//     the request again with the same forwarded key: it answers from its
//     own record if the first one was applied.
//   - A table commit (updateTable) that adds snapshots landed if and only
//     if the table holds those snapshot ids: clients choose them at random
//     from 2^63, so no other commit adds the same one. If it landed, the
//     retry is answered with the table as it is now, which includes it.
//   - If those snapshots are not there, the first request may still be on
//     its way (a slow backend that does not cancel on disconnect). The
//     commit is run again only when it excludes itself: every branch it
//     moves is asserted (assert-ref-snapshot-id) at the snapshot it
//     replaces, or it asserts that the table does not exist yet
//     (assert-create). Then whichever copy lands first makes the other's
//     requirement fail, so the backend applies it once. A copy that fails
//     that way (409) is looked up again: landed, it is answered as such;
//     not found, the outcome stays unknown (the snapshot may since have
//     been expired), never a 409 that would make a client commit again.
//   - A transaction (commitTransaction) is decided the same way, table by
//     table: landed when every change is found (the retry gets its 204),
//     run again when none is and each excludes itself.
//   - Anything else (property, schema or view changes, namespace and
//     table creation without a client-chosen id) cannot be decided from
//     what a catalog shows: the retry gets 500
//     CommitStateUnknownException for the key's lifetime.
//
// This relies on the backend checking a commit's requirements atomically
// with applying it, as the spec requires; a backend that does not can
// apply a commit twice whatever lakegate does.

// resolve takes over the key's unknown outcome and answers the retry. It
// reports false when another request took the key over first (or its
// record expired): the caller looks again.
func (g *Replayer) resolve(w http.ResponseWriter, r *http.Request, q icerest.Request, key string, next Handler) bool {
	ctx := r.Context()
	owner := randomToken()
	rec, won, err := g.store.TakeOver(ctx, key, owner, g.cfg.Lease.D())
	if err != nil {
		g.storeDown(w, r, err)
		return true
	}
	if !won {
		return false
	}
	ctx, sent := withDelivery(context.WithoutCancel(ctx))
	r = r.WithContext(ctx)
	hb := g.heartbeat(key, owner)
	defer hb.done()
	v := g.verdict(ctx, r, q, rec)
	switch {
	case v.landed != nil:
		g.answerLanded(w, r, key, owner, rec.Fingerprint, v.landed, hb)
	case v.rerun:
		g.rerun(w, r, q, key, owner, rec.Fingerprint, v.recheck, sent, hb, next)
	default:
		g.outcome(r, "unknown")
		g.giveUp(ctx, key, owner, hb)
		outcomeUnknown(w, r)
	}
	return true
}

// rerun runs a request whose first copy cannot be applied as well (see
// verdict). A copy refused with 409 is looked up again with recheck: the
// first copy landed in the meantime, or the outcome stays unknown.
func (g *Replayer) rerun(w http.ResponseWriter, r *http.Request, q icerest.Request, key, owner, fp string,
	recheck func() *landedAnswer, sent *delivery, hb *heartbeat, next Handler) {
	g.outcome(r, "resolved-rerun")
	rw := &recorder{StatusWriter: StatusWriter{ResponseWriter: w}}
	if recheck == nil {
		next(rw, r, q)
		g.settle(r.Context(), key, owner, fp, rw, sent, hb)
		return
	}
	held := Capture(next, r, q)
	if held.Status != http.StatusConflict {
		held.WriteTo(rw)
		g.settle(r.Context(), key, owner, fp, rw, sent, hb)
		return
	}
	if landed := recheck(); landed != nil {
		g.answerLanded(w, r, key, owner, fp, landed, hb)
		return
	}
	// Refused, and the first copy not found: it may have landed and been
	// expired since. Not a 409, on which a client would commit again.
	g.giveUp(r.Context(), key, owner, hb)
	outcomeUnknown(w, r)
}

// answerLanded answers a retry whose first request was found applied, and
// stores that answer for the retries after it.
func (g *Replayer) answerLanded(w http.ResponseWriter, r *http.Request, key, owner, fp string, a *landedAnswer, hb *heartbeat) {
	g.outcome(r, "resolved-applied")
	g.Replays.Add(1)
	rw := &recorder{StatusWriter: StatusWriter{ResponseWriter: w}}
	if a.body != nil {
		rw.Header().Set("Content-Type", "application/json")
	}
	rw.Header().Set(ReplayedHeader, "true")
	rw.WriteHeader(a.status)
	_, _ = rw.Write(a.body)
	g.finalize(r.Context(), key, owner, g.finalRecord(fp, rw), hb)
}

// verdict is what lakegate could find out about an unknown outcome.
type verdict struct {
	// landed is the answer to send when the request was applied.
	landed *landedAnswer
	// rerun: running the request again cannot apply it twice.
	rerun bool
	// recheck, for a rerun refused with 409, looks again whether the
	// first copy landed (its answer, or nil).
	recheck func() *landedAnswer
}

// landedAnswer is what a retry of an applied request is told: a commit's
// table as it is now, or a transaction's 204.
type landedAnswer struct {
	status int
	body   []byte
}

func (g *Replayer) verdict(ctx context.Context, r *http.Request, q icerest.Request, rec replay.Record) verdict {
	if g.backendDedupes(ctx, rec.Created) {
		return verdict{rerun: true}
	}
	if g.backend == nil {
		return verdict{}
	}
	changes, ok := changesOf(q)
	if !ok {
		return verdict{}
	}
	look := func() (*landedAnswer, bool) { return g.lookUpAll(r, q.Route.Operation, changes) }
	landed, absent := look()
	switch {
	case landed != nil:
		return verdict{landed: landed}
	case absent && excludeThemselves(changes):
		return verdict{rerun: true, recheck: func() *landedAnswer { l, _ := look(); return l }}
	}
	return verdict{}
}

// change is one table a commit changes, and what it does to it.
type change struct {
	table icerest.Route // the table's loadTable route
	plan  commitPlan
}

// changesOf is the tables a commit (updateTable) or a transaction
// (commitTransaction) changes, as the request's one parse read them
// (q.Commits); false when any change cannot be found in a table
// afterwards.
func changesOf(q icerest.Request) ([]change, bool) {
	rt := q.Route
	load := icerest.Route{Operation: icerest.OpLoadTable, Prefix: rt.Prefix, HasPrefix: rt.HasPrefix,
		Namespace: rt.Namespace, Table: rt.Table}
	switch rt.Operation {
	case icerest.OpUpdateTable:
		if len(q.Commits) != 1 {
			return nil, false
		}
		p, ok := planOf(q.Commits[0])
		return []change{{load, p}}, ok
	case icerest.OpCommitTransaction:
		if len(q.Commits) == 0 {
			return nil, false
		}
		out := make([]change, 0, len(q.Commits))
		for _, c := range q.Commits {
			p, ok := planOf(c)
			if !ok {
				return nil, false
			}
			t := load
			t.Namespace, t.Table = c.Table.Namespace, c.Table.Name
			out = append(out, change{t, p})
		}
		return out, true
	}
	return nil, false
}

func excludeThemselves(changes []change) bool {
	for _, c := range changes {
		if !c.plan.excludesItself() {
			return false
		}
	}
	return true
}

// lookUpAll looks every change up: all found is the request's answer
// (a commit's table, a transaction's 204); absent when every change is
// shown not to be there; neither for anything between, which no atomic
// commit leaves.
func (g *Replayer) lookUpAll(r *http.Request, op string, changes []change) (*landedAnswer, bool) {
	var found, absent int
	var answer []byte
	for _, c := range changes {
		landed, gone := g.lookUp(r, c.table, c.plan)
		switch {
		case landed != nil:
			found, answer = found+1, landed
		case gone:
			absent++
		}
	}
	switch {
	case found == len(changes) && op == icerest.OpCommitTransaction:
		return &landedAnswer{status: http.StatusNoContent}, false
	case found == len(changes):
		return &landedAnswer{status: http.StatusOK, body: answer}, false
	}
	return nil, absent == len(changes)
}

// backendDedupes reports whether the backend advertises Idempotency-Key
// support for at least as long as the key has lived (lakegate forwards
// the key to such a backend, so a second send is answered from its
// record).
func (g *Replayer) backendDedupes(ctx context.Context, created time.Time) bool {
	if g.backend == nil {
		return false
	}
	cc, err := g.backend.Config(ctx)
	if err != nil || cc == nil {
		return false
	}
	life, ok := cc.KeyLifetime()
	// A margin for clocks and for the time the first send took.
	return ok && time.Since(created) < life-time.Minute
}

// commitPlan is what a table commit's body says that lets lakegate find
// it in the table afterwards.
type commitPlan struct {
	snapshots    []int64         // ids of the snapshots it adds
	assertCreate bool            // it creates the table
	uuid         string          // the table uuid it assigns, if any
	moved        map[string]bool // branches and tags it points elsewhere
	asserted     map[string]bool // refs it asserts at a snapshot id (or absent)
}

// planOf is what c says that lets lakegate find it in the table.
func planOf(c icerest.Commit) (commitPlan, bool) {
	if c.Unreadable {
		return commitPlan{}, false
	}
	p := commitPlan{snapshots: c.Snapshots, assertCreate: c.AssertCreate, uuid: c.UUID,
		moved: map[string]bool{}, asserted: map[string]bool{}}
	for _, ref := range c.Asserted {
		p.asserted[ref] = true
	}
	for _, ref := range c.Moved {
		p.moved[ref] = true
	}
	return p, len(p.snapshots) > 0 || (p.assertCreate && p.uuid != "")
}

// excludesItself: once one copy of the commit is applied, every other
// copy's requirements fail.
func (p commitPlan) excludesItself() bool {
	if p.assertCreate {
		return true
	}
	if len(p.moved) == 0 {
		return false
	}
	for ref := range p.moved {
		if !p.asserted[ref] {
			return false
		}
	}
	return true
}

// lookUp loads the table from the backend (past the cache) and tells
// whether the commit is in it: its answer as a commit response when it
// is, absent when the table shows it is not, neither when it cannot tell.
func (g *Replayer) lookUp(r *http.Request, load icerest.Route, p commitPlan) (landed []byte, absent bool) {
	req, err := http.NewRequestWithContext(withoutDelivery(r.Context()), http.MethodGet, "/", http.NoBody)
	if err != nil {
		return nil, false
	}
	held := Capture(g.backend.Serve, req, icerest.Request{Route: load})
	switch {
	case held.Status == http.StatusNotFound:
		return nil, p.assertCreate
	case held.Status != http.StatusOK:
		g.log.Info("an unknown commit outcome could not be looked up",
			zap.String("catalog", g.catalog), zap.Int("status", held.Status))
		return nil, false
	}
	// The answer is decoded once; only its metadata is read further.
	var top struct {
		Location json.RawMessage `json:"metadata-location"`
		Metadata json.RawMessage `json:"metadata"`
	}
	var m struct {
		UUID      string `json:"table-uuid"`
		Snapshots []struct {
			ID int64 `json:"snapshot-id"`
		} `json:"snapshots"`
	}
	if json.Unmarshal(held.Bytes(), &top) != nil || json.Unmarshal(top.Metadata, &m) != nil {
		return nil, false
	}
	if p.uuid != "" && m.UUID != p.uuid {
		return nil, false // another table of that name: nothing to tell
	}
	have := map[int64]bool{}
	for _, s := range m.Snapshots {
		have[s.ID] = true
	}
	found := 0
	for _, id := range p.snapshots {
		if have[id] {
			found++
		}
	}
	switch {
	case found == len(p.snapshots):
		out, err := json.Marshal(map[string]json.RawMessage{"metadata-location": top.Location, "metadata": top.Metadata})
		if err != nil {
			return nil, false
		}
		return out, false
	case found == 0:
		return nil, true
	}
	return nil, false // some but not all: not a state a commit leaves
}
