package actions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/translate/schema"
)

// Delta table properties for id-mode column mapping.
const (
	propColumnMappingMode  = "delta.columnMapping.mode"
	propColumnMappingMaxID = "delta.columnMapping.maxColumnId"
	columnMappingPrefix    = "delta.columnMapping."
)

// Delta table feature names (Delta protocol appendix).
const (
	featureColumnMapping = "columnMapping"
	featureTimestampNtz  = "timestampNtz"
	// featureChangeDataFeed is writer-only.
	featureChangeDataFeed = "changeDataFeed"
	propChangeDataFeed    = "delta.enableChangeDataFeed"
)

// Protocol builds the protocol line. It validates the schema exactly as
// Metadata does, so a table the format cannot carry fails before the first
// line is written rather than halfway through a 200 response.
func Protocol(f Format, t Table) ([]byte, error) {
	if _, err := schemaString(f, t); err != nil {
		return nil, err
	}
	if f == Parquet {
		return line("protocol", struct {
			MinReaderVersion int `json:"minReaderVersion"`
		}{1})
	}
	var features []string
	if t.ColumnMapping {
		features = append(features, featureColumnMapping)
	}
	if _, ok := timestampNtzColumn(t.Schema); ok {
		features = append(features, featureTimestampNtz)
	}
	if len(features) == 0 {
		// Nothing a version-1 reader cannot read; writer 4 has the change
		// data feed.
		writer := 2
		if t.ChangeDataFeed {
			writer = 4
		}
		return line("protocol", map[string]any{"deltaProtocol": map[string]int{"minReaderVersion": 1, "minWriterVersion": writer}})
	}
	readerFeatures := slices.Clone(features)
	if t.ChangeDataFeed {
		features = append(features, featureChangeDataFeed) // a writer-only feature
	}
	// Reader version 3 / writer version 7 is the only pair that lists
	// features; every reader feature must also be a writer feature.
	type deltaProtocol struct {
		MinReaderVersion int      `json:"minReaderVersion"`
		MinWriterVersion int      `json:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures"`
		WriterFeatures   []string `json:"writerFeatures"`
	}
	return line("protocol", map[string]any{
		"deltaProtocol": deltaProtocol{3, 7, readerFeatures, features},
	})
}

// Metadata builds the metaData line. version is always set: it is the
// table version the metadata belongs to, which the protocol allows on every
// metaData line and requires on historical ones. partitionColumns come from
// t.Spec (identity transforms only); configuration is the table properties
// minus secret-looking ones, plus the column mapping keys in delta format.
func Metadata(f Format, t Table) ([]byte, error) {
	schemaJSON, err := schemaString(f, t)
	if err != nil {
		return nil, err
	}
	partCols := schema.PartitionColumns(t.Spec, t.Schema)
	if f == Parquet {
		return line("metaData", parquetMetadata{
			ID:               t.ID,
			Name:             t.Name,
			Description:      t.Description,
			Format:           parquetFormat{Provider: "parquet"},
			SchemaString:     schemaJSON,
			PartitionColumns: partCols,
			Configuration:    configuration(t),
			Version:          t.Version,
			Size:             t.Size,
			NumFiles:         t.NumFiles,
		})
	}
	conf := configuration(t)
	if t.ColumnMapping {
		conf[propColumnMappingMode] = "id"
		conf[propColumnMappingMaxID] = strconv.Itoa(schema.MaxColumnID(t.Schema))
	}
	return line("metaData", deltaMetadataWrapper{
		DeltaMetadata: deltaMetadata{
			ID:               t.ID,
			Name:             t.Name,
			Description:      t.Description,
			Format:           deltaFormat{Provider: "parquet", Options: map[string]string{}},
			SchemaString:     schemaJSON,
			PartitionColumns: partCols,
			Configuration:    conf,
			CreatedTime:      optionalMillis(t.CreatedTime),
		},
		Version:  t.Version,
		Size:     t.Size,
		NumFiles: t.NumFiles,
	})
}

type parquetFormat struct {
	Provider string `json:"provider"`
}

type parquetMetadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           parquetFormat     `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	Version          int64             `json:"version"`
	Size             *int64            `json:"size,omitempty"`
	NumFiles         *int64            `json:"numFiles,omitempty"`
}

// deltaFormat always carries options: Delta's Format struct has it and
// Delta's own writers emit {} for parquet.
type deltaFormat struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

type deltaMetadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           deltaFormat       `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

