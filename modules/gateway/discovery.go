package gateway

import (
	"maps"
	"net/http"
	"slices"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// catalogsPath is the Iceberg door's discovery endpoint: the catalogs a
// caller may use. The Iceberg REST spec has none (GET /v1/config without
// `warehouse` answers the default catalog's config, and clients depend on
// that), so it lives outside /v1/, where no catalog name can clash with it.
const catalogsPath = "/lakegate/catalogs"

// opListCatalogs names the discovery request for metrics, the access log
// and the policy input's api_operation (its operation is getConfig, asked
// of each catalog).
const opListCatalogs = "listCatalogs"

// catalogList is GET /lakegate/catalogs's answer.
type catalogList struct {
	Catalogs []catalogEntry `json:"catalogs"`
}

// catalogEntry names one catalog: nothing of its backend (no URL, no
// credentials) but its kind, as the status page names it.
type catalogEntry struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default bool   `json:"default"`
}

// serveCatalogs answers GET /lakegate/catalogs: authenticated as every
// Iceberg request, then the catalogs, by name, on which the caller may
// getConfig (the decision GET /v1/config?warehouse=NAME makes). Each
// catalog's decision is counted in the request's record, so the access
// log's decision is allow, partial (some catalogs left out) or deny (all).
func (h *IcebergHandler) serveCatalogs(w http.ResponseWriter, r *http.Request) {
	x, r := begin(h.app, w, r, "iceberg")
	defer x.end()
	x.rec.SetOperation(opListCatalogs)
	p, r, ok := icebergDoor.admit(h.app.guard, x, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet {
		e := icerest.Errorf(http.StatusMethodNotAllowed, icerest.UnsupportedOperation,
			"method %s not allowed on %s (allowed: GET)", r.Method, catalogsPath)
		e.Allow = []string{http.MethodGet}
		icerest.WriteError(x, r, e)
		return
	}
	icerest.WriteJSON(x, http.StatusOK, h.usableCatalogs(r, p))
}

// usableCatalogs lists, by name, the catalogs p may getConfig on.
func (h *IcebergHandler) usableCatalogs(r *http.Request, p *identity.Principal) catalogList {
	out := catalogList{Catalogs: []catalogEntry{}}
	for _, name := range slices.Sorted(maps.Keys(h.app.backends)) {
		cat := h.app.backends[name]
		d := h.app.guard.authorize(r.Context(), policyRequest{apiOp: opListCatalogs, op: icerest.OpGetConfig,
			principal: p, catalog: cat}.input(r))
		if d.Allow {
			out.Catalogs = append(out.Catalogs, catalogEntry{Name: name, Kind: cat.backendKind(), Default: name == h.app.DefaultCatalog})
		}
	}
	return out
}
