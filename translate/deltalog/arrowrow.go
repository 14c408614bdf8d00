package deltalog

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowAction converts checkpoint row i into its action: the one non-null
// action column. nil, nil is a row with none (a column this reader skips).
// The action is then held to the same rules as a JSON line (validate).
func rowAction(rec arrow.RecordBatch, i int) (*Action, error) {
	var a Action
	found := 0
	for c, f := range rec.Schema().Fields() {
		r, ok := structAt(rec.Column(c), i, f.Name)
		if !ok {
			continue
		}
		if found++; found > 1 {
			return nil, errors.New("more than one action in one row")
		}
		setAction(&a, f.Name, r)
		if r.err != nil {
			return nil, r.err
		}
	}
	if found == 0 {
		return nil, nil
	}
	return &a, validate(&a)
}

func setAction(a *Action, name string, r *row) {
	switch name {
	case "add":
		a.Add = r.add()
	case "remove":
		a.Remove = r.remove()
	case "metaData":
		a.MetaData = r.metadata()
	case "protocol":
		a.Protocol = r.protocol()
	case "txn":
		a.Txn = &Txn{AppID: r.str("appId"), Version: r.i64("version"), LastUpdated: r.i64p("lastUpdated")}
	case "domainMetadata":
		a.DomainMetadata = &DomainMetadata{Domain: r.str("domain"), Configuration: r.str("configuration"), Removed: r.boolean("removed")}
	case "checkpointMetadata":
		a.CheckpointMetadata = &CheckpointMetadata{Version: r.i64("version"), Tags: r.strMap("tags")}
	case "sidecar":
		a.Sidecar = &Sidecar{Path: r.str("path"), SizeInBytes: r.i64("sizeInBytes"),
			ModificationTime: r.i64("modificationTime"), Tags: r.strMap("tags")}
	}
}

func (r *row) add() *AddFile {
	f := &AddFile{Path: r.str("path"), Size: r.i64("size"), ModificationTime: r.i64("modificationTime"),
		DataChange: r.boolean("dataChange"), Stats: r.str("stats"), Tags: r.strMap("tags"),
		BaseRowID: r.i64p("baseRowId"), DefaultRowCommitVersion: r.i64p("defaultRowCommitVersion"),
		ClusteringProvider: r.str("clusteringProvider")}
	f.PartitionValues = r.strPtrMap("partitionValues")
	f.DeletionVector = r.dv()
	return f
}

func (r *row) remove() *RemoveFile {
	f := &RemoveFile{Path: r.str("path"), DeletionTimestamp: r.i64p("deletionTimestamp"),
		DataChange: r.boolean("dataChange"), ExtendedFileMetadata: r.boolean("extendedFileMetadata"),
		Size: r.i64p("size"), BaseRowID: r.i64p("baseRowId")}
	f.PartitionValues = r.strPtrMap("partitionValues")
	f.DeletionVector = r.dv()
	return f
}

func (r *row) dv() *DeletionVector {
	d, ok := r.child("deletionVector")
	if !ok {
		return nil
	}
	dv := &DeletionVector{StorageType: d.str("storageType"), PathOrInlineDV: d.str("pathOrInlineDv"),
		SizeInBytes: d.i32("sizeInBytes"), Cardinality: d.i64("cardinality")}
	if d.field("offset") != nil {
		o := d.i32("offset")
		dv.Offset = &o
	}
	r.keep(d.err)
	return dv
}

func (r *row) metadata() *Metadata {
	m := &Metadata{ID: r.str("id"), Name: r.str("name"), Description: r.str("description"),
		SchemaString: r.str("schemaString"), PartitionColumns: r.strList("partitionColumns"),
		CreatedTime: r.i64p("createdTime"), Configuration: r.strMap("configuration")}
	if f, ok := r.child("format"); ok {
		m.Format = Format{Provider: f.str("provider"), Options: f.strMap("options")}
		r.keep(f.err)
	}
	return m
}

func (r *row) protocol() *Protocol {
	return &Protocol{MinReaderVersion: r.i32("minReaderVersion"), MinWriterVersion: r.i32("minWriterVersion"),
		ReaderFeatures: r.strList("readerFeatures"), WriterFeatures: r.strList("writerFeatures")}
}

// row reads the fields of one struct value; the first type error sticks.
// A field the file lacks reads as null: "Any missing column should be
// treated as null" ("Checkpoints").
type row struct {
	s    *array.Struct
	i    int
	path string
	err  error
}

func structAt(col arrow.Array, i int, path string) (*row, bool) {
	s, ok := col.(*array.Struct)
	if !ok || s.IsNull(i) {
		return nil, false
	}
	return &row{s: s, i: i, path: path}, true
}

func (r *row) keep(err error) {
	if r.err == nil {
		r.err = err
	}
}

// field is the named child if present and non-null at this row.
func (r *row) field(name string) arrow.Array {
	st := r.s.DataType().(*arrow.StructType)
	idx, ok := st.FieldIdx(name)
	if !ok {
		return nil
	}
	f := r.s.Field(idx)
	if f.IsNull(r.i) {
		return nil
	}
	return f
}

func (r *row) child(name string) (*row, bool) {
	f := r.field(name)
	if f == nil {
		return nil, false
	}
	c, ok := structAt(f, r.i, r.path+"."+name)
	if !ok {
		r.keep(errType(r.path+"."+name, f.DataType()))
	}
	return c, ok
}

func (r *row) str(name string) string {
	f := r.field(name)
	if f == nil {
		return ""
	}
	s, err := strAt(f, r.i)
	if err != nil {
		r.keep(fmt.Errorf("%s.%s: %w", r.path, name, err))
	}
	return s
}

func (r *row) i64p(name string) *int64 {
	f := r.field(name)
	if f == nil {
		return nil
	}
	var v int64
	switch a := f.(type) {
	case *array.Int64:
		v = a.Value(r.i)
	case *array.Int32:
		v = int64(a.Value(r.i))
	default:
		r.keep(errType(r.path+"."+name, f.DataType()))
	}
	return &v
}

func (r *row) i64(name string) int64 {
	if p := r.i64p(name); p != nil {
		return *p
	}
	return 0
}

// i32 reads an Int field ("Checkpoint Schema"), refusing what would wrap.
func (r *row) i32(name string) int32 {
	v := r.i64(name)
	if v != int64(int32(v)) {
		r.keep(fmt.Errorf("%s.%s: %d is out of the int range", r.path, name, v))
	}
	return int32(v)
}

func (r *row) boolean(name string) bool {
	f := r.field(name)
	if f == nil {
		return false
	}
	b, ok := f.(*array.Boolean)
	if !ok {
		r.keep(errType(r.path+"."+name, f.DataType()))
		return false
	}
	return b.Value(r.i)
}

func strAt(a arrow.Array, i int) (string, error) {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return string(a.Value(i)), nil
	}
	return "", fmt.Errorf("type %v is not a string", a.DataType())
}
