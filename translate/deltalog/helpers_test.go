package deltalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"
)

// modBase is the modification time given to commit 0 of a copied log;
// commit v is modBase + v seconds.
var modBase = time.UnixMilli(1_800_000_000_000)

func modTime(v int64) int64 { return modBase.Add(time.Duration(v) * time.Second).UnixMilli() }

// copyLog copies testdata/logs/<name> into a temporary table location and
// sets each commit's modification time to modTime(version), since git does
// not keep them.
func copyLog(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join("testdata", "logs", name, "_delta_log")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "_delta_log"), 0o755))
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		dst := filepath.Join(root, "_delta_log", e.Name())
		require.NoError(t, os.WriteFile(dst, raw, 0o644))
		if lf := classify(FileInfo{Name: e.Name()}); lf.kind == kindCommit {
			mt := time.UnixMilli(modTime(lf.version))
			require.NoError(t, os.Chtimes(dst, mt, mt))
		}
	}
	return root
}

func open(root string) *Log { return New(root, iceio.LocalFS{}) }

func latest(t *testing.T, root string) *Snapshot {
	t.Helper()
	s, err := open(root).Latest(context.Background())
	require.NoError(t, err)
	return s
}

func at(t *testing.T, root string, v int64) *Snapshot {
	t.Helper()
	s, err := open(root).At(context.Background(), v)
	require.NoError(t, err)
	return s
}

func rm(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		require.NoError(t, os.Remove(filepath.Join(root, "_delta_log", n)))
	}
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, "_delta_log", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// paths are the snapshot's active file paths, as the log wrote them.
func paths(s *Snapshot) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

// stateActions are a snapshot's reconciled actions: what a checkpoint of
// that version holds ("Checkpoints": protocol, metaData, adds, unexpired
// removes, txns, domains).
func stateActions(s *Snapshot) []Action {
	p, m := s.Protocol, s.Metadata
	out := []Action{{Protocol: &p}, {MetaData: &m}}
	for _, tx := range s.Txns {
		out = append(out, Action{Txn: &tx})
	}
	for _, d := range s.Domains {
		out = append(out, Action{DomainMetadata: &d})
	}
	for i := range s.Tombstones {
		out = append(out, Action{Remove: &s.Tombstones[i]})
	}
	for i := range s.Files {
		out = append(out, Action{Add: &s.Files[i]})
	}
	return out
}

