package delta

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/translate/deltalog"
	"github.com/lakegate/lakegate/translate/logsync"
	"github.com/lakegate/lakegate/translate/schema"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// An EXTERNAL Delta table (created through this API or UC's createTable
// with a LOCATION) is committed by its engines straight to its own
// _delta_log: no call reaches the catalog, as in Unity Catalog. Its
// Iceberg side would keep what the create said forever. So the Delta log
// is its truth: the log sync stage of the catalogs' pipelines
// (translate/logsync) asks the Service (its logsync.Log) before it
// answers a load of one, and when the log has a version newer than the
// answer's, the Iceberg table is brought to it (schema, partitioning, and
// one snapshot that adds the log's new files and deletes the ones it
// removed). Iceberg writes to such a table are refused: the next sync
// would undo them. UniForm tables are not synced: their Iceberg metadata
// is the engine's own. The Service's own calls (s.client) reach the
// catalogs beneath the stage; only its answering load (Load) goes
// through it, as every door's does.

// PropSyncedVersion is the Delta log version an EXTERNAL table's Iceberg
// side was last brought to.
const PropSyncedVersion = Prefix + "synced-version"

// fsFunc opens a table's storage.
type fsFunc = func(context.Context) (iceio.IO, error)

// logSynced reports a table whose Iceberg side lakegate keeps from its
// Delta log.
func logSynced(props map[string]string) bool {
	return props[PropTableType] == External && props[PropLatestUniform] == ""
}

// Owned reports a table whose truth is its Delta log (logsync.Log).
func (s *Service) Owned(props map[string]string) bool { return logSynced(props) }

// Synced is the log version the table was last synced to (logsync.Log).
func (s *Service) Synced(props map[string]string) (int64, bool) {
	if v := int64Prop(props, PropSyncedVersion); v != nil {
		return *v, true
	}
	return 0, false
}

// Latest lists the table's log (logsync.Log), with the credentials its
// storage needs, from a load of its own.
func (s *Service) Latest(ctx context.Context, t logsync.Table) (int64, bool, error) {
	ref := Ref(t)
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return 0, false, syncError(ref, err)
	}
	st, err := s.logState(ctx, c, ref)
	if err != nil || st == nil {
		return 0, false, syncError(ref, err)
	}
	return st.version, true, nil
}

// SyncTo brings the table to version v of its log or later (logsync.Log).
func (s *Service) SyncTo(ctx context.Context, t logsync.Table, v int64) error {
	ref := Ref(t)
	err := s.syncExternal(ctx, ref, v)
	for try := 1; isConflict(err) && try < syncAttempts; try++ {
		// The table moved under the sync (an Iceberg commit raced it, or
		// a replica without the shared lock synced it): again, on the
		// table as it is now, which is often already at v.
		err = s.syncExternal(ctx, ref, v)
	}
	return syncError(ref, err)
}

// syncAttempts bounds the syncs of one load that lose a race: replicas
// without a shared lock (no Redis) race each other's syncs after every
// commit, and one retry was seen to lose again (5 of 104 loads through
// two replicas answered 502).
const syncAttempts = 4

// Writable refuses an Iceberg updateTable or commitTransaction of a table
// whose truth is its Delta log (logsync.Log).
func (s *Service) Writable(ctx context.Context, t logsync.Table) error {
	c, err := s.client(ctx, t.Catalog)
	if err != nil {
		return nil // the write's own call reports the catalog's failure
	}
	p, err := c.peek(ctx, t.Namespace, t.Name)
	if err != nil || !logSynced(p.Properties) {
		return nil // a missing table is the write's own answer to give
	}
	return icerest.Errorf(http.StatusNotAcceptable, icerest.UnsupportedOperation,
		"table %s is an EXTERNAL Delta table: its Delta log is its truth, and lakegate shows it as Iceberg read-only; "+
			"write it with a Delta engine", qualified(t.Namespace, t.Name))
}

