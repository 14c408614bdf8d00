package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// tableIdentifier is the spec's TableIdentifier.
type tableIdentifier struct {
	Namespace table.Identifier `json:"namespace"`
	Name      string           `json:"name"`
}

func (t tableIdentifier) ident() table.Identifier { return ident(t.Namespace, t.Name) }

func (t tableIdentifier) validate() error {
	if len(t.Namespace) == 0 || t.Name == "" {
		return badRequest("identifier needs a namespace and a name")
	}
	return nil
}

type commitRequest struct {
	Identifier   *tableIdentifier `json:"identifier,omitempty"`
	Requirements specRequirements `json:"requirements"`
	Updates      table.Updates    `json:"updates"`
}

type commitResponse struct {
	MetadataLocation string         `json:"metadata-location"`
	Metadata         table.Metadata `json:"metadata"`
}

// updateTable commits one table's requirements and updates.
func (c *Catalog) updateTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req commitRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	id := ident(rt.Namespace, rt.Table)
	if req.Identifier != nil && req.Identifier.Name != "" && !slicesEqual(req.Identifier.ident(), id) {
		return badRequest("identifier in body (%s) does not match the path (%s)",
			strings.Join(req.Identifier.ident(), "."), strings.Join(id, "."))
	}
	staged, err := c.commit(r.Context(), []tableChange{{id, table.Requirements(req.Requirements), req.Updates}})
	if err != nil {
		return err
	}
	// The ETag a LoadTable of the new version (snapshots=all, what the
	// answer holds) carries, so If-None-Match with it gets 304 until the
	// table changes again.
	w.Header().Set("ETag", tableETag(staged[0].newLoc, "all"))
	icerest.WriteJSON(w, http.StatusOK, commitResponse{staged[0].newLoc, staged[0].meta})
	return nil
}

