package embedded

// Scan planning: encoding file scan tasks as the spec's wire types.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Wire types (spec ScanTasks, FileScanTask, DataFile, DeleteFile)

type countMap struct {
	Keys   []int   `json:"keys"`
	Values []int64 `json:"values"`
}

// valueMap carries bounds as binary PrimitiveTypeValues (uppercase hex of
// Iceberg's single-value serialisation), as Java's ContentFileParser and
// iceberg-go's decoder do: bounds are map<int, binary> in the DataFile
// schema.
type valueMap struct {
	Keys   []int    `json:"keys"`
	Values []string `json:"values"`
}

type contentFileWire struct {
	Content         string            `json:"content"`
	FilePath        string            `json:"file-path"`
	FileFormat      string            `json:"file-format"`
	SpecID          int               `json:"spec-id"`
	Partition       []json.RawMessage `json:"partition"`
	FileSizeInBytes int64             `json:"file-size-in-bytes"`
	RecordCount     int64             `json:"record-count"`
	KeyMetadata     string            `json:"key-metadata,omitempty"`
	SplitOffsets    []int64           `json:"split-offsets,omitempty"`
	SortOrderID     *int              `json:"sort-order-id,omitempty"`
}

type dataFileWire struct {
	contentFileWire
	FirstRowID      *int64    `json:"first-row-id,omitempty"`
	ColumnSizes     *countMap `json:"column-sizes,omitempty"`
	ValueCounts     *countMap `json:"value-counts,omitempty"`
	NullValueCounts *countMap `json:"null-value-counts,omitempty"`
	NaNValueCounts  *countMap `json:"nan-value-counts,omitempty"`
	LowerBounds     *valueMap `json:"lower-bounds,omitempty"`
	UpperBounds     *valueMap `json:"upper-bounds,omitempty"`
}

type deleteFileWire struct {
	contentFileWire
	EqualityIDs        []int   `json:"equality-ids,omitempty"`
	ReferencedDataFile *string `json:"referenced-data-file,omitempty"`
	ContentOffset      *int64  `json:"content-offset,omitempty"`
	ContentSizeInBytes *int64  `json:"content-size-in-bytes,omitempty"`
}

type fileScanTaskWire struct {
	DataFile             dataFileWire    `json:"data-file"`
	DeleteFileReferences []int           `json:"delete-file-references,omitempty"`
	ResidualFilter       json.RawMessage `json:"residual-filter,omitempty"`
}

// encodedTasks is one ScanTasks envelope, encoded once: stored plans are
// kept as bytes so the store's memory bound is exact.
type encodedTasks struct {
	PlanTasks     []string        `json:"plan-tasks,omitempty"`
	FileScanTasks json.RawMessage `json:"file-scan-tasks"`
	DeleteFiles   json.RawMessage `json:"delete-files"`
}

func (e encodedTasks) size() int {
	n := len(e.FileScanTasks) + len(e.DeleteFiles)
	for _, t := range e.PlanTasks {
		n += len(t)
	}
	return n
}

var emptyTasks = encodedTasks{FileScanTasks: json.RawMessage("[]"), DeleteFiles: json.RawMessage("[]")}

// completedResult is CompletedPlanningResult (plan-id only on planTableScan).
type completedResult struct {
	Status string `json:"status"`
	PlanID string `json:"plan-id,omitempty"`
	encodedTasks
	StorageCredentials []storageCredential `json:"storage-credentials,omitempty"`
}

// ---------------------------------------------------------------------------
// Encoding

