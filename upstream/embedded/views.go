package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// createViewRequest is the spec's CreateViewRequest.
type createViewRequest struct {
	Name        string             `json:"name"`
	Location    string             `json:"location"`
	Schema      *iceberg.Schema    `json:"schema"`
	ViewVersion *view.Version      `json:"view-version"`
	Properties  iceberg.Properties `json:"properties"`
}

// commitViewRequest is the spec's CommitViewRequest; iceberg-go's view
// types parse the requirements and updates, rejecting unknown kinds.
type commitViewRequest struct {
	Identifier   *tableIdentifier  `json:"identifier,omitempty"`
	Requirements view.Requirements `json:"requirements"`
	Updates      view.Updates      `json:"updates"`
}

// loadViewResult is the spec's LoadViewResult.
type loadViewResult struct {
	MetadataLocation string            `json:"metadata-location"`
	Metadata         view.Metadata     `json:"metadata"`
	Config           map[string]string `json:"config"`
}

func writeView(w http.ResponseWriter, loc string, meta view.Metadata) {
	icerest.WriteJSON(w, http.StatusOK, loadViewResult{loc, meta, map[string]string{}})
}

func (c *Catalog) listViews(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return c.listObjects(w, r, rt, c.cat.ListViews, rowView)
}

// createView builds the view's first metadata from the client's version as
// sent (all representations, default namespace, summary), instead of the
// SQL catalog's CreateView, which only takes a single SQL string.
func (c *Catalog) createView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req createViewRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.Schema == nil || req.ViewVersion == nil {
		return badRequest("create view needs a name, a schema and a view-version")
	}
	ctx := r.Context()
	id, err := c.newViewIdent(ctx, rt.Namespace, req.Name)
	if err != nil {
		return err
	}
	loc := strings.TrimSuffix(req.Location, "/")
	if loc == "" {
		if loc, err = c.defaultLocation(ctx, id); err != nil {
			return err
		}
	}
	meta, err := view.NewMetadata(normalizeVersion(req.ViewVersion), req.Schema, loc, req.Properties)
	if err != nil {
		return invalidView(err)
	}
	if err := c.checkViewMetadata(meta); err != nil {
		return err
	}
	metaLoc, err := c.writeViewMetadata(ctx, meta, "")
	if err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error {
		return c.insertRow(ctx, tx, id, rowView, metaLoc)
	})
	if err != nil {
		c.removeFile(ctx, metaLoc)
		return err
	}
	writeView(w, metaLoc, meta)
	return nil
}

// normalizeVersion fills in what the spec requires of a stored version but
// a client may leave out (iceberg-go's client sends a nil namespace as
// null), so that the written metadata is valid for every reader.
func normalizeVersion(v *view.Version) *view.Version {
	v = v.Clone()
	if v.DefaultNamespace == nil {
		v.DefaultNamespace = table.Identifier{}
	}
	if v.Summary == nil {
		v.Summary = view.VersionSummary{}
	}
	if v.TimestampMS == 0 {
		v.TimestampMS = time.Now().UnixMilli()
	}
	return v
}

// loadView reads the metadata file itself rather than calling the SQL
// catalog's LoadView, which does not return the metadata location that
// LoadViewResult needs.
func (c *Catalog) loadView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	loc, meta, err := c.currentView(r.Context(), ident(rt.Namespace, rt.View))
	if err != nil {
		return err
	}
	writeView(w, loc, meta)
	return nil
}

// currentView returns the view's current metadata location and metadata;
// an identifier that names a table is no view either.
func (c *Catalog) currentView(ctx context.Context, id table.Identifier) (string, view.Metadata, error) {
	loc, _, err := c.rowLocation(ctx, id, rowView)
	if err != nil {
		return "", nil, err
	}
	if loc == "" {
		return "", nil, noSuchView(id)
	}
	if err := c.checkRow(rowView, id, loc); err != nil {
		return "", nil, err
	}
	meta, err := c.readViewMetadata(ctx, loc)
	return loc, meta, err
}

// readViewMetadata parses a committed view metadata file. A failure is
// the catalog's own problem (500), not the client's.
func (c *Catalog) readViewMetadata(ctx context.Context, loc string) (view.Metadata, error) {
	fs, err := c.fileIO(ctx, loc, nil)
	if err != nil {
		return nil, err
	}
	f, err := fs.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("cannot read view metadata %s: %w", loc, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("cannot read view metadata %s: %w", loc, err)
	}
	meta, err := view.ParseMetadataBytes(b)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid view metadata: %w", loc, err)
	}
	return meta, nil
}

// writeViewMetadata writes meta as the metadata file that follows
// currentLoc ("" for a new view) and returns its location.
func (c *Catalog) writeViewMetadata(ctx context.Context, meta view.Metadata, currentLoc string) (string, error) {
	props := viewFileProps(meta)
	provider, err := table.LoadLocationProvider(meta.Location(), props)
	if err != nil {
		return "", badRequest("view location %q: %v", meta.Location(), err)
	}
	loc, err := provider.NewTableMetadataFileLocation(metadataVersion(currentLoc) + 1)
	if err != nil {
		return "", err
	}
	if err := c.writeJSON(ctx, loc, props, meta); err != nil {
		return "", err
	}
	return loc, nil
}

// viewFileProps are the properties a view's metadata file is written
// with: the view's own minus any compression codec, because iceberg-go's
// view reader (used by the SQL catalog) only reads plain JSON.
func viewFileProps(meta view.Metadata) iceberg.Properties {
	props := meta.Properties()
	delete(props, table.MetadataCompressionKey)
	return props
}

