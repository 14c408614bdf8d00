package embedded

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakegate/lakegate/upstream/icerest"
)

func nsKey(ns table.Identifier) string { return strings.Join(ns, icerest.UnitSeparator) }

// listNamespaces lists the direct children of `parent` (top level when
// absent), paginated.
func (c *Catalog) listNamespaces(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	token, size, err := pageParams(r)
	if err != nil {
		return err
	}
	extras, err := readListExtras(r)
	if err != nil {
		return err
	}
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		levels, perr := icerest.DecodeNamespace(p, c.sep)
		if perr != nil {
			return perr
		}
		parent = levels
	}
	all, err := c.cat.ListNamespaces(r.Context(), parent)
	if err != nil {
		return err
	}
	children := directChildren(all, len(parent))
	page, next, err := paginate(children, nsKey, token, size)
	if err != nil {
		return err
	}
	if page == nil {
		page = []table.Identifier{}
	}
	var uuids []string
	if extras.uuids {
		if uuids, err = c.namespaceUUIDs(r.Context(), page); err != nil {
			return err
		}
	}
	icerest.WriteJSON(w, http.StatusOK, struct {
		Namespaces       []table.Identifier `json:"namespaces"`
		NextPageToken    string             `json:"next-page-token,omitempty"`
		NamespaceUUIDs   []string           `json:"namespace-uuids,omitzero"`
		ProtectionStatus []bool             `json:"protection-status,omitzero"`
	}{page, next, uuids, extras.protectionStatus(len(page))})
	return nil
}

// directChildren truncates descendants of a parent with depth levels to
// the level right below it, deduplicated: a.b.c listed under a is a.b.
func directChildren(all []table.Identifier, depth int) []table.Identifier {
	seen := map[string]bool{}
	out := make([]table.Identifier, 0, len(all))
	for _, ns := range all {
		if len(ns) <= depth {
			continue
		}
		child := slices.Clone(ns[:depth+1])
		if k := nsKey(child); !seen[k] {
			seen[k] = true
			out = append(out, child)
		}
	}
	return out
}

