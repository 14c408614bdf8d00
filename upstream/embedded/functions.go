package embedded

import (
	"database/sql"
	"net/http"
	"strings"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// The embedded catalog stores no functions: listFunctions answers the
// spec's empty list and loadFunction 404 NoSuchFunctionException, for a
// namespace that exists (404 NoSuchNamespaceException otherwise), so a
// client that asks learns there are none rather than "no such endpoint".

func (c *Catalog) listFunctions(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	if err := c.requireNamespace(r.Context(), rt.Namespace); err != nil {
		return err
	}
	icerest.WriteJSON(w, http.StatusOK, map[string][]any{"identifiers": {}})
	return nil
}

func (c *Catalog) loadFunction(_ http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	if err := c.requireNamespace(r.Context(), rt.Namespace); err != nil {
		return err
	}
	return icerest.Errorf(http.StatusNotFound, icerest.NoSuchFunction, "function %s.%s does not exist",
		strings.Join(rt.Namespace, "."), rt.Function)
}

// unregisterTable forgets a table and leaves its files in place. The answer
// is the metadata the table had, which holds every commit before the
// unregister: the row is removed only while it still points at that
// metadata (a commit in between makes this a 409, to be retried).
func (c *Catalog) unregisterTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	ctx := r.Context()
	id := ident(rt.Namespace, rt.Table)
	tbl, err := c.openTable(ctx, id)
	if err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error {
		return c.deleteRow(ctx, tx, id, rowTable, tbl.MetadataLocation())
	})
	if err != nil {
		return err
	}
	icerest.WriteJSON(w, http.StatusOK, commitResponse{tbl.MetadataLocation(), tbl.Metadata()})
	return nil
}
