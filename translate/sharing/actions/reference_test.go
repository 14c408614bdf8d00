package actions

// The reflection-based builders the Encoder replaced, kept verbatim as the
// reference it must match byte for byte (see encode_test.go): protocol
// structs and maps handed to encoding/json.

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
)

type refParquetFile struct {
	URL                 string             `json:"url"`
	ID                  string             `json:"id"`
	PartitionValues     map[string]*string `json:"partitionValues"`
	Size                int64              `json:"size"`
	Stats               string             `json:"stats,omitempty"`
	Version             *int64             `json:"version,omitempty"`
	Timestamp           *int64             `json:"timestamp,omitempty"`
	ExpirationTimestamp *int64             `json:"expirationTimestamp,omitempty"`
}

type refDeltaFile struct {
	ID                  string          `json:"id"`
	Version             *int64          `json:"version,omitempty"`
	Timestamp           *int64          `json:"timestamp,omitempty"`
	ExpirationTimestamp *int64          `json:"expirationTimestamp,omitempty"`
	DeltaSingleAction   refSingleAction `json:"deltaSingleAction"`
}

type refSingleAction struct {
	Add    *refDeltaAdd    `json:"add,omitempty"`
	Remove *refDeltaRemove `json:"remove,omitempty"`
	Cdc    *deltaCdc       `json:"cdc,omitempty"`
}

