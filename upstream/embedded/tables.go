package embedded

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/upstream/icerest"
)

func (c *Catalog) listTables(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	return c.listObjects(w, r, rt, c.cat.ListTables, rowTable)
}

// listObjects answers ListTables/ListViews: one page of the namespace's
// tables or views (list), 404 for a missing namespace.
func (c *Catalog) listObjects(w http.ResponseWriter, r *http.Request, rt icerest.Route,
	list func(context.Context, table.Identifier) iter.Seq2[table.Identifier, error], typ string,
) error {
	token, size, err := pageParams(r)
	if err != nil {
		return err
	}
	extras, err := readListExtras(r)
	if err != nil {
		return err
	}
	if err := c.requireNamespace(r.Context(), rt.Namespace); err != nil {
		return err
	}
	var ids []tableIdentifier
	for id, err := range list(r.Context(), rt.Namespace) {
		if err != nil {
			return err
		}
		ids = append(ids, tableIdentifier{catalog.NamespaceFromIdent(id), catalog.TableNameFromIdent(id)})
	}
	page, next, err := paginate(ids, func(t tableIdentifier) string { return t.Name }, token, size)
	if err != nil {
		return err
	}
	if page == nil {
		page = []tableIdentifier{}
	}
	var uuids []string
	if extras.uuids {
		if uuids, err = c.objectUUIDs(r.Context(), page, typ); err != nil {
			return err
		}
	}
	icerest.WriteJSON(w, http.StatusOK, struct {
		Identifiers      []tableIdentifier `json:"identifiers"`
		NextPageToken    string            `json:"next-page-token,omitempty"`
		TableUUIDs       []string          `json:"table-uuids,omitzero"`
		ProtectionStatus []bool            `json:"protection-status,omitzero"`
	}{page, next, uuids, extras.protectionStatus(len(page))})
	return nil
}

type createTableRequest struct {
	Name     string          `json:"name"`
	Location string          `json:"location"`
	Schema   *iceberg.Schema `json:"schema"`
	// The client's spec and order name its own field ids, which the schema
	// renumbers: unbound, so Spark's 0-based ids decode.
	PartitionSpec *iceberg.UnboundPartitionSpec `json:"partition-spec"`
	WriteOrder    *table.UnboundSortOrder       `json:"write-order"`
	StageCreate   bool                          `json:"stage-create"`
	Properties    iceberg.Properties            `json:"properties"`
}

// loadTableResult is the spec's LoadTableResult.
type loadTableResult struct {
	MetadataLocation   string              `json:"metadata-location,omitempty"`
	Metadata           json.RawMessage     `json:"metadata"`
	Config             map[string]string   `json:"config"`
	StorageCredentials []storageCredential `json:"storage-credentials,omitempty"`
}

type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

func (c *Catalog) createTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req createTableRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.Schema == nil {
		return badRequest("create table needs a name and a schema")
	}
	if err := checkName("table", req.Name); err != nil {
		return err
	}
	if err := checkCreateShape(req); err != nil {
		return err
	}
	id := ident(rt.Namespace, req.Name)
	if err := c.requireNamespace(r.Context(), rt.Namespace); err != nil {
		return err
	}
	loc, err := c.newTableLocation(r.Context(), id, req)
	if err != nil {
		return err
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(req.Properties), catalog.WithLocation(loc)}
	if req.PartitionSpec != nil {
		opts = append(opts, catalog.WithPartitionSpec(&req.PartitionSpec.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, catalog.WithSortOrder(req.WriteOrder.SortOrder))
	}
	if req.StageCreate {
		return c.stageCreate(w, r, id, req)
	}
	if err := c.checkNameFree(r.Context(), id, rowTable); err != nil {
		return err
	}
	tbl, err := c.cat.CreateTable(r.Context(), id, req.Schema, opts...)
	if err != nil {
		return err
	}
	return c.writeTable(w, r, tbl.MetadataLocation(), tbl.Metadata())
}

// checkCreateShape checks a create's partition spec and write order
// against its schema (the ids they name are the request schema's).
func checkCreateShape(req createTableRequest) error {
	if req.PartitionSpec != nil {
		if err := checkSpec(req.Schema, &req.PartitionSpec.PartitionSpec); err != nil {
			return err
		}
	}
	if req.WriteOrder != nil {
		return checkOrder(req.Schema, req.WriteOrder.SortOrder)
	}
	return nil
}