// Checkpoint parquet schema, per "Checkpoint Schema" (with deletionVector
// on add and remove, and the V2 actions).
var (
	strMapT = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
	strList = arrow.ListOf(arrow.BinaryTypes.String)
	dvT     = arrow.StructOf(
		arrow.Field{Name: "storageType", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "pathOrInlineDv", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "offset", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "sizeInBytes", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "cardinality", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
)

func fld(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

func checkpointSchema(v2 bool) *arrow.Schema {
	s, l, b, i32 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32
	fields := []arrow.Field{
		fld("txn", arrow.StructOf(fld("appId", s), fld("version", l), fld("lastUpdated", l))),
		fld("add", arrow.StructOf(fld("path", s), fld("partitionValues", strMapT), fld("size", l),
			fld("modificationTime", l), fld("dataChange", b), fld("stats", s), fld("tags", strMapT),
			fld("deletionVector", dvT), fld("baseRowId", l), fld("defaultRowCommitVersion", l),
			fld("partitionValues_parsed", arrow.StructOf(fld("p", s))),
			fld("stats_parsed", arrow.StructOf(fld("numRecords", l))))),
		fld("remove", arrow.StructOf(fld("path", s), fld("deletionTimestamp", l), fld("dataChange", b),
			fld("extendedFileMetadata", b), fld("partitionValues", strMapT), fld("size", l), fld("deletionVector", dvT))),
		fld("metaData", arrow.StructOf(fld("id", s), fld("name", s), fld("description", s),
			fld("format", arrow.StructOf(fld("provider", s), fld("options", strMapT))),
			fld("schemaString", s), fld("partitionColumns", strList), fld("createdTime", l), fld("configuration", strMapT))),
		fld("protocol", arrow.StructOf(fld("minReaderVersion", i32), fld("minWriterVersion", i32),
			fld("readerFeatures", strList), fld("writerFeatures", strList))),
		fld("domainMetadata", arrow.StructOf(fld("domain", s), fld("configuration", s), fld("removed", b))),
	}
	if v2 {
		fields = append(fields,
			fld("checkpointMetadata", arrow.StructOf(fld("version", l), fld("tags", strMapT))),
			fld("sidecar", arrow.StructOf(fld("path", s), fld("sizeInBytes", l), fld("modificationTime", l), fld("tags", strMapT))))
	}
	return arrow.NewSchema(fields, nil)
}

// writeParquet writes actions as a checkpoint (or sidecar) parquet file
// under _delta_log, one action per row, the other columns null.
func writeParquet(t *testing.T, root, name string, sc *arrow.Schema, actions []Action) {
	t.Helper()
	var rows []any
	for _, a := range actions {
		raw, err := json.Marshal(a)
		require.NoError(t, err)
		var v any
		require.NoError(t, json.Unmarshal(raw, &v))
		rows = append(rows, arrowJSON(v, arrow.StructOf(sc.Fields()...)))
	}
	raw, err := json.Marshal(rows)
	require.NoError(t, err)
	writeRows(t, root, name, sc, raw)
}

// writeRows writes rows given as arrow JSON (maps as key/value lists).
func writeRows(t *testing.T, root, name string, sc *arrow.Schema, raw []byte) {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, bytes.NewReader(raw))
	require.NoError(t, err)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	write(t, root, name, buf.String())
}

// arrowJSON rewrites JSON maps as arrow's JSON reader wants map columns:
// [{"key": k, "value": v}, ...]. It follows the arrow type to know which
// objects are maps and which are structs.
func arrowJSON(v any, t arrow.DataType) any {
	switch t := t.(type) {
	case *arrow.MapType:
		obj, _ := v.(map[string]any)
		kvs := []any{}
		for k, x := range obj {
			kvs = append(kvs, map[string]any{"key": k, "value": x})
		}
		return kvs
	case *arrow.StructType:
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, x := range obj {
			if f, ok := t.FieldByName(k); ok {
				out[k] = arrowJSON(x, f.Type)
			}
		}
		return out
	}
	return v
}

// writeClassic writes the state at s as a classic checkpoint.
func writeClassic(t *testing.T, root string, s *Snapshot) {
	writeParquet(t, root, pad20(s.Version)+".checkpoint.parquet", checkpointSchema(false), stateActions(s))
}

// writeMultiPart writes the state at s in parts parts, split round robin
// (real writers hash by path; the reader must not care).
func writeMultiPart(t *testing.T, root string, s *Snapshot, parts int) {
	actions := stateActions(s)
	for p := 1; p <= parts; p++ {
		var part []Action
		for i := p - 1; i < len(actions); i += parts {
			part = append(part, actions[i])
		}
		name := fmt.Sprintf("%s.checkpoint.%010d.%010d.parquet", pad20(s.Version), p, parts)
		writeParquet(t, root, name, checkpointSchema(false), part)
	}
}

// jsonLines is actions as newline-delimited JSON.
func jsonLines(t *testing.T, actions []Action) string {
	var b strings.Builder
	for _, a := range actions {
		raw, err := json.Marshal(a)
		require.NoError(t, err)
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// wrongTypeCheckpoint is a checkpoint whose add.size is a string.
func wrongTypeCheckpoint(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755))
	s := arrow.BinaryTypes.String
	sc := arrow.NewSchema([]arrow.Field{fld("add", arrow.StructOf(fld("path", s), fld("size", s)))}, nil)
	writeRows(t, dir, "x.parquet", sc, []byte(`[{"add":{"path":"a.parquet","size":"12"}}]`))
	raw, err := os.ReadFile(filepath.Join(dir, "_delta_log", "x.parquet"))
	require.NoError(t, err)
	return string(raw)
}
