package sharing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/internal/parquetcheck"
	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
)

// Row-level changes of a snapshot that rewrote data files (copy-on-write
// delete, update, merge; compaction), derived as Iceberg's changelog scan
// does without row lineage: rows only in the files it removed are
// deletes, rows only in the files it added are inserts, and rows it copied
// unchanged cancel out (compared as whole rows, duplicates counted). They
// are written once per snapshot as Parquet change files (the data columns
// plus `_change_type`) under the server's ChangeDir, and served as `cdf`
// lines through lakegate's own signed file URLs.

const (
	changeTypeColumn = "_change_type"
	// defaultMaxRewriteBytes bounds the data files one version's
	// derivation reads.
	defaultMaxRewriteBytes = 64 << 20
)

func (s *Server) maxRewriteBytes() int64 {
	if s.MaxRewriteBytes > 0 {
		return s.MaxRewriteBytes
	}
	return defaultMaxRewriteBytes
}

// changeIndex is what a derived snapshot's folder records, written last:
// its presence means every change file is complete.
type changeIndex struct {
	Files []changeEntry `json:"files"`
}

type changeEntry struct {
	Name            string             `json:"name"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
}

// rewriteChanges adds the cdf lines of version v, whose snapshots snaps
// (oldest first) include a rewrite.
func (rs *response) rewriteChanges(ctx context.Context, fs iceio.IO, v version, snaps []table.Snapshot) error {
	name := rs.l.target.Table
	if rs.s.ChangeDir == "" {
		return badParam("version %d of table %q rewrote data files (a copy-on-write delete, update or merge); "+
			"its row-level changes need a change_data_dir, which this server has none of", v.V, name)
	}
	// One folder per catalog, table and version's snapshots: the files
	// never change once written, so a complete index is served as it is.
	dir := filepath.Join(rs.s.ChangeDir, url.PathEscape(rs.l.target.Catalog), v.Meta.TableUUID().String(),
		fmt.Sprintf("%d-%d-s%d-p%t", snaps[0].SnapshotID, snaps[len(snaps)-1].SnapshotID, v.Meta.CurrentSchema().ID, rs.partitioned))
	idx, err := rs.changeIndex(ctx, fs, dir, v, snaps)
	if err != nil {
		return err
	}
	local := fileurl.Local{Sealer: rs.s.Sealer, BaseURL: rs.req.FilesBase}
	for _, e := range idx.Files {
		p := filepath.Join(dir, e.Name)
		u, uerr := local.URL(p, rs.s.ChangeDir, rs.exp)
		if uerr != nil {
			return Errorf(http.StatusInternalServerError, CodeInternal, "cannot hand out a change file of table %q: %v", name, uerr)
		}
		rs.files++
		rs.bytes += e.Size
		if err := rs.add(actions.Cdf(rs.format, actions.ChangeFile{URL: u, Path: p, PartitionValues: e.PartitionValues,
			Size: e.Size, Version: v.V, Timestamp: v.Ts, Expiration: rs.exp.UnixMilli()})); err != nil {
			return err
		}
	}
	return nil
}

// versionFiles are the data files the version's snapshots removed and
// added, from their own manifests; a file added and removed within the
// version is in neither.
func (rs *response) versionFiles(fs iceio.IO, v version, snaps []table.Snapshot) (removed, added []iceberg.DataFile, _ error) {
	fail := func(err error) *Error {
		return rs.s.storageError(err, "reading the manifests of version %d of table %q failed", v.V, rs.l.target.Table)
	}
	addedAt := map[string]int{}
	for _, snap := range snaps {
		entries, err := ownEntries(fs, &snap)
		if err != nil {
			return nil, nil, fail(err)
		}
		for _, e := range entries {
			df := e.DataFile()
			if df.ContentType() != iceberg.EntryContentData {
				return nil, nil, badParam("version %d of table %q writes row-level delete files (merge-on-read); "+
					"Delta Sharing cannot express them", v.V, rs.l.target.Table)
			}
			if e.Status() == iceberg.EntryStatusADDED {
				addedAt[df.FilePath()] = len(added)
				added = append(added, df)
			} else if i, ok := addedAt[df.FilePath()]; ok {
				added[i] = nil // added and removed within the version
			} else {
				removed = append(removed, df)
			}
		}
	}
	return removed, slices.DeleteFunc(added, func(df iceberg.DataFile) bool { return df == nil }), nil
}

// ownEntries are the entries snap added or deleted, from its own manifests.
func ownEntries(fs iceio.IO, snap *table.Snapshot) ([]iceberg.ManifestEntry, error) {
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, err
	}
	var out []iceberg.ManifestEntry
	for _, m := range manifests {
		if m.SnapshotID() != snap.SnapshotID {
			continue
		}
		entries, err := m.FetchEntries(fs, false)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.SnapshotID() == snap.SnapshotID && e.Status() != iceberg.EntryStatusEXISTING {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// changeIndex returns the version's change files, deriving and writing
// them first (within max_change_rewrite_bytes) when the folder has no
// complete index yet.
func (rs *response) changeIndex(ctx context.Context, fs iceio.IO, dir string, v version, snaps []table.Snapshot) (*changeIndex, error) {
	if raw, err := os.ReadFile(filepath.Join(dir, "index.json")); err == nil {
		var idx changeIndex
		if json.Unmarshal(raw, &idx) == nil {
			return &idx, nil
		}
	}
	removed, added, verr := rs.versionFiles(fs, v, snaps)
	if verr == nil {
		verr = rs.noEarlierDeletes(fs, v, snaps[0])
	}
	if verr != nil {
		return nil, verr
	}
	files := append(slices.Clone(removed), added...)
	var bytes int64
	for _, df := range files {
		bytes += df.FileSizeBytes()
	}
	if limit := rs.s.maxRewriteBytes(); bytes > limit {
		return nil, badParam("version %d of table %q rewrote %d bytes of data files; deriving its row-level changes "+
			"reads them all, and lakegate reads at most %d per version (max_change_rewrite_bytes): ask for a range "+
			"without it", v.V, rs.l.target.Table, bytes, limit)
	}
	if err := rs.vetDataFiles(ctx, fs, v, files); err != nil {
		return nil, err
	}
	idx, err := rs.derive(ctx, dir, v, removed, added)
	if err != nil {
		return nil, rs.s.storageError(err, "deriving the row-level changes of version %d of table %q failed", v.V, rs.l.target.Table)
	}
	return idx, nil
}

// vetDataFiles decodes every data file a derivation reads once, with
// parquetcheck.Decode, before iceberg-go's scan reads them in worker
// goroutines of its own: the files are untrusted bytes (any writer of the
// table wrote them), and a corrupt footer or page makes arrow-go panic,
// which in those goroutines no recover reaches and would end the process.
// It doubles the decoding of a derivation, which happens once per version
// (its change files are kept) and reads at most max_change_rewrite_bytes.
func (rs *response) vetDataFiles(ctx context.Context, fs iceio.IO, v version, files []iceberg.DataFile) error {
	for _, df := range files {
		if df.FileFormat() != iceberg.ParquetFile {
			continue // the scan refuses it with an error of its own
		}
		// The recipient is told which version failed, never which file:
		// a path under the table holds partition values. The log has it.
		name := dataFileName(v.Meta.Location(), df.FilePath())
		f, err := fs.Open(df.FilePath())
		if err != nil {
			return rs.s.storageError(fmt.Errorf("%s: %w", name, err),
				"deriving the row-level changes of version %d of table %q failed", v.V, rs.l.target.Table)
		}
		err = parquetcheck.Decode(ctx, f)
		_ = f.Close() // read only
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return rs.s.storageError(fmt.Errorf("%s: %w", name, err), "a data file of version %d of table %q is corrupt "+
				"(not parquet lakegate can read); the version's row-level changes cannot be derived", v.V, rs.l.target.Table)
		}
	}
	return nil
}

// dataFileName names a data file in the server's log: its path under the
// table's location, else its base name.
func dataFileName(tableLocation, path string) string {
	if rel, ok := strings.CutPrefix(path, strings.TrimSuffix(tableLocation, "/")+"/"); ok && rel != "" {
		return rel
	}
	return path[strings.LastIndex(path, "/")+1:]
}

// noEarlierDeletes refuses a version whose predecessor's snapshot has
// delete files (merge-on-read): rows they delete from the files it
// rewrites would read as present and be reported deleted again.
func (rs *response) noEarlierDeletes(fs iceio.IO, v version, first table.Snapshot) error {
	if first.ParentSnapshotID == nil {
		return nil
	}
	parent := v.Meta.SnapshotByID(*first.ParentSnapshotID)
	if parent == nil {
		return nil
	}
	manifests, err := parent.Manifests(fs)
	if err != nil {
		return rs.s.storageError(err, "reading the manifests of version %d of table %q failed", v.V, rs.l.target.Table)
	}
	for _, m := range manifests {
		if m.ManifestContent() == iceberg.ManifestContentDeletes {
			return badParam("version %d of table %q rewrote data files that earlier delete files (merge-on-read) apply to; "+
				"Delta Sharing cannot express them", v.V, rs.l.target.Table)
		}
	}
	return nil
}

// partitionGroup is the files of one partition (all files when the
// answer declares no partition columns): a change file never mixes
// partitions, since its partitionValues hold for every row.
type partitionGroup struct {
	values         map[string]*string
	removed, added []iceberg.DataFile
}

func (rs *response) groups(v version, removed, added []iceberg.DataFile) ([]*partitionGroup, error) {
	by := map[string]*partitionGroup{}
	var keys []string
	put := func(df iceberg.DataFile, isAdded bool) error {
		values, err := actions.PartitionValues(df, rs.specOf(df), v.Meta.CurrentSchema())
		if err != nil {
			return err
		}
		raw, _ := json.Marshal(values)
		g := by[string(raw)]
		if g == nil {
			g = &partitionGroup{values: values}
			by[string(raw)] = g
			keys = append(keys, string(raw))
		}
		if isAdded {
			g.added = append(g.added, df)
		} else {
			g.removed = append(g.removed, df)
		}
		return nil
	}
	for _, df := range removed {
		if err := put(df, false); err != nil {
			return nil, err
		}
	}
	for _, df := range added {
		if err := put(df, true); err != nil {
			return nil, err
		}
	}
	sort.Strings(keys)
	out := make([]*partitionGroup, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out, nil
}

// derive writes one change file per partition with changes, then the
// index; files go to temporary names first, so a crash leaves no
// half-written file under a final name.
func (rs *response) derive(ctx context.Context, dir string, v version, removed, added []iceberg.DataFile) (*changeIndex, error) {
	groups, err := rs.groups(v, removed, added)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	vt := table.New(rs.l.tbl.Identifier(), v.Meta, v.Loc, rs.l.tbl.FS, nil)
	idx := &changeIndex{Files: []changeEntry{}}
	for i, g := range groups {
		rec, err := diffRows(ctx, vt, g.removed, g.added)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue // the partition's rows were only copied
		}
		name := fmt.Sprintf("part-%05d.parquet", i)
		size, err := writeParquet(filepath.Join(dir, name), rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		idx.Files = append(idx.Files, changeEntry{Name: name, PartitionValues: g.values, Size: size})
	}
	raw, _ := json.Marshal(idx)
	if err := writeAtomically(filepath.Join(dir, "index.json"), raw); err != nil {
		return nil, err
	}
	return idx, nil
}

// rows is the decoded rows of some data files, batch by batch.
type rows struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
}

func (r *rows) release() {
	for _, b := range r.batches {
		b.Release()
	}
}

func readRows(ctx context.Context, vt *table.Table, files []iceberg.DataFile) (*rows, error) {
	tasks := make([]table.FileScanTask, len(files))
	for i, df := range files {
		tasks[i] = table.FileScanTask{File: df, Start: 0, Length: df.FileSizeBytes()}
	}
	sc, it, err := vt.Scan().ReadTasks(ctx, tasks)
	if err != nil {
		return nil, err
	}
	out := &rows{schema: sc}
	for b, err := range it {
		if err != nil {
			out.release()
			return nil, err
		}
		out.batches = append(out.batches, b)
	}
	return out, nil
}

// rowKey is a row's whole value, for matching a removed row with its
// unchanged copy; null and the empty string differ.
func rowKey(b arrow.RecordBatch, i int) string {
	var k strings.Builder
	for _, col := range b.Columns() {
		if col.IsNull(i) {
			k.WriteString("\x00N")
			continue
		}
		v := col.ValueStr(i)
		k.WriteString("\x00V")
		k.WriteString(strconv.Itoa(len(v)))
		k.WriteByte(':')
		k.WriteString(v)
	}
	return k.String()
}

type rowRef struct{ batch, row int }

// diffRows is the change rows of one partition: deletes (removed rows no
// added row copies) then inserts (added rows no removed row had), each
// with _change_type; nil when there are none.
func diffRows(ctx context.Context, vt *table.Table, removedFiles, addedFiles []iceberg.DataFile) (arrow.RecordBatch, error) {
	removed, err := readRows(ctx, vt, removedFiles)
	if err != nil {
		return nil, err
	}
	defer removed.release()
	added, err := readRows(ctx, vt, addedFiles)
	if err != nil {
		return nil, err
	}
	defer added.release()

	pending := map[string][]rowRef{}
	for bi, b := range removed.batches {
		for i := 0; i < int(b.NumRows()); i++ {
			k := rowKey(b, i)
			pending[k] = append(pending[k], rowRef{bi, i})
		}
	}
	var inserts []rowRef
	for bi, b := range added.batches {
		for i := 0; i < int(b.NumRows()); i++ {
			k := rowKey(b, i)
			if refs := pending[k]; len(refs) > 0 {
				pending[k] = refs[1:] // copied unchanged
				continue
			}
			inserts = append(inserts, rowRef{bi, i})
		}
	}
	var deletes []rowRef
	for _, refs := range pending {
		deletes = append(deletes, refs...)
	}
	sort.Slice(deletes, func(a, b int) bool {
		if deletes[a].batch != deletes[b].batch {
			return deletes[a].batch < deletes[b].batch
		}
		return deletes[a].row < deletes[b].row
	})
	if len(deletes)+len(inserts) == 0 {
		return nil, nil
	}
	schema := removed.schema // ReadTasks answers the projected schema, files or none
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for _, set := range []struct {
		from *rows
		refs []rowRef
		kind string
	}{{removed, deletes, "delete"}, {added, inserts, "insert"}} {
		byBatch := make([][]int64, len(set.from.batches))
		for _, r := range set.refs {
			byBatch[r.batch] = append(byBatch[r.batch], int64(r.row))
		}
		for bi, b := range set.from.batches {
			p, err := takeRows(ctx, b, byBatch[bi], set.kind)
			if err != nil {
				return nil, err
			}
			if p != nil {
				parts = append(parts, p)
			}
		}
	}
	return concat(withChangeType(schema), parts)
}

// takeRows is the rows at idxs (in order) of batch b, with _change_type kind.
func takeRows(ctx context.Context, b arrow.RecordBatch, idxs []int64, kind string) (arrow.RecordBatch, error) {
	if len(idxs) == 0 {
		return nil, nil
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.AppendValues(idxs, nil)
	idx := ib.NewInt64Array()
	defer idx.Release()
	cols := make([]arrow.Array, 0, b.NumCols()+1)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, col := range b.Columns() {
		taken, err := compute.TakeArray(ctx, col, idx)
		if err != nil {
			return nil, err
		}
		cols = append(cols, taken)
	}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	for i := 0; i < idx.Len(); i++ {
		sb.Append(kind)
	}
	cols = append(cols, sb.NewStringArray())
	return array.NewRecordBatch(withChangeType(b.Schema()), cols, int64(idx.Len())), nil
}

func withChangeType(s *arrow.Schema) *arrow.Schema {
	fields := append(append([]arrow.Field{}, s.Fields()...), arrow.Field{Name: changeTypeColumn, Type: arrow.BinaryTypes.String})
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// concat joins record batches of one schema into one.
func concat(schema *arrow.Schema, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, p := range parts {
		n += p.NumRows()
	}
	for c := range cols {
		arrs := make([]arrow.Array, len(parts))
		for i, p := range parts {
			arrs[i] = p.Column(c)
		}
		joined, err := array.Concatenate(arrs, memory.DefaultAllocator)
		if err != nil {
			for _, j := range cols[:c] {
				j.Release()
			}
			return nil, err
		}
		cols[c] = joined
	}
	rec := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// writeParquet writes rec to path (through a temporary name) and returns
// its size. Field ids in the schema's metadata are kept, so id-mode column
// mapping readers find the columns.
func writeParquet(path string, rec arrow.RecordBatch) (int64, error) {
	tmp := path + ".tmp-" + randomSuffix()
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	werr := pqarrow.WriteTable(tbl, f, 64*1024, parquet.NewWriterProperties(),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	// WriteTable closes the file on success; on failure it may not have.
	if cerr := f.Close(); werr == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return 0, werr
	}
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

func writeAtomically(path string, data []byte) error {
	tmp := path + ".tmp-" + randomSuffix()
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