// stageCreate returns the metadata a create would produce without creating
// anything; the client finishes with a commit carrying assert-create.
func (c *Catalog) stageCreate(w http.ResponseWriter, r *http.Request, id table.Identifier, req createTableRequest) error {
	if err := c.checkNameFree(r.Context(), id, rowTable); err != nil {
		return err
	}
	loc, err := c.newTableLocation(r.Context(), id, req)
	if err != nil {
		return err
	}
	order := table.UnsortedSortOrder
	var spec *iceberg.PartitionSpec
	if req.PartitionSpec != nil {
		spec = &req.PartitionSpec.PartitionSpec
	}
	if req.WriteOrder != nil {
		order = req.WriteOrder.SortOrder
	}
	meta, err := table.NewMetadata(req.Schema, spec, order, loc, req.Properties)
	if err != nil {
		return badRequest("%v", err)
	}
	if err := makeMetadataDir(loc); err != nil {
		return err
	}
	return c.writeTable(w, r, "", meta)
}

// makeMetadataDir creates a staged table's metadata folder on a local
// file system (loc is allowed: newTableLocation checked it). A staged
// create writes nothing, but DuckDB's CTAS then writes its manifests into
// <location>/metadata/ before the commit, and its local file system
// creates no parent folders. Object stores have no folders to make.
func makeMetadataDir(loc string) error {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "file" {
		return nil
	}
	return os.MkdirAll(filepath.Join(u.Path, "metadata"), 0o755)
}

// newTableLocation is where a created table goes: the requested location,
// else the default one; either must be allowed, and so must the paths its
// properties name.
func (c *Catalog) newTableLocation(ctx context.Context, id table.Identifier, req createTableRequest) (string, error) {
	loc := normalLocation(strings.TrimSuffix(req.Location, "/"))
	if loc == "" {
		var err error
		if loc, err = c.defaultLocation(ctx, id); err != nil {
			return "", err
		}
	}
	if err := c.checkLocation("table location", loc); err != nil {
		return "", err
	}
	return loc, c.checkPathProperties(req.Properties)
}

// defaultLocation is where a new table or view goes: under the
// namespace's `location` property, else <warehouse>/<namespace>.db/<name>.
// When another table or view already lives there (one renamed away keeps
// its location), the new one gets a suffix of its own: two tables sharing a
// directory would lose each other's files when one is purged.
func (c *Catalog) defaultLocation(ctx context.Context, id table.Identifier) (string, error) {
	ns := catalog.NamespaceFromIdent(id)
	props, err := c.cat.LoadNamespaceProperties(ctx, ns)
	if err != nil {
		return "", err
	}
	nsLoc, err := c.namespaceLocation(ns, props)
	if err != nil {
		return "", err
	}
	loc, err := url.JoinPath(nsLoc, locationSegment(catalog.TableNameFromIdent(id)))
	if err != nil {
		return "", err
	}
	used, err := c.locationInUse(ctx, loc)
	if err != nil || !used {
		return loc, err
	}
	return loc + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12], nil
}

// namespaceLocation is the namespace's `location` property, else
// <warehouse>/<namespace>.db (levels joined by dots).
func (c *Catalog) namespaceLocation(ns table.Identifier, props iceberg.Properties) (string, error) {
	if l := props.Get("location", ""); l != "" {
		return strings.TrimSuffix(l, "/"), nil
	}
	levels := make([]string, len(ns))
	for i, l := range ns {
		levels[i] = namespaceSegment(l)
	}
	return url.JoinPath(c.props.Get("warehouse", ""), strings.Join(levels, ".")+".db")
}

// checkNameFree rejects the create of a table or view (typ) when a table
// or view already has the name: both live in one identifier space.
func (c *Catalog) checkNameFree(ctx context.Context, id table.Identifier, typ string) error {
	occupant, err := c.occupant(ctx, id)
	if err != nil || occupant == "" {
		return err
	}
	return nameTaken(typ, occupant, id)
}

// registerTable adds a table from an existing metadata file; with
// overwrite=true an existing table is moved to that file.
func (c *Catalog) registerTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Name == "" || req.MetadataLocation == "" {
		return badRequest("register needs a name and a metadata-location")
	}
	if err := checkName("table", req.Name); err != nil {
		return err
	}
	req.MetadataLocation = normalLocation(req.MetadataLocation)
	ctx := r.Context()
	id := ident(rt.Namespace, req.Name)
	if err := c.requireNamespace(ctx, rt.Namespace); err != nil {
		return err
	}
	meta, err := c.readTableMetadata(ctx, req.MetadataLocation)
	if err != nil {
		return err
	}
	if err := c.checkTableMetadata(meta); err != nil {
		return err
	}
	cur, taken, err := c.rowLocation(ctx, id, rowTable)
	if err != nil {
		return err
	}
	switch {
	case taken && cur == "":
		return nameTaken(rowTable, rowView, id)
	case taken && !req.Overwrite:
		return nameTaken(rowTable, rowTable, id)
	case taken:
		err = c.withTx(ctx, func(tx *sql.Tx) error {
			return c.swapRow(ctx, tx, id, rowTable, cur, req.MetadataLocation)
		})
	default:
		err = c.withTx(ctx, func(tx *sql.Tx) error {
			return c.insertRow(ctx, tx, id, rowTable, req.MetadataLocation)
		})
	}
	if err != nil {
		return err
	}
	return c.writeTable(w, r, req.MetadataLocation, meta)
}

