package actions

import (
	"fmt"
)

// fileKind is which file action a line carries.
type fileKind int

const (
	kindFile   fileKind = iota // query endpoint: `file`
	kindAdd                    // changes endpoint: `add`
	kindRemove                 // changes endpoint: `remove`
)

// FileLine builds the query endpoint's `file` line. withVersion adds the
// file's table version and commit timestamp, which the protocol returns
// only for queries with a version, timestamp or startingVersion.
func FileLine(f Format, file File, withVersion bool) ([]byte, error) {
	return fileAction(f, file, kindFile, withVersion)
}

// Add builds a changes-endpoint line for a file the version added.
func Add(f Format, file File) ([]byte, error) {
	return fileAction(f, file, kindAdd, true)
}

// Remove builds a changes-endpoint line for a file the version removed.
func Remove(f Format, file File) ([]byte, error) {
	return fileAction(f, file, kindRemove, true)
}

// parquetFile is the parquet-format `file`, `add` and `remove` object; the
// three differ only in which optional fields are set.
type parquetFile struct {
	URL                 string             `json:"url"`
	ID                  string             `json:"id"`
	PartitionValues     map[string]*string `json:"partitionValues"`
	Size                int64              `json:"size"`
	Stats               string             `json:"stats,omitempty"`
	Version             *int64             `json:"version,omitempty"`
	Timestamp           *int64             `json:"timestamp,omitempty"`
	ExpirationTimestamp *int64             `json:"expirationTimestamp,omitempty"`
}

// deltaFile is the delta-format `file` wrapper around a Delta single action.
type deltaFile struct {
	ID                  string       `json:"id"`
	Version             *int64       `json:"version,omitempty"`
	Timestamp           *int64       `json:"timestamp,omitempty"`
	ExpirationTimestamp *int64       `json:"expirationTimestamp,omitempty"`
	DeltaSingleAction   singleAction `json:"deltaSingleAction"`
}

type singleAction struct {
	Add    *deltaAdd    `json:"add,omitempty"`
	Remove *deltaRemove `json:"remove,omitempty"`
	Cdc    *deltaCdc    `json:"cdc,omitempty"`
}

// deltaAdd is Delta's add action; path is the pre-signed URL, as the
// protocol replaces it.
type deltaAdd struct {
	Path             string             `json:"path"`
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`
	ModificationTime int64              `json:"modificationTime"`
	DataChange       bool               `json:"dataChange"`
	Stats            string             `json:"stats,omitempty"`
}

// deltaRemove is Delta's remove action. extendedFileMetadata says
// partitionValues and size are present, which readers of the removed
// file's rows (change data feed) rely on.
type deltaRemove struct {
	Path                 string             `json:"path"`
	DeletionTimestamp    int64              `json:"deletionTimestamp"`
	DataChange           bool               `json:"dataChange"`
	ExtendedFileMetadata bool               `json:"extendedFileMetadata"`
	PartitionValues      map[string]*string `json:"partitionValues"`
	Size                 int64              `json:"size"`
}

// fileParts are the values every file line is built from.
type fileParts struct {
	id        string
	partition map[string]*string
	size      int64
	stats     string // "" for remove lines
}

func fileAction(f Format, file File, kind fileKind, withVersion bool) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return nil, err
	}
	p, err := partsOf(file, kind != kindRemove)
	if err != nil {
		return nil, err
	}
	var version, timestamp *int64
	if withVersion {
		version, timestamp = &file.Version, &file.Timestamp
	}
	expiration := optionalMillis(file.Expiration)
	if f == Parquet {
		return line(parquetKey(kind), parquetFile{
			URL: file.URL, ID: p.id, PartitionValues: p.partition, Size: p.size, Stats: p.stats,
			Version: version, Timestamp: timestamp, ExpirationTimestamp: expiration,
		})
	}
	return line("file", deltaFile{
		ID: p.id, Version: version, Timestamp: timestamp, ExpirationTimestamp: expiration,
		DeltaSingleAction: deltaAction(file, p, kind),
	})
}

func parquetKey(kind fileKind) string {
	switch kind {
	case kindAdd:
		return "add"
	case kindRemove:
		return "remove"
	}
	return "file"
}

// deltaAction wraps the file as Delta add or remove. A query `file` is an
// add: the recipient replays the lines as a Delta log.
func deltaAction(file File, p fileParts, kind fileKind) singleAction {
	if kind == kindRemove {
		return singleAction{Remove: &deltaRemove{
			Path: file.URL, DeletionTimestamp: file.Timestamp, DataChange: true,
			ExtendedFileMetadata: true, PartitionValues: p.partition, Size: p.size,
		}}
	}
	return singleAction{Add: &deltaAdd{
		Path: file.URL, PartitionValues: p.partition, Size: p.size,
		ModificationTime: file.Timestamp, DataChange: true, Stats: p.stats,
	}}
}

func partsOf(file File, withStats bool) (fileParts, error) {
	df := file.Data
	if df == nil {
		return fileParts{}, fmt.Errorf("actions: file %q has no data file", file.URL)
	}
	pv, err := PartitionValues(df, file.Spec, file.Schema)
	if err != nil {
		return fileParts{}, err
	}
	p := fileParts{id: FileID(df.FilePath()), partition: pv, size: df.FileSizeBytes()}
	if withStats {
		if p.stats, err = Stats(df, file.Schema); err != nil {
			return fileParts{}, err
		}
	}
	return p, nil
}