type namespaceRequest struct {
	Namespace  table.Identifier  `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// namespaceResult is the spec's GetNamespaceResponse.
type namespaceResult struct {
	Namespace     table.Identifier   `json:"namespace"`
	Properties    iceberg.Properties `json:"properties"`
	NamespaceUUID string             `json:"namespace-uuid,omitempty"`
}

func (c *Catalog) createNamespace(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	var req namespaceRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := checkNamespace(req.Namespace); err != nil {
		return err
	}
	if err := c.checkSeparator(req.Namespace); err != nil {
		return err
	}
	// A child needs its parent: the SQL catalog would store ["a","b"]
	// alone, and listings would then show an "a" that cannot be loaded.
	if len(req.Namespace) > 1 {
		if err := c.requireNamespace(r.Context(), req.Namespace[:len(req.Namespace)-1]); err != nil {
			return err
		}
	}
	if err := checkOwnKeys(slices.Collect(maps.Keys(req.Properties))...); err != nil {
		return err
	}
	if err := c.checkNamespaceLocation(req.Properties); err != nil {
		return err
	}
	stored := iceberg.Properties{namespaceUUIDKey: uuid.NewString()}
	maps.Copy(stored, req.Properties)
	if err := c.cat.CreateNamespace(r.Context(), req.Namespace, stored); err != nil {
		if errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return namespaceExists(req.Namespace)
		}
		return err
	}
	props, err := c.cat.LoadNamespaceProperties(r.Context(), req.Namespace)
	if err != nil {
		return err
	}
	described, err := c.describe(req.Namespace, props)
	if err != nil {
		return err
	}
	icerest.WriteJSON(w, http.StatusOK, namespaceResult{Namespace: req.Namespace, Properties: described})
	return nil
}

func (c *Catalog) loadNamespace(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	withUUID, err := boolParam(r, "returnUuid")
	if err != nil {
		return err
	}
	props, err := c.cat.LoadNamespaceProperties(r.Context(), rt.Namespace)
	if err != nil {
		return err
	}
	described, err := c.describe(rt.Namespace, props)
	if err != nil {
		return err
	}
	res := namespaceResult{Namespace: rt.Namespace, Properties: described}
	if withUUID {
		res.NamespaceUUID = c.namespaceUUID(props, rt.Namespace)
	}
	icerest.WriteJSON(w, http.StatusOK, res)
	return nil
}

func (c *Catalog) namespaceExists(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	ok, err := c.cat.CheckNamespaceExists(r.Context(), rt.Namespace)
	if err != nil {
		return err
	}
	if !ok {
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchNamespace,
			"namespace %s does not exist", strings.Join(rt.Namespace, "."))
	}
	writeNoContent(w)
	return nil
}

// dropNamespace drops an empty namespace; with recursive=true (Lakekeeper's
// extension, seed 000) it first drops every table, view and child
// namespace in it, purging table files unless purge=false: the seed's
// default is true. A purge deletes only files inside the catalog's
// locations (see dropTableIdent).
func (c *Catalog) dropNamespace(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	recursive, err := boolParam(r, "recursive")
	if err != nil {
		return err
	}
	purge, err := boolParamOr(r, "purge", true)
	if err != nil {
		return err
	}
	if recursive {
		if err := c.dropContents(r, rt.Namespace, purge); err != nil {
			return err
		}
	} else if err := c.requireNoChildren(r.Context(), rt.Namespace); err != nil {
		return err
	}
	if err := c.cat.DropNamespace(r.Context(), rt.Namespace); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// requireNoChildren refuses to drop a namespace that has child namespaces:
// the SQL catalog checks only for tables and would leave the children
// orphaned.
func (c *Catalog) requireNoChildren(ctx context.Context, ns table.Identifier) error {
	if err := c.requireNamespace(ctx, ns); err != nil {
		return err
	}
	all, err := c.cat.ListNamespaces(ctx, ns)
	if err != nil {
		return err
	}
	if children := directChildren(all, len(ns)); len(children) > 0 {
		return icerest.Errorf(http.StatusConflict, icerest.NamespaceNotEmpty,
			"namespace %s is not empty: it has %d child namespace(s), such as %s",
			strings.Join(ns, "."), len(children), strings.Join(children[0], "."))
	}
	return nil
}

// dropContents empties ns and its descendants, deepest first. It is not
// atomic: a failure part-way leaves the rest in place, and the namespace.
func (c *Catalog) dropContents(r *http.Request, ns table.Identifier, purge bool) error {
	ctx := r.Context()
	children, err := c.cat.ListNamespaces(ctx, ns)
	if err != nil {
		return err
	}
	for _, child := range directChildren(children, len(ns)) {
		if err := c.dropContents(r, child, purge); err != nil {
			return err
		}
		if err := c.cat.DropNamespace(ctx, child); err != nil {
			return err
		}
	}
	for id, err := range c.cat.ListTables(ctx, ns) {
		if err != nil {
			return err
		}
		if err := c.dropTableIdent(r, id, purge); err != nil {
			return err
		}
	}
	for id, err := range c.cat.ListViews(ctx, ns) {
		if err != nil {
			return err
		}
		if err := c.dropViewIdent(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (c *Catalog) updateNamespaceProperties(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req struct {
		Removals []string          `json:"removals"`
		Updates  map[string]string `json:"updates"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := checkOwnKeys(append(slices.Collect(maps.Keys(req.Updates)), req.Removals...)...); err != nil {
		return err
	}
	if err := c.checkNamespaceLocation(req.Updates); err != nil {
		return err
	}
	var both []string
	for _, k := range req.Removals {
		if _, ok := req.Updates[k]; ok {
			both = append(both, k)
		}
	}
	if len(both) > 0 {
		return icerest.Errorf(http.StatusUnprocessableEntity, icerest.UnprocessableEntity,
			"keys in both removals and updates: %s", strings.Join(both, ", "))
	}
	sum, err := c.cat.UpdateNamespaceProperties(r.Context(), rt.Namespace, req.Removals, iceberg.Properties(req.Updates))
	if err != nil {
		return err
	}
	icerest.WriteJSON(w, http.StatusOK, struct {
		Updated []string `json:"updated"`
		Removed []string `json:"removed"`
		Missing []string `json:"missing"`
	}{nonNil(sum.Updated), nonNil(sum.Removed), sum.Missing})
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// describe is a namespace's properties as clients see them: without
// lakegate's own keys, and with `location` even when none was set (where
// its tables go by default), as Iceberg's JDBC catalog answers. Engines
// build table locations from it: Trino stages a CREATE TABLE at
// <location>/<table>-<uuid> and, without one, has the catalog create the
// table first and then finds its own location not empty.
func (c *Catalog) describe(ns table.Identifier, props iceberg.Properties) (iceberg.Properties, error) {
	out := maps.Clone(visibleProperties(props))
	if out == nil {
		out = iceberg.Properties{}
	}
	if _, ok := out["location"]; !ok {
		loc, err := c.namespaceLocation(ns, props)
		if err != nil {
			return nil, err
		}
		out["location"] = loc
	}
	return out, nil
}