// commitTransaction commits several tables atomically: every metadata
// file is written first, then one database transaction swaps every
// table's pointer, or none.
func (c *Catalog) commitTransaction(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	var req struct {
		TableChanges []commitRequest `json:"table-changes"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if len(req.TableChanges) == 0 {
		return badRequest("table-changes must not be empty")
	}
	changes := make([]tableChange, len(req.TableChanges))
	seen := map[string]bool{}
	for i, tc := range req.TableChanges {
		if tc.Identifier == nil {
			return badRequest("table-changes[%d]: identifier is required", i)
		}
		if err := tc.Identifier.validate(); err != nil {
			return err
		}
		id := tc.Identifier.ident()
		if k := strings.Join(id, "\x00"); seen[k] {
			return badRequest("table %s appears more than once in one transaction", strings.Join(id, "."))
		} else {
			seen[k] = true
		}
		changes[i] = tableChange{id, table.Requirements(tc.Requirements), tc.Updates}
	}
	if _, err := c.commit(r.Context(), changes); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

type tableChange struct {
	id    table.Identifier
	reqs  table.Requirements
	updts table.Updates
}

// stagedCommit is a table change applied in memory and written to a new
// metadata file, not yet visible.
type stagedCommit struct {
	id      table.Identifier
	oldLoc  string // "" when the commit creates the table
	newLoc  string
	meta    table.Metadata
	written bool
}

// commit validates, applies and writes every change, then publishes them
// all in one database transaction (compare-and-swap on each table's
// metadata location). Any failure publishes nothing.
func (c *Catalog) commit(ctx context.Context, changes []tableChange) ([]stagedCommit, error) {
	staged := make([]stagedCommit, 0, len(changes))
	cleanup := func() {
		for _, s := range staged {
			if s.written {
				c.removeFile(ctx, s.newLoc)
			}
		}
	}
	for _, ch := range changes {
		s, err := c.stage(ctx, ch)
		if err != nil {
			cleanup()
			return nil, err
		}
		staged = append(staged, s)
		if s.newLoc == s.oldLoc {
			continue // nothing changed
		}
		if err := c.writeJSON(ctx, s.newLoc, s.meta.Properties(), s.meta); err != nil {
			cleanup()
			return nil, err
		}
		staged[len(staged)-1].written = true
	}
	err := c.withTx(ctx, func(tx *sql.Tx) error {
		for _, s := range staged {
			if err := c.publish(ctx, tx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	return staged, nil
}

func (c *Catalog) publish(ctx context.Context, tx *sql.Tx, s stagedCommit) error {
	switch {
	case s.newLoc == s.oldLoc:
		return nil
	case s.oldLoc == "":
		if err := c.insertRow(ctx, tx, s.id, rowTable, s.newLoc); err != nil {
			// A table created concurrently since the commit was staged.
			return &catalogError{errRequirementFailed, "Requirement failed: table already exists"}
		}
		return nil
	}
	return c.swapRow(ctx, tx, s.id, rowTable, s.oldLoc, s.newLoc)
}

// stage loads the table's current state, checks the requirements against
// it and applies the updates in memory.
func (c *Catalog) stage(ctx context.Context, ch tableChange) (stagedCommit, error) {
	if err := catalog.ValidateTableIdentifier(ch.id); err != nil {
		return stagedCommit{}, badRequest("%v", err)
	}
	s := stagedCommit{id: ch.id}
	var base table.Metadata
	cur, err := c.openTable(ctx, ch.id)
	switch {
	case err == nil:
		base, s.oldLoc = cur.Metadata(), cur.MetadataLocation()
	case errors.Is(err, catalog.ErrNoSuchTable) && hasAssertCreate(ch.reqs):
		if err := c.requireNamespace(ctx, catalog.NamespaceFromIdent(ch.id)); err != nil {
			return s, err
		}
		if err := c.checkNameFree(ctx, ch.id, rowTable); err != nil {
			return s, err // a view has the name
		}
	case errors.Is(err, catalog.ErrNoSuchTable):
		return s, noSuchTable(ch.id)
	default:
		return s, err
	}
	var current table.Metadata
	if cur != nil {
		current = base
	}
	for _, req := range ch.reqs {
		if err := req.Validate(current); err != nil {
			return s, requirementFailed(req, current, err)
		}
	}
	if len(ch.updts) == 0 && cur != nil {
		s.newLoc, s.meta = s.oldLoc, base
		return s, nil
	}
	var meta table.Metadata
	if cur == nil {
		meta, err = createMetadata(ch.updts)
	} else {
		meta, err = updateMetadata(base, ch.updts, s.oldLoc)
	}
	if errors.Is(err, errValidation) {
		return s, err
	}
	if err != nil {
		return s, fmt.Errorf("%w: cannot apply updates: %v", errBadRequest, err)
	}
	if cur != nil && meta.Equals(base) {
		s.newLoc, s.meta = s.oldLoc, base
		return s, nil
	}
	if meta.Location() == "" {
		return s, badRequest("the table has no location: a create commit must set one")
	}
	if err := checkSchemed("table location", meta.Location()); err != nil {
		return s, err
	}
	if err := checkNewShapes(current, meta); err != nil {
		return s, err
	}
	if err := c.checkTableMetadata(meta); err != nil {
		return s, err
	}
	s.meta = meta
	if s.newLoc, err = nextTableMetadataLocation(meta, s.oldLoc); err != nil {
		return s, err
	}
	return s, c.checkLocation("metadata file", s.newLoc)
}

// createMetadata builds a created table's metadata from nothing at all (no
// schema, spec or sort order), at the format version the commit asks for,
// as Java's TableMetadata.buildFromEmpty does. Starting from a metadata
// that already held an empty schema and spec 0 (iceberg-go's own way) gave
// created tables an extra schema and spec, with every id shifted by one,
// and refused a create at format version 1 as a downgrade.
func createMetadata(updates table.Updates) (table.Metadata, error) {
	version := 2
	for _, u := range updates {
		if u.Action() != "upgrade-format-version" {
			continue
		}
		var up struct {
			FormatVersion int `json:"format-version"`
		}
		if b, err := json.Marshal(u); err == nil && json.Unmarshal(b, &up) == nil {
			version = up.FormatVersion
		}
		break
	}
	meta, err := buildMetadata(version, updates)
	if err != nil {
		// The order the client sent does not build: the same updates in
		// the order each needs (createOrder). Its error is the client's if
		// that fails too.
		if reordered, err2 := buildMetadata(version, createOrder(updates)); err2 == nil {
			return reordered, nil
		}
	}
	return meta, err
}

// buildMetadata applies updates, in their order, to an empty metadata.
func buildMetadata(version int, updates table.Updates) (table.Metadata, error) {
	bldr, err := table.NewMetadataBuilder(version)
	if err != nil {
		return nil, err
	}
	return applyUpdates(bldr, updates)
}

// updateMetadata is iceberg-go's UpdateTableMetadata, with applyUpdates'
// errors.
func updateMetadata(base table.Metadata, updates table.Updates, loc string) (table.Metadata, error) {
	bldr, err := table.MetadataBuilderFromBase(base, loc)
	if err != nil {
		return nil, err
	}
	return applyUpdates(bldr, updates)
}

// shapeActions add a schema, a partition spec or a sort order: the
// builder refusing one is what Java calls a ValidationException.
var shapeActions = map[string]bool{"add-schema": true, "add-spec": true, "add-sort-order": true}

// applyUpdates applies updates in order and builds the metadata.
func applyUpdates(bldr *table.MetadataBuilder, updates table.Updates) (table.Metadata, error) {
	for _, u := range updates {
		if err := u.Apply(bldr); err != nil {
			if shapeActions[u.Action()] {
				return nil, validationError("%s: %v", u.Action(), err)
			}
			return nil, err
		}
	}
	return bldr.Build()
}

// createRank orders a create's updates so each finds what it builds on:
// the schema before the specs and sort orders bound to it, each added
// thing before the update that makes it the default. The spec orders no
// updates, and DuckDB sends add-spec and add-sort-order before
// set-current-schema (as Polaris, Lakekeeper and R2 take it).
var createRank = map[string]int{
	"add-schema": 1, "set-current-schema": 2,
	"add-spec": 3, "set-default-spec": 4,
	"add-sort-order": 5, "set-default-sort-order": 6,
}

// createOrder is updates sorted by createRank, stably: updates of one kind,
// and every other update (ranked after these), keep the client's order. It
// is used only when the client's own order does not build, so a create
// that builds as sent is never reinterpreted (a "-1", the last added,
// could name another schema once reordered).
func createOrder(updates table.Updates) table.Updates {
	rank := func(u table.Update) int {
		if r, ok := createRank[u.Action()]; ok {
			return r
		}
		return len(createRank) + 1
	}
	out := slices.Clone(updates)
	slices.SortStableFunc(out, func(a, b table.Update) int { return rank(a) - rank(b) })
	return out
}

func (c *Catalog) requireNamespace(ctx context.Context, ns table.Identifier) error {
	ok, err := c.cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return err
	}
	if !ok {
		return noSuchNamespace(ns)
	}
	return nil
}

func hasAssertCreate(reqs table.Requirements) bool {
	for _, r := range reqs {
		if r.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

var metadataFileName = regexp.MustCompile(`^v?(\d+)[-.]`)

// metadataVersion parses the version number of a metadata file name
// (00003-<uuid>.metadata.json or v3.metadata.json); -1 for none.
func metadataVersion(loc string) int {
	if loc == "" {
		return -1
	}
	m := metadataFileName.FindStringSubmatch(path.Base(loc))
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return v
}

func slicesEqual(a, b table.Identifier) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}
