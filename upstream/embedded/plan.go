package embedded

// PLACEHOLDER: replaced by the scan planning implementation.

import (
	"net/http"

	"github.com/lakegate/lakegate/upstream/icerest"
)

type planStore struct{}

func newPlanStore() *planStore { return &planStore{} }

func (c *Catalog) planTableScan(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) fetchPlanningResult(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) cancelPlanning(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) fetchScanTasks(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