// syncExternal brings the table to version v of its log or later, under
// the lock the Delta updates take (shared across replicas). Under the
// lock the table is loaded again: another request, or another replica,
// may have synced it meanwhile, and then there is nothing to do.
func (s *Service) syncExternal(ctx context.Context, ref Ref, v int64) error {
	c, err := s.client(ctx, ref.Catalog)
	if err != nil {
		return err
	}
	unlock, err := s.store.Lock(ctx, lockKey(ref))
	if err != nil {
		return Errorf(http.StatusServiceUnavailable, InternalServerError, "could not lock the table to sync it: %v", err)
	}
	defer unlock()
	st, err := s.logState(ctx, c, ref)
	if st == nil || err != nil || (st.synced != nil && *st.synced >= v) {
		return err
	}
	snap, err := st.log.At(ctx, st.version)
	if err != nil {
		return err
	}
	sy := &logSync{c: c, ref: ref, snap: snap}
	l, err := sy.metadata(ctx, st.table)
	if err != nil {
		return err
	}
	return sy.files(ctx, l, st.fsF)
}

// logState is an EXTERNAL table and its log.
type logState struct {
	table   *loaded
	fsF     fsFunc
	log     *deltalog.Log
	version int64  // the log's latest
	synced  *int64 // the version the table was last synced to
}

// logState loads the table (with the credentials its storage needs) and
// lists its log: nil when there is no log to follow (not an EXTERNAL
// Delta table any more, or no log yet: the table is what its create
// said).
func (s *Service) logState(ctx context.Context, c *icebergClient, ref Ref) (*logState, error) {
	l, err := c.load(ctx, ref.Namespace, ref.Name, true)
	if err != nil || !logSynced(l.Metadata.Properties()) {
		return nil, err
	}
	fsF, err := s.tableIO(ref, l)
	if err != nil {
		return nil, err
	}
	fsys, err := fsF(ctx)
	if err != nil {
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "opening the table's storage: %v", err)
	}
	log := deltalog.New(strings.TrimSuffix(l.Metadata.Location(), "/"), fsys)
	v, err := log.LatestVersion(ctx)
	switch {
	case errors.Is(err, deltalog.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &logState{table: l, fsF: fsF, log: log, version: v, synced: int64Prop(l.Metadata.Properties(), PropSyncedVersion)}, nil
}

// lockKey is the store lock a table's Delta updates and syncs take.
func lockKey(ref Ref) string {
	return "table|" + ref.Catalog + "|" + strings.Join(ref.Namespace, "\x1f") + "|" + ref.Name
}

// logSync is one sync of a table to one snapshot of its log.
type logSync struct {
	c    *icebergClient
	ref  Ref
	snap *deltalog.Snapshot
}

// metadata commits the log's schema and partitioning when they differ
// from the table's. It is its own Iceberg commit, before the files: the
// data files must be made for the spec they are filed under.
func (sy *logSync) metadata(ctx context.Context, l *loaded) (*loaded, error) {
	m := l.Metadata
	cols, err := sy.snap.Metadata.Columns()
	if err != nil {
		return nil, untranslatable("the log's schema: %v", err)
	}
	props := map[string]string(m.Properties())
	by := map[string]*Update{}
	next, err := evolve(m.CurrentSchema(), m.LastColumnID(), cols, props, hasData(m))
	if err != nil {
		return nil, untranslatable("the log's schema does not evolve the table's: %v", err)
	}
	if !next.Equals(m.CurrentSchema()) {
		by[ActSetColumns] = &Update{Action: ActSetColumns, columns: cols}
	}
	part := sy.snap.Metadata.PartitionColumns
	if !slices.EqualFunc(part, schema.PartitionColumns(m.PartitionSpec(), next), strings.EqualFold) {
		by[ActSetPartitionColumns] = &Update{Action: ActSetPartitionColumns, PartitionColumns: part}
	}
	if len(by) == 0 {
		return l, nil
	}
	ups, _, err := translateUpdates(m, by)
	if err != nil {
		return nil, err
	}
	return sy.c.commit(ctx, sy.ref.Namespace, sy.ref.Name, commitRequirements(m), ups, UpdateRequirementConflict)
}

// files commits one snapshot that makes the table's data files the log's
// active files, with the synced version and the name mapping (Delta
// writes Parquet without field ids unless column mapping is on).
func (sy *logSync) files(ctx context.Context, l *loaded, fsF fsFunc) error {
	m := l.Metadata
	cols, err := sy.snap.Metadata.Columns()
	if err != nil {
		return untranslatable("the log's schema: %v", err)
	}
	if err := checkColumnIDs(cols, m.CurrentSchema(), sy.snap.Metadata.Configuration); err != nil {
		return err
	}
	nm, err := nameMapping(m.CurrentSchema())
	if err != nil {
		return err
	}
	set := SyncedProperties(sy.snap)
	set[PropSyncedVersion], set[table.DefaultNameMappingKey] = strconv.FormatInt(sy.snap.Version, 10), nm
	ups := appendProps(nil, m, set, nil)
	current, err := currentFiles(ctx, l, fsF)
	if err != nil {
		return err
	}
	dc := &dataCommit{version: sy.snap.Version, fsF: fsF}
	tr := fileTranslator{m: m}
	active := map[string]bool{}
	for i := range sy.snap.Files {
		f := &sy.snap.Files[i]
		active[f.Location] = true
		if current[f.Location] != nil {
			continue
		}
		df, err := tr.dataFile(addAction(f), true)
		if err != nil {
			return err
		}
		dc.adds = append(dc.adds, df)
	}
	for loc, df := range current {
		if !active[loc] {
			dc.removes = append(dc.removes, df)
		}
	}
	if dc.changesFiles() {
		_, err = dc.commit(ctx, sy.c, sy.ref, l, ups)
		return err
	}
	_, err = sy.c.commit(ctx, sy.ref.Namespace, sy.ref.Name, commitRequirements(m), ups, UpdateRequirementConflict)
	return err
}

// addAction is a log snapshot's add file as a commit file's add action.
func addAction(f *deltalog.AddFile) *fileAction {
	a := &fileAction{Path: f.Path, PartitionValues: f.PartitionValues, Size: f.Size, Stats: f.Stats}
	if f.DeletionVector != nil {
		a.DeletionVector, _ = json.Marshal(f.DeletionVector)
	}
	return a
}

// currentFiles are the data files of the table's current snapshot, by
// location. A delete file means the table was written as Iceberg, which
// a log sync cannot reconcile.
func currentFiles(ctx context.Context, l *loaded, fsF fsFunc) (map[string]iceberg.DataFile, error) {
	out := map[string]iceberg.DataFile{}
	if l.Metadata.CurrentSnapshot() == nil {
		return out, nil
	}
	tbl := table.New(nil, l.Metadata, l.MetadataLocation, fsF, nil)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, Errorf(http.StatusBadGateway, InternalServerError, "reading the table's manifests: %v", err)
	}
	for _, t := range tasks {
		if len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 {
			return nil, untranslatable("the Iceberg table has delete files, which its Delta log knows nothing of")
		}
		out[t.File.FilePath()] = t.File
	}
	return out, nil
}