// readTableMetadata reads a metadata file a client names (register): only
// an allowed one is opened, and what a file holds is never echoed.
func (c *Catalog) readTableMetadata(ctx context.Context, loc string) (table.Metadata, error) {
	if err := c.checkLocation("metadata-location", loc); err != nil {
		return nil, err
	}
	fs, err := c.fileIO(ctx, loc, nil)
	if err != nil {
		return nil, badRequest("cannot open %s: %v", loc, err)
	}
	f, err := fs.Open(loc)
	if err != nil {
		return nil, badRequest("cannot read metadata file %s: %v", loc, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, badRequest("cannot read metadata file %s: %v", loc, err)
	}
	meta, err := table.ParseMetadataBytes(b)
	if err != nil {
		// The parser's message quotes the file's bytes ("invalid character
		// 'r' ..."): never echo what a file holds.
		c.log.Debug("embedded catalog: not table metadata", zap.String("location", loc), zap.Error(err))
		return nil, badRequest("%s is not valid table metadata", loc)
	}
	return meta, nil
}

func (c *Catalog) loadTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	id := ident(rt.Namespace, rt.Table)
	tbl, err := c.openTable(r.Context(), id)
	if errors.Is(err, fs.ErrNotExist) {
		// The row points at a metadata file that is gone: Java catalogs
		// answer NotFoundException, worded as here.
		if loc, _, lerr := c.rowLocation(r.Context(), id, rowTable); lerr == nil && loc != "" {
			return missingFile(loc)
		}
	}
	if err != nil {
		return err
	}
	return c.writeTable(w, r, tbl.MetadataLocation(), tbl.Metadata())
}

