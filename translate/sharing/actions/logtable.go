package actions

import (
	"maps"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/internal/jsonenc"
	"github.com/lakegate/lakegate/translate/deltalog"
)

// A table whose truth is its Delta log (an EXTERNAL Delta table) is shared
// from the log itself, as the reference server shares Delta tables: its
// protocol, metaData and file actions are the log's, never their Iceberg
// approximation. Delta writers keep partition columns out of the data
// files, so partitionValues must be the log's or readers see NULLs.

// LogFile is a data file as the Delta log lists it (an add or remove).
type LogFile struct {
	Location         string             // resolved; its hash is the file id
	PartitionValues  map[string]*string // the action's, serialized as Delta serializes them
	Size             int64
	ModificationTime int64  // ms; 0 takes the version's timestamp
	Stats            string // the action's stats JSON, "" when it has none
}

// path, size, modificationTime: the file's facts, from the log when it
// comes from one, else from the Iceberg data file.
func (f File) path() string {
	if f.Log != nil {
		return f.Log.Location
	}
	return f.Data.FilePath()
}

func (f File) size() int64 {
	if f.Log != nil {
		return f.Log.Size
	}
	return f.Data.FileSizeBytes()
}

func (f File) modificationTime() int64 {
	if f.Log != nil && f.Log.ModificationTime > 0 {
		return f.Log.ModificationTime
	}
	return f.Timestamp
}

// appendFilePartitionValues writes the file's partitionValues object: the
// log's as written (keys sorted, as encoding/json sorts them), or the
// Iceberg partition data read with the file's spec.
func (e *Encoder) appendFilePartitionValues(dst []byte, f File) ([]byte, error) {
	if f.Log == nil {
		return e.appendPartitionValues(dst, f.Data, f.Spec, f.Schema)
	}
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(f.Log.PartitionValues)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(jsonenc.AppendString(dst, k), ':')
		if v := f.Log.PartitionValues[k]; v == nil {
			dst = append(dst, "null"...)
		} else {
			dst = jsonenc.AppendString(dst, *v)
		}
	}
	return append(dst, '}'), nil
}

// appendFileStats writes `,"stats":` and the stats JSON as a string: the
// log's own (none when the add has none), or built from Iceberg metrics.
func (e *Encoder) appendFileStats(dst []byte, f File) ([]byte, error) {
	if f.Log == nil {
		return e.appendQuotedStats(dst, `,"stats":`, f.Data, f.Schema)
	}
	if f.Log.Stats == "" {
		return dst, nil
	}
	return jsonenc.AppendString(append(dst, `,"stats":`...), []byte(f.Log.Stats)), nil
}

// LogTable is a Delta log's table as of one version, for the protocol and
// metaData lines.
type LogTable struct {
	Name     string
	Version  int64
	Protocol deltalog.Protocol
	Metadata deltalog.Metadata
	Size     *int64
	NumFiles *int64
}

// LogProtocol builds the protocol line of a log's table: in delta format
// the log's own protocol (versions and features as the log says); in
// parquet format reader version 1, which the caller grants only to tables
// a parquet reader can read (see LogNeedsDelta).
func LogProtocol(f Format, t LogTable) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return nil, err
	}
	if f == Parquet {
		return line("protocol", struct {
			MinReaderVersion int `json:"minReaderVersion"`
		}{1})
	}
	type deltaProtocol struct {
		MinReaderVersion int32    `json:"minReaderVersion"`
		MinWriterVersion int32    `json:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures,omitempty"`
		WriterFeatures   []string `json:"writerFeatures,omitempty"`
	}
	p := t.Protocol
	return line("protocol", map[string]any{"deltaProtocol": deltaProtocol{
		p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures}})
}

// LogNeedsDelta says why a log's table cannot be answered in parquet
// format, or "": column mapping (files carry physical names), or a type
// the parquet format's schema cannot carry (timestamp without zone,
// variant). Other reader features are the server's to honour while it
// reads the log (v2 checkpoints, vacuum protocol checks), or are refused
// where they matter (a version with deletion vectors).
func LogNeedsDelta(p deltalog.Protocol, m deltalog.Metadata) string {
	if mode := m.Configuration["delta.columnMapping.mode"]; mode == "name" || mode == "id" {
		return "its Delta log maps columns (delta.columnMapping.mode=" + mode + ")"
	}
	for _, f := range p.ReaderFeatures {
		switch strings.TrimSuffix(f, "-preview") {
		case "timestampNtz", "variantType", "variantShredding":
			return "its Delta log needs reader feature " + f
		}
	}
	return ""
}

// LogMetadata builds the metaData line of a log's table: the log's id,
// schemaString, partitionColumns and description, and its configuration
// minus secret-looking keys.
func LogMetadata(f Format, t LogTable) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return nil, err
	}
	m := t.Metadata
	part := m.PartitionColumns
	if part == nil {
		part = []string{}
	}
	conf := map[string]string{}
	for k, v := range m.Configuration {
		if !looksSecret(k) {
			conf[k] = v
		}
	}
	if f == Parquet {
		return line("metaData", parquetMetadata{ID: m.ID, Name: t.Name, Description: m.Description,
			Format: parquetFormat{Provider: "parquet"}, SchemaString: m.SchemaString, PartitionColumns: part,
			Configuration: conf, Version: t.Version, Size: t.Size, NumFiles: t.NumFiles})
	}
	opts := m.Format.Options
	if opts == nil {
		opts = map[string]string{}
	}
	var created int64
	if m.CreatedTime != nil {
		created = *m.CreatedTime
	}
	return line("metaData", deltaMetadataWrapper{
		DeltaMetadata: deltaMetadata{ID: m.ID, Name: t.Name, Description: m.Description,
			Format: deltaFormat{Provider: "parquet", Options: opts}, SchemaString: m.SchemaString,
			PartitionColumns: part, Configuration: conf, CreatedTime: optionalMillis(created)},
		Version: t.Version, Size: t.Size, NumFiles: t.NumFiles,
	})
}