// replaceView commits requirements and updates to one view: the new
// metadata file is written first, then the row is moved to it only if it
// still points at the metadata the updates were applied to.
func (c *Catalog) replaceView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req commitViewRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	id := ident(rt.Namespace, rt.View)
	if req.Identifier != nil && req.Identifier.Name != "" && !slicesEqual(req.Identifier.ident(), id) {
		return badRequest("identifier in body (%s) does not match the path (%s)",
			strings.Join(req.Identifier.ident(), "."), strings.Join(id, "."))
	}
	oldLoc, base, err := c.currentView(ctx, id)
	if err != nil {
		return err
	}
	meta, changed, err := applyViewChanges(base, req.Requirements, req.Updates)
	if err != nil {
		return err
	}
	if !changed {
		writeView(w, oldLoc, base)
		return nil
	}
	if err := c.checkViewMetadata(meta); err != nil {
		return err
	}
	newLoc, err := c.writeViewMetadata(ctx, meta, oldLoc)
	if err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error {
		return c.swapRow(ctx, tx, id, rowView, oldLoc, newLoc)
	})
	if err != nil {
		c.removeFile(ctx, newLoc)
		return err
	}
	writeView(w, newLoc, meta)
	return nil
}

// applyViewChanges checks the requirements against base and applies the
// updates in memory; changed is false when the updates change nothing, so
// that no new metadata file is written.
func applyViewChanges(base view.Metadata, reqs view.Requirements, updates view.Updates) (view.Metadata, bool, error) {
	for _, req := range reqs {
		if err := req.Validate(base); err != nil {
			return nil, false, viewRequirementFailed(req, base, err)
		}
	}
	b, err := view.MetadataBuilderFromBase(base)
	if err != nil {
		return nil, false, err
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, false, invalidView(fmt.Errorf("cannot apply %s: %w", u.Action(), err))
		}
	}
	if !b.HasChanges() {
		return base, false, nil
	}
	res, err := b.Build()
	if err != nil {
		return nil, false, invalidView(err)
	}
	return res.Metadata, true, nil
}

// invalidView answers a view that iceberg-go's view package finds invalid
// (two queries for one dialect, ...) as Java catalogs do: an
// IllegalArgumentException with the same wording.
func invalidView(err error) error {
	if errors.Is(err, view.ErrInvalidViewMetadata) {
		return invalidArgument("%v", err)
	}
	return badRequest("invalid view: %v", err)
}

func (c *Catalog) dropView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	if err := c.dropViewIdent(r.Context(), ident(rt.Namespace, rt.View)); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// dropViewIdent drops a view's row, then its current metadata file unless
// the view sets gc.enabled=false: as in Java's catalogs, such a view can be
// registered again from that file. (iceberg-go's DropView always deletes it.)
func (c *Catalog) dropViewIdent(ctx context.Context, id table.Identifier) error {
	loc, meta, err := c.currentView(ctx, id)
	if err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error { return c.deleteRow(ctx, tx, id, rowView, loc) })
	if err != nil {
		return err
	}
	if meta.Properties().Get("gc.enabled", "true") != "false" {
		c.removeFile(ctx, loc)
	}
	return nil
}

func (c *Catalog) viewExists(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	id := ident(rt.Namespace, rt.View)
	ok, err := c.cat.CheckViewExists(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchView, "view %s does not exist",
			strings.Join(id, "."))
	}
	writeNoContent(w)
	return nil
}

// renameView moves a view's row; the SQL catalog has no view rename. The
// checks come first so each failure gets the spec's own error type; the
// row update itself still fails safely if a concurrent request wins.
func (c *Catalog) renameView(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	from, to, err := decodeRename(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := c.renameChecks(ctx, from, to, rowView); err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error {
		return c.renameRow(ctx, tx, from, to, rowView)
	})
	if err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// newViewIdent checks what a new view's name must be: storable, in an
// existing namespace, and free.
func (c *Catalog) newViewIdent(ctx context.Context, ns table.Identifier, name string) (table.Identifier, error) {
	if err := checkName("view", name); err != nil {
		return nil, err
	}
	if err := c.requireNamespace(ctx, ns); err != nil {
		return nil, err
	}
	id := ident(ns, name)
	return id, c.checkNameFree(ctx, id, rowView)
}

// registerView adds a view from an existing view metadata file. A file that
// cannot be read as view metadata is the client's mistake (400); what it
// holds is never echoed.
func (c *Catalog) registerView(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.MetadataLocation == "" {
		return badRequest("register-view needs a name and a metadata-location")
	}
	ctx := r.Context()
	id, err := c.newViewIdent(ctx, rt.Namespace, req.Name)
	if err != nil {
		return err
	}
	if err := c.checkLocation("metadata-location", req.MetadataLocation); err != nil {
		return err
	}
	meta, err := c.readViewMetadata(ctx, req.MetadataLocation)
	if errors.Is(err, fs.ErrNotExist) {
		return missingFile(req.MetadataLocation)
	}
	if err != nil {
		return badRequest("metadata-location %q cannot be read as view metadata", req.MetadataLocation)
	}
	if err := c.checkViewMetadata(meta); err != nil {
		return err
	}
	err = c.withTx(ctx, func(tx *sql.Tx) error {
		return c.insertRow(ctx, tx, id, rowView, req.MetadataLocation)
	})
	if err != nil {
		return err
	}
	writeView(w, req.MetadataLocation, meta)
	return nil
}
