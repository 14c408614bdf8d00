package gateway

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// commitsPath answers a table's recent commits through the gateway
// (cache/commitlog), for the catalog browser.
const commitsPath = "/lakegate/commits"

// opListCommits names the request in the access log and metrics; the
// policy is asked about loadTable: whoever may load the table may see
// who committed to it, and nobody else.
const opListCommits = "listCommits"

// commitsAnswer is GET /lakegate/commits' answer.
type commitsAnswer struct {
	// Commits are the table's recent commits, newest first (at most
	// commitlog.MaxPerTable, none older than commitlog.TTL).
	Commits []commitlog.Entry `json:"commits"`
	// Shared: every replica on the gateway's Redis records here; false,
	// only the replica that answered (no Redis configured).
	Shared bool `json:"shared"`
}

// serveCommits answers GET /lakegate/commits?catalog=&namespace=&table=:
// authenticated as every Iceberg request, allowed when the policy lets
// the caller loadTable that table.
func (h *IcebergHandler) serveCommits(w http.ResponseWriter, r *http.Request) {
	x, r := begin(h.app, w, r, "iceberg")
	defer x.end()
	x.rec.SetOperation(opListCommits)
	p, r, ok := icebergDoor.admit(h.app.guard, x, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet {
		e := icerest.Errorf(http.StatusMethodNotAllowed, icerest.UnsupportedOperation,
			"method %s not allowed on %s (allowed: GET)", r.Method, commitsPath)
		e.Allow = []string{http.MethodGet}
		icerest.WriteError(x, r, e)
		return
	}
	q, cat, rerr := h.tableQuery(r)
	if rerr != nil {
		icerest.WriteError(x, r, rerr)
		return
	}
	noteCatalog(r, cat)
	if d := h.app.guard.decide(r, policyRequest{op: icerest.OpLoadTable, principal: p, catalog: cat,
		resource: policies.Resource{Namespace: q.namespace, Table: q.table}}); !d.Allow {
		icerest.WriteError(x, r, forbidden(icerest.OpLoadTable, d))
		return
	}
	store := h.app.journal.Store()
	entries, err := store.List(r.Context(), commitlog.Table{Catalog: cat.cfg.Name, Namespace: q.namespace, Name: q.table})
	if err != nil {
		h.app.log.Error("reading the commit record failed", zap.String("catalog", cat.cfg.Name), zap.Error(err))
		icerest.WriteError(x, r, icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"the commit record cannot be read now (the cause is in the server's log)"))
		return
	}
	if entries == nil {
		entries = []commitlog.Entry{}
	}
	icerest.WriteJSON(x, http.StatusOK, commitsAnswer{Commits: entries, Shared: store.Shared()})
}