type deltaMetadataWrapper struct {
	DeltaMetadata deltaMetadata `json:"deltaMetadata"`
	Version       int64         `json:"version"`
	Size          *int64        `json:"size,omitempty"`
	NumFiles      *int64        `json:"numFiles,omitempty"`
}

func optionalMillis(ms int64) *int64 {
	if ms <= 0 {
		return nil
	}
	return &ms
}

// schemaString returns metaData.schemaString for the format, rejecting what
// the format cannot express. Parquet format gets the plain logical schema;
// delta format gets id-mode column mapping metadata when the table maps
// columns. Other unsupported types (time, nanosecond timestamps, ...) are
// reported by the schema package with the column named.
func schemaString(f Format, t Table) (string, error) {
	s := t.Schema
	if err := checkFormat(f); err != nil {
		return "", err
	}
	if s == nil {
		return "", fmt.Errorf("actions: table has no schema")
	}
	if col, ok := timestampNtzColumn(s); ok && f == Parquet {
		return "", fmt.Errorf("%w (column %q)", ErrTimestampNtzNeedsDelta, col)
	}
	// The narrow types the UC Delta API recorded keep both Delta views of
	// the table alike (a short column is short here too).
	return schema.ToDeltaJSON(s, schema.ToDeltaOptions{AllowTimestampNtz: f == Delta, ColumnMappingID: f == Delta && t.ColumnMapping,
		Hints: schema.ParseHints(t.Properties[schema.HintsProperty])})
}

// timestampNtzColumn returns the dotted path of the first Iceberg timestamp
// (without zone) column, nested ones included: any of them, however deep,
// makes the table need the timestampNtz feature.
func timestampNtzColumn(s *iceberg.Schema) (string, bool) {
	if s == nil {
		return "", false
	}
	return ntzInFields(s.Fields(), "")
}

func ntzInFields(fields []iceberg.NestedField, prefix string) (string, bool) {
	for _, f := range fields {
		if p, ok := ntzInType(f.Type, joinPath(prefix, f.Name)); ok {
			return p, true
		}
	}
	return "", false
}

func ntzInType(t iceberg.Type, path string) (string, bool) {
	switch t := t.(type) {
	case iceberg.TimestampType:
		return path, true
	case *iceberg.StructType:
		return ntzInFields(t.FieldList, path)
	case *iceberg.ListType:
		return ntzInType(t.Element, path+".element")
	case *iceberg.MapType:
		if p, ok := ntzInType(t.KeyType, path+".key"); ok {
			return p, true
		}
		return ntzInType(t.ValueType, path+".value")
	}
	return "", false
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// secretMarkers are substrings that make a property name look like it holds
// a credential. Iceberg catalogs sometimes keep storage keys or tokens in
// table properties; a share recipient must never see them, and losing a
// harmless property to a false positive costs nothing.
var secretMarkers = []string{"secret", "token", "password", "passwd", "credential", "key", "auth", "signature", "private"}

// configuration copies the table properties a Delta reader may see: not
// secret-looking ones, not lakegate's own (lakegate.*, where the Delta API
// keeps protocol and domain metadata), and not Iceberg's (write.*, read.*,
// commit.*, schema.name-mapping.default, ...), which mean nothing to a
// Delta reader. The column-mapping keys are always dropped: in parquet
// format the response has no column mapping, and in delta format Metadata
// sets them itself, so a stale value from a table converted from Delta
// (e.g. mode=name) must not leak through.
func configuration(t Table) map[string]string {
	out := safeProperties(t.Properties)
	if t.ChangeDataFeed {
		out[propChangeDataFeed] = "true"
	} else {
		delete(out, propChangeDataFeed) // a stale copy must not promise a feed
	}
	return out
}

func safeProperties(props iceberg.Properties) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if looksSecret(k) || strings.HasPrefix(k, columnMappingPrefix) || internalProperty(k) {
			continue
		}
		out[k] = v
	}
	return out
}

// icebergPrefixes are Iceberg's table-property namespaces (Iceberg's
// TableProperties), plus lakegate's.
var icebergPrefixes = []string{"lakegate.", "write.", "read.", "commit.", "history.", "schema.", "gc.",
	"format-version", "compatibility.", "engine.", "snapshot.", "current-snapshot-", "metadata."}

func internalProperty(k string) bool {
	for _, p := range icebergPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func looksSecret(name string) bool {
	lower := strings.ToLower(name)
	for _, m := range secretMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}