// writeTable answers with a LoadTableResult, honouring `snapshots=refs`,
// an ETag per representation, and If-None-Match.
func (c *Catalog) writeTable(w http.ResponseWriter, r *http.Request, loc string, meta table.Metadata) error {
	mode := r.URL.Query().Get("snapshots")
	if mode != "" && mode != "all" && mode != "refs" {
		return badRequest("snapshots must be all or refs, got %q", mode)
	}
	if mode == "" {
		mode = "all"
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	if mode == "refs" {
		if raw, err = onlyReferencedSnapshots(raw); err != nil {
			return err
		}
	}
	if loc != "" {
		etag := tableETag(loc, mode)
		w.Header().Set("ETag", etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && icerest.ETagMatches(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	icerest.WriteJSON(w, http.StatusOK, loadTableResult{
		MetadataLocation:   loc,
		Metadata:           raw,
		Config:             map[string]string{},
		StorageCredentials: c.vendedCredentials(r, meta.Location()),
	})
	return nil
}

// tableETag identifies one representation of one metadata version.
func tableETag(loc, mode string) string {
	sum := sha256.Sum256([]byte(loc + "\x00snapshots=" + mode))
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}

// onlyReferencedSnapshots keeps just the snapshots that a branch or tag
// points at (snapshots=refs).
func onlyReferencedSnapshots(raw []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var refs map[string]struct {
		SnapshotID int64 `json:"snapshot-id"`
	}
	var snaps []json.RawMessage
	if err := json.Unmarshal(doc["refs"], &refs); err != nil && doc["refs"] != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc["snapshots"], &snaps); err != nil && doc["snapshots"] != nil {
		return nil, err
	}
	keep := map[int64]bool{}
	for _, ref := range refs {
		keep[ref.SnapshotID] = true
	}
	kept := make([]json.RawMessage, 0, len(keep))
	for _, s := range snaps {
		var id struct {
			SnapshotID int64 `json:"snapshot-id"`
		}
		if err := json.Unmarshal(s, &id); err != nil {
			return nil, err
		}
		if keep[id.SnapshotID] {
			kept = append(kept, s)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	doc["snapshots"] = b
	return json.Marshal(doc)
}

// vendedCredentials hands the warehouse's storage credentials to clients
// that ask for vended credentials; a local warehouse needs none.
func (c *Catalog) vendedCredentials(r *http.Request, location string) []storageCredential {
	if !strings.Contains(r.Header.Get("X-Iceberg-Access-Delegation"), "vended-credentials") {
		return nil
	}
	cfg := map[string]string{}
	for k, v := range c.props {
		if strings.HasPrefix(k, "s3.") || strings.HasPrefix(k, "client.") {
			cfg[k] = v
		}
	}
	if len(cfg) == 0 || location == "" {
		return nil
	}
	return []storageCredential{{Prefix: location, Config: cfg}}
}

func (c *Catalog) loadCredentials(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	tbl, err := c.openTable(r.Context(), ident(rt.Namespace, rt.Table))
	if err != nil {
		return err
	}
	r.Header.Set("X-Iceberg-Access-Delegation", "vended-credentials")
	creds := c.vendedCredentials(r, tbl.Location())
	if creds == nil {
		creds = []storageCredential{}
	}
	icerest.WriteJSON(w, http.StatusOK, map[string]any{"storage-credentials": creds})
	return nil
}

func (c *Catalog) dropTable(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	purge, err := boolParam(r, "purgeRequested")
	if err != nil {
		return err
	}
	if err := c.dropTableIdent(r, ident(rt.Namespace, rt.Table), purge); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// dropTableIdent drops a table; a purge then deletes its files through the
// confined file system (the SQL catalog's own purge would follow the
// metadata anywhere).
func (c *Catalog) dropTableIdent(r *http.Request, id table.Identifier, purge bool) error {
	ctx := r.Context()
	if !purge {
		return c.cat.DropTable(ctx, id)
	}
	tbl, err := c.openTable(ctx, id)
	if err != nil {
		return err
	}
	if err := c.cat.DropTable(ctx, id); err != nil {
		return err
	}
	if err := tbl.PurgeFiles(context.WithoutCancel(ctx)); err != nil {
		c.log.Warn("embedded catalog: table dropped, some files not purged",
			zap.String("table", dotted(id)), zap.Error(err))
	}
	return nil
}

func (c *Catalog) tableExists(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	ok, err := c.cat.CheckTableExists(r.Context(), ident(rt.Namespace, rt.Table))
	if err != nil {
		return err
	}
	if !ok {
		return icerest.Errorf(http.StatusNotFound, icerest.NoSuchTable, "table %s does not exist",
			strings.Join(ident(rt.Namespace, rt.Table), "."))
	}
	writeNoContent(w)
	return nil
}

// reportMetrics accepts a metrics report. The embedded catalog keeps no
// metrics store; it checks the report is well-formed and acknowledges it.
func (c *Catalog) reportMetrics(w http.ResponseWriter, r *http.Request, rt icerest.Route) error {
	var report struct {
		ReportType string `json:"report-type"`
		TableName  string `json:"table-name"`
	}
	if err := decodeBody(r, &report); err != nil {
		return err
	}
	if report.ReportType == "" {
		return badRequest("metrics report needs a report-type")
	}
	ok, err := c.cat.CheckTableExists(r.Context(), ident(rt.Namespace, rt.Table))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, strings.Join(ident(rt.Namespace, rt.Table), "."))
	}
	writeNoContent(w)
	return nil
}

type renameRequest struct {
	Source      tableIdentifier `json:"source"`
	Destination tableIdentifier `json:"destination"`
}

func decodeRename(r *http.Request) (from, to table.Identifier, err error) {
	var req renameRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, nil, err
	}
	if err := errors.Join(req.Source.validate(), req.Destination.validate()); err != nil {
		return nil, nil, err
	}
	if err := checkIdent("destination", req.Destination.ident()); err != nil {
		return nil, nil, err
	}
	return req.Source.ident(), req.Destination.ident(), nil
}

// renameChecks gives each way a rename of a table or view (typ) can fail
// the spec's own error: a missing source, a missing destination namespace,
// a name already taken.
func (c *Catalog) renameChecks(ctx context.Context, from, to table.Identifier, typ string) error {
	loc, _, err := c.rowLocation(ctx, from, typ)
	if err != nil {
		return err
	}
	if loc == "" {
		return noSuchObject(typ, from)
	}
	if err := c.requireNamespace(ctx, catalog.NamespaceFromIdent(to)); err != nil {
		return err
	}
	occupant, err := c.occupant(ctx, to)
	if err != nil || occupant == "" {
		return err
	}
	return renameTaken(typ, occupant, from, to)
}

// occupant tells what holds an identifier: rowTable, rowView or "".
func (c *Catalog) occupant(ctx context.Context, id table.Identifier) (string, error) {
	loc, taken, err := c.rowLocation(ctx, id, rowTable)
	switch {
	case err != nil || !taken:
		return "", err
	case loc != "":
		return rowTable, nil
	}
	return rowView, nil
}

func (c *Catalog) renameTable(w http.ResponseWriter, r *http.Request, _ icerest.Route) error {
	from, to, err := decodeRename(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := c.renameChecks(ctx, from, to, rowTable); err != nil {
		return err
	}
	if _, err := c.cat.RenameTable(ctx, from, to); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}
