package embedded

// PLACEHOLDER: replaced by the views implementation.

import (
	"net/http"

	"github.com/lakegate/lakegate/upstream/icerest"
)

func notYet(http.ResponseWriter, *http.Request, icerest.Route) error {
	return icerest.Errorf(http.StatusNotAcceptable, icerest.UnsupportedOperation, "not implemented yet")
}

func (c *Catalog) listViews(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) createView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) loadView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) replaceView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) dropView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) viewExists(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
func (c *Catalog) renameView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return notYet(w, r, rt)
}