func isConflict(err error) bool {
	var de *Error
	return errors.As(err, &de) && de.Code == http.StatusConflict
}

// syncError puts a failed sync in the Iceberg model: what cannot be shown
// as Iceberg is 406 UnsupportedOperationException, a log or storage that
// cannot be read is 502.
func syncError(ref Ref, err error) error {
	if err == nil {
		return nil
	}
	name := qualified(ref.Namespace, ref.Name)
	var de *Error
	if !errors.As(err, &de) {
		return icerest.Errorf(http.StatusBadGateway, icerest.InternalServerError,
			"EXTERNAL Delta table %s: reading its Delta log: %v", name, err)
	}
	switch de.Code {
	case http.StatusBadRequest:
		return icerest.Errorf(http.StatusNotAcceptable, icerest.UnsupportedOperation,
			"EXTERNAL Delta table %s cannot be shown as Iceberg: %s", name, de.Message)
	case http.StatusForbidden:
		return icerest.Errorf(de.Code, icerest.Forbidden, "EXTERNAL Delta table %s: %s", name, de.Message)
	case http.StatusNotFound:
		return icerest.Errorf(de.Code, icerest.NoSuchTable, "EXTERNAL Delta table %s: %s", name, de.Message)
	case http.StatusServiceUnavailable:
		return icerest.Errorf(de.Code, icerest.ServiceUnavailable, "EXTERNAL Delta table %s: %s", name, de.Message)
	case http.StatusConflict: // lost syncAttempts races: nothing is wrong, ask again
		return icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"EXTERNAL Delta table %s: concurrent syncs kept moving it (%s); try again", name, de.Message)
	}
	return icerest.Errorf(http.StatusBadGateway, icerest.InternalServerError, "EXTERNAL Delta table %s: %s", name, de.Message)
}