type refDeltaAdd struct {
	Path             string             `json:"path"`
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`
	ModificationTime int64              `json:"modificationTime"`
	DataChange       bool               `json:"dataChange"`
	Stats            string             `json:"stats,omitempty"`
}

type refDeltaRemove struct {
	Path                 string             `json:"path"`
	DeletionTimestamp    int64              `json:"deletionTimestamp"`
	DataChange           bool               `json:"dataChange"`
	ExtendedFileMetadata bool               `json:"extendedFileMetadata"`
	PartitionValues      map[string]*string `json:"partitionValues"`
	Size                 int64              `json:"size"`
}

type refFileParts struct {
	id        string
	partition map[string]*string
	size      int64
	stats     string
}

func refFileAction(f Format, file File, kind fileKind, withVersion bool) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return nil, err
	}
	p, err := refPartsOf(file, kind != kindRemove)
	if err != nil {
		return nil, err
	}
	var version, timestamp *int64
	if withVersion {
		version, timestamp = &file.Version, &file.Timestamp
	}
	expiration := optionalMillis(file.Expiration)
	if f == Parquet {
		return line(parquetKey(kind), refParquetFile{
			URL: file.URL, ID: p.id, PartitionValues: p.partition, Size: p.size, Stats: p.stats,
			Version: version, Timestamp: timestamp, ExpirationTimestamp: expiration,
		})
	}
	return line("file", refDeltaFile{
		ID: p.id, Version: version, Timestamp: timestamp, ExpirationTimestamp: expiration,
		DeltaSingleAction: refDeltaAction(file, p, kind),
	})
}

func refDeltaAction(file File, p refFileParts, kind fileKind) refSingleAction {
	if kind == kindRemove {
		return refSingleAction{Remove: &refDeltaRemove{
			Path: file.URL, DeletionTimestamp: file.Timestamp, DataChange: true,
			ExtendedFileMetadata: true, PartitionValues: p.partition, Size: p.size,
		}}
	}
	return refSingleAction{Add: &refDeltaAdd{
		Path: file.URL, PartitionValues: p.partition, Size: p.size,
		ModificationTime: file.Timestamp, DataChange: true, Stats: p.stats,
	}}
}

func refPartsOf(file File, withStats bool) (refFileParts, error) {
	df := file.Data
	if df == nil {
		return refFileParts{}, fmt.Errorf("actions: file %q has no data file", file.URL)
	}
	pv, err := refPartitionValues(df, file.Spec, file.Schema)
	if err != nil {
		return refFileParts{}, err
	}
	p := refFileParts{id: FileID(df.FilePath()), partition: pv, size: df.FileSizeBytes()}
	if withStats {
		if p.stats, err = refStats(df, file.Schema); err != nil {
			return refFileParts{}, err
		}
	}
	return p, nil
}

func refPartitionValues(df iceberg.DataFile, spec iceberg.PartitionSpec, s *iceberg.Schema) (map[string]*string, error) {
	out := map[string]*string{}
	if df == nil || s == nil {
		return out, nil
	}
	top := make(map[int]iceberg.NestedField, s.NumFields())
	for _, f := range s.Fields() {
		top[f.ID] = f
	}
	data := df.Partition()
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok || len(pf.SourceIDs) != 1 {
			continue
		}
		col, ok := top[pf.SourceIDs[0]]
		if !ok {
			continue
		}
		v, err := refPartitionString(data[pf.FieldID], col.Type)
		if err != nil {
			return nil, fmt.Errorf("actions: partition column %q of %s: %w", col.Name, df.FilePath(), err)
		}
		out[col.Name] = v
	}
	return out, nil
}

func refPartitionString(v any, t iceberg.Type) (*string, error) {
	if lit, ok := v.(iceberg.Literal); ok {
		v = lit.Any()
	}
	if v == nil {
		return nil, nil
	}
	s, err := formatPartition(v, t)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

type refFileStats struct {
	NumRecords int64          `json:"numRecords"`
	MinValues  map[string]any `json:"minValues,omitempty"`
	MaxValues  map[string]any `json:"maxValues,omitempty"`
	NullCount  map[string]any `json:"nullCount,omitempty"`
}

func refStats(df iceberg.DataFile, s *iceberg.Schema) (string, error) {
	if df == nil {
		return "", fmt.Errorf("actions: stats of a nil data file")
	}
	st := refFileStats{NumRecords: df.Count()}
	if s != nil {
		src := refMetrics{
			lower: df.LowerBoundValues(),
			upper: df.UpperBoundValues(),
			nulls: df.NullValueCounts(),
			nans:  df.NaNValueCounts(),
		}
		st.MinValues, st.MaxValues, st.NullCount = src.collect(s.Fields())
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("actions: encoding stats of %s: %w", df.FilePath(), err)
	}
	return string(b), nil
}

type refMetrics struct {
	lower, upper map[int][]byte
	nulls, nans  map[int]int64
}

func (m refMetrics) collect(fields []iceberg.NestedField) (mins, maxs, nulls map[string]any) {
	mins, maxs, nulls = map[string]any{}, map[string]any{}, map[string]any{}
	for _, f := range fields {
		switch t := f.Type.(type) {
		case *iceberg.StructType:
			mn, mx, nc := m.collect(t.FieldList)
			refPutNonEmpty(mins, f.Name, mn)
			refPutNonEmpty(maxs, f.Name, mx)
			refPutNonEmpty(nulls, f.Name, nc)
		case *iceberg.ListType, *iceberg.MapType:
			continue
		default:
			m.leaf(f, mins, maxs, nulls)
		}
	}
	return refNilIfEmpty(mins), refNilIfEmpty(maxs), refNilIfEmpty(nulls)
}

func (m refMetrics) leaf(f iceberg.NestedField, mins, maxs, nulls map[string]any) {
	if n, ok := m.nulls[f.ID]; ok {
		nulls[f.Name] = n
	}
	if v, ok := refBoundValue(f.Type, m.lower[f.ID], false); ok {
		mins[f.Name] = v
	}
	if !m.maxIsSafe(f) {
		return
	}
	if v, ok := refBoundValue(f.Type, m.upper[f.ID], true); ok {
		maxs[f.Name] = v
	}
}

func (m refMetrics) maxIsSafe(f iceberg.NestedField) bool {
	switch f.Type.(type) {
	case iceberg.Float32Type, iceberg.Float64Type:
		n, ok := m.nans[f.ID]
		return ok && n == 0
	}
	return true
}

func refPutNonEmpty(dst map[string]any, key string, v map[string]any) {
	if len(v) > 0 {
		dst[key] = v
	}
}

func refNilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func refBoundValue(t iceberg.Type, raw []byte, upper bool) (any, bool) {
	if raw == nil {
		return nil, false
	}
	lit, err := decodeBound(t, slices.Clone(raw))
	if err != nil {
		return nil, false
	}
	switch v := lit.(type) {
	case iceberg.BoolLiteral:
		return bool(v), true
	case iceberg.Int32Literal:
		return int32(v), true
	case iceberg.Int64Literal:
		return int64(v), true
	case iceberg.Float32Literal:
		return float32(v), refIsFinite(float64(v))
	case iceberg.Float64Literal:
		return float64(v), refIsFinite(float64(v))
	case iceberg.StringLiteral:
		return string(v), utf8.ValidString(string(v))
	case iceberg.DateLiteral:
		return iceberg.Date(v).ToTime().Format(dateLayout), true
	case iceberg.TimestampLiteral:
		return refStatsTimestamp(int64(v), upper, isTimestampTz(t)), true
	case iceberg.DecimalLiteral:
		return json.Number(v.String()), true
	}
	return nil, false
}

func refIsFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func refStatsTimestamp(micros int64, upper, withZone bool) string {
	ms := micros / 1000
	if micros%1000 < 0 {
		ms--
	}
	if upper && ms*1000 != micros {
		ms++
	}
	t := time.UnixMilli(ms).UTC()
	if withZone {
		return t.Format(statsTimestampLayout)
	}
	return t.Format(statsTimestampNtzLayout)
}