// encodeEnvelopes cuts tasks into envelopes of at most perEnvelope file
// scan tasks each.
func encodeEnvelopes(tasks []table.FileScanTask, enc *fileEncoder, perEnvelope int) ([]encodedTasks, error) {
	if len(tasks) == 0 {
		return []encodedTasks{emptyTasks}, nil
	}
	var out []encodedTasks
	for chunk := range slices.Chunk(tasks, perEnvelope) {
		e, err := enc.envelope(chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// fileEncoder serialises iceberg-go DataFiles as the spec's ContentFile
// JSON for one table's metadata.
type fileEncoder struct {
	meta      table.Metadata
	statsIDs  map[int]bool // nil: send no column stats
	specTypes map[int][]partitionSlot
}

// partitionSlot is one partition field: its id and the type of its values
// (the transform's result type), which decides the JSON spelling.
type partitionSlot struct {
	fieldID int
	typ     iceberg.Type // nil when the source column is unknown
}

func newFileEncoder(meta table.Metadata, statsIDs map[int]bool) *fileEncoder {
	return &fileEncoder{meta: meta, statsIDs: statsIDs, specTypes: map[int][]partitionSlot{}}
}

// envelope encodes tasks as one ScanTasks envelope. Delete files appear
// once per envelope and are referenced by index, because the spec scopes
// delete-file-references to the envelope they arrive in.
func (e *fileEncoder) envelope(tasks []table.FileScanTask) (encodedTasks, error) {
	fileTasks := make([]fileScanTaskWire, 0, len(tasks))
	deletes := []deleteFileWire{}
	index := map[string]int{}
	for _, t := range tasks {
		df, err := e.dataFile(t.File)
		if err != nil {
			return encodedTasks{}, err
		}
		wt := fileScanTaskWire{DataFile: df, ResidualFilter: residualJSON(t.Residual)}
		for _, d := range taskDeletes(t) {
			key := deleteKey(d)
			i, ok := index[key]
			if !ok {
				w, err := e.deleteFile(d)
				if err != nil {
					return encodedTasks{}, err
				}
				i = len(deletes)
				index[key] = i
				deletes = append(deletes, w)
			}
			if !slices.Contains(wt.DeleteFileReferences, i) {
				wt.DeleteFileReferences = append(wt.DeleteFileReferences, i)
			}
		}
		fileTasks = append(fileTasks, wt)
	}
	ft, err := json.Marshal(fileTasks)
	if err != nil {
		return encodedTasks{}, err
	}
	dl, err := json.Marshal(deletes)
	if err != nil {
		return encodedTasks{}, err
	}
	return encodedTasks{FileScanTasks: ft, DeleteFiles: dl}, nil
}

func taskDeletes(t table.FileScanTask) []iceberg.DataFile {
	out := make([]iceberg.DataFile, 0, len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles))
	out = append(out, t.DeleteFiles...)
	out = append(out, t.EqualityDeleteFiles...)
	return append(out, t.DeletionVectorFiles...)
}

// deleteKey identifies a delete file; one Puffin file holds many deletion
// vectors, told apart by their offset.
func deleteKey(d iceberg.DataFile) string {
	if off := d.ContentOffset(); off != nil {
		return fmt.Sprintf("%s#%d", d.FilePath(), *off)
	}
	return d.FilePath()
}

// residualJSON encodes a task's residual. A residual that cannot be
// encoded is left out: clients then apply the scan's own filter, which is
// always correct.
func residualJSON(expr iceberg.BooleanExpression) json.RawMessage {
	if expr == nil {
		return nil
	}
	b, err := json.Marshal(expr)
	if err != nil {
		return nil
	}
	return b
}

func (e *fileEncoder) contentFile(f iceberg.DataFile, content string) (contentFileWire, error) {
	part, err := e.partition(f)
	if err != nil {
		return contentFileWire{}, fmt.Errorf("encoding partition of %s: %w", f.FilePath(), err)
	}
	w := contentFileWire{
		Content:         content,
		FilePath:        f.FilePath(),
		FileFormat:      strings.ToLower(string(f.FileFormat())),
		SpecID:          int(f.SpecID()),
		Partition:       part,
		FileSizeInBytes: f.FileSizeBytes(),
		RecordCount:     f.Count(),
		SplitOffsets:    validSplitOffsets(f.SplitOffsets()),
	}
	if km := f.KeyMetadata(); len(km) > 0 {
		w.KeyMetadata = strings.ToUpper(hex.EncodeToString(km))
	}
	if id := f.SortOrderID(); id != nil && *id >= 0 {
		w.SortOrderID = id
	}
	return w, nil
}

// validSplitOffsets drops offsets that are not strictly increasing and
// non-negative: they are only a hint, and clients reject the whole plan
// over a bad list.
func validSplitOffsets(offs []int64) []int64 {
	for i, o := range offs {
		if o < 0 || (i > 0 && o <= offs[i-1]) {
			return nil
		}
	}
	return offs
}

func (e *fileEncoder) dataFile(f iceberg.DataFile) (dataFileWire, error) {
	cf, err := e.contentFile(f, "data")
	if err != nil {
		return dataFileWire{}, err
	}
	w := dataFileWire{contentFileWire: cf, FirstRowID: f.FirstRowID()}
	if e.statsIDs != nil {
		w.ColumnSizes = e.counts(f.ColumnSizes())
		w.ValueCounts = e.counts(f.ValueCounts())
		w.NullValueCounts = e.counts(f.NullValueCounts())
		w.NaNValueCounts = e.counts(f.NaNValueCounts())
		w.LowerBounds = e.bounds(f.LowerBoundValues())
		w.UpperBounds = e.bounds(f.UpperBoundValues())
	}
	return w, nil
}

func (e *fileEncoder) deleteFile(f iceberg.DataFile) (deleteFileWire, error) {
	var content string
	switch f.ContentType() {
	case iceberg.EntryContentPosDeletes:
		content = "position-deletes"
	case iceberg.EntryContentEqDeletes:
		content = "equality-deletes"
	default:
		return deleteFileWire{}, fmt.Errorf("delete file %s has content %v", f.FilePath(), f.ContentType())
	}
	cf, err := e.contentFile(f, content)
	if err != nil {
		return deleteFileWire{}, err
	}
	w := deleteFileWire{contentFileWire: cf, ReferencedDataFile: f.ReferencedDataFile()}
	if f.ContentType() == iceberg.EntryContentEqDeletes {
		w.EqualityIDs = f.EqualityFieldIDs()
		w.ReferencedDataFile = nil // equality deletes never target one file
	} else {
		w.ContentOffset, w.ContentSizeInBytes = f.ContentOffset(), f.ContentSizeInBytes()
	}
	return w, nil
}

// counts keeps the requested columns' counts, in column id order.
func (e *fileEncoder) counts(m map[int]int64) *countMap {
	if m == nil {
		return nil
	}
	out := &countMap{Keys: []int{}, Values: []int64{}}
	for _, k := range sortedKeys(m) {
		if e.statsIDs[k] && m[k] >= 0 {
			out.Keys, out.Values = append(out.Keys, k), append(out.Values, m[k])
		}
	}
	return out
}

// bounds keeps the requested columns' bounds, in column id order.
func (e *fileEncoder) bounds(m map[int][]byte) *valueMap {
	if m == nil {
		return nil
	}
	out := &valueMap{Keys: []int{}, Values: []string{}}
	for _, k := range sortedKeys(m) {
		if e.statsIDs[k] {
			out.Keys = append(out.Keys, k)
			out.Values = append(out.Values, strings.ToUpper(hex.EncodeToString(m[k])))
		}
	}
	return out
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		if k > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// partition lists a file's partition values in the order of its spec's
// fields, as the spec's `partition` array requires.
func (e *fileEncoder) partition(f iceberg.DataFile) ([]json.RawMessage, error) {
	slots, err := e.slots(int(f.SpecID()))
	if err != nil {
		return nil, err
	}
	values := f.Partition()
	out := make([]json.RawMessage, len(slots))
	for i, s := range slots {
		if out[i], err = partitionValueJSON(values[s.fieldID], s.typ); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// slots resolves (and caches) a spec's field ids and value types. A source
// column may have been dropped since, so every schema is searched.
func (e *fileEncoder) slots(specID int) ([]partitionSlot, error) {
	if s, ok := e.specTypes[specID]; ok {
		return s, nil
	}
	spec := e.meta.PartitionSpecByID(specID)
	if spec == nil {
		return nil, fmt.Errorf("unknown partition spec %d", specID)
	}
	slots := make([]partitionSlot, 0, spec.NumFields())
	for _, field := range spec.Fields() {
		slot := partitionSlot{fieldID: field.FieldID}
		if src, ok := e.sourceType(field.SourceID()); ok {
			slot.typ = field.Transform.ResultType(src)
		}
		slots = append(slots, slot)
	}
	e.specTypes[specID] = slots
	return slots, nil
}

func (e *fileEncoder) sourceType(id int) (iceberg.Type, bool) {
	if t, ok := e.meta.CurrentSchema().FindTypeByID(id); ok {
		return t, true
	}
	for _, s := range e.meta.Schemas() {
		if t, ok := s.FindTypeByID(id); ok {
			return t, true
		}
	}
	return nil, false
}

// partitionValueJSON spells a partition value as a PrimitiveTypeValue of
// the partition field's type (dates, times, timestamps, decimals and UUIDs
// as strings; binary and fixed as uppercase hex).
func partitionValueJSON(v any, typ iceberg.Type) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	lit, err := literalOf(v)
	if err != nil {
		return nil, err
	}
	if typ != nil && !lit.Type().Equals(typ) {
		if lit, err = lit.To(typ); err != nil {
			return nil, err
		}
	}
	switch l := lit.(type) {
	case iceberg.TimestampLiteral:
		return timestampJSON(time.UnixMicro(int64(l)).UTC(), typ, ".999999")
	case iceberg.TimestampNsLiteral:
		return timestampJSON(time.Unix(0, int64(l)).UTC(), typ, ".999999999")
	case iceberg.Float32Literal:
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return nil, fmt.Errorf("non-finite partition value %v", l)
		}
	case iceberg.Float64Literal:
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return nil, fmt.Errorf("non-finite partition value %v", l)
		}
	}
	return json.Marshal(lit)
}

// timestampJSON writes the spec's timestamp spellings: with a +00:00
// offset for the tz types, without one otherwise.
func timestampJSON(tm time.Time, typ iceberg.Type, frac string) (json.RawMessage, error) {
	layout := "2006-01-02T15:04:05" + frac
	switch typ.(type) {
	case iceberg.TimestampTzType, iceberg.TimestampTzNsType:
		layout += "-07:00"
	}
	return json.Marshal(tm.Format(layout))
}

// literalOf wraps the Go values iceberg-go uses for partition data.
func literalOf(v any) (iceberg.Literal, error) {
	switch x := v.(type) {
	case bool:
		return iceberg.BoolLiteral(x), nil
	case int32:
		return iceberg.Int32Literal(x), nil
	case int:
		return iceberg.Int64Literal(int64(x)), nil
	case int64:
		return iceberg.Int64Literal(x), nil
	case float32:
		return iceberg.Float32Literal(x), nil
	case float64:
		return iceberg.Float64Literal(x), nil
	case string:
		return iceberg.StringLiteral(x), nil
	case []byte:
		return iceberg.BinaryLiteral(x), nil
	case [16]byte:
		return iceberg.UUIDLiteral(x), nil
	case uuid.UUID:
		return iceberg.UUIDLiteral(x), nil
	case iceberg.Date:
		return iceberg.DateLiteral(x), nil
	case iceberg.Time:
		return iceberg.TimeLiteral(x), nil
	case iceberg.Timestamp:
		return iceberg.TimestampLiteral(x), nil
	case iceberg.TimestampNano:
		return iceberg.TimestampNsLiteral(x), nil
	case time.Time:
		return iceberg.TimestampLiteral(x.UnixMicro()), nil
	case iceberg.Decimal:
		return iceberg.DecimalLiteral(x), nil
	case iceberg.DecimalLiteral:
		return x, nil
	case iceberg.Literal:
		return x, nil
	}
	return nil, fmt.Errorf("unsupported partition value %T", v)
}
