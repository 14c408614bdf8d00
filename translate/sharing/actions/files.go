package actions

// fileKind is which file action a line carries.
type fileKind int

const (
	kindFile   fileKind = iota // query endpoint: `file`
	kindAdd                    // changes endpoint: `add`
	kindRemove                 // changes endpoint: `remove`
)

// FileLine builds the query endpoint's `file` line. withVersion adds the
// file's table version and commit timestamp, which the protocol returns
// only for queries with a version, timestamp or startingVersion. An
// answer listing many files builds them with one Encoder instead.
func FileLine(f Format, file File, withVersion bool) ([]byte, error) {
	return oneLine(new(Encoder).AppendFileLine(nil, f, file, withVersion))
}

// Add builds a changes-endpoint line for a file the version added.
func Add(f Format, file File) ([]byte, error) {
	return oneLine(new(Encoder).AppendAdd(nil, f, file))
}

// Remove builds a changes-endpoint line for a file the version removed.
func Remove(f Format, file File) ([]byte, error) {
	return oneLine(new(Encoder).AppendRemove(nil, f, file))
}

func oneLine(b []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return b, nil
}

// The parquet-format `file`, `add` and `remove` objects differ only in
// which optional fields are set (Encoder writes them):
//
//	{"url", "id", "partitionValues", "size", "stats" (not on remove),
//	 "version" and "timestamp" (with a version), "expirationTimestamp"}
//
// The delta-format `file` wraps a Delta single action (deltaFile): a
// Delta add action for `file` and `add`, whose path is the pre-signed URL
// as the protocol replaces it,
//
//	{"path", "partitionValues", "size", "modificationTime", "dataChange", "stats"}
//
// and a Delta remove action for `remove`, whose extendedFileMetadata says
// partitionValues and size are present, which readers of the removed
// file's rows (change data feed) rely on:
//
//	{"path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues", "size"}
func parquetKey(kind fileKind) string {
	switch kind {
	case kindAdd:
		return "add"
	case kindRemove:
		return "remove"
	}
	return "file"
}

// deltaFile is the delta-format `file` wrapper around a Delta single action.
type deltaFile struct {
	ID                  string       `json:"id"`
	Version             *int64       `json:"version,omitempty"`
	Timestamp           *int64       `json:"timestamp,omitempty"`
	ExpirationTimestamp *int64       `json:"expirationTimestamp,omitempty"`
	DeltaSingleAction   singleAction `json:"deltaSingleAction"`
}

// singleAction is the Delta single action of a marshaled deltaFile: only
// cdc lines are marshaled (add and remove are written by Encoder).
type singleAction struct {
	Cdc *deltaCdc `json:"cdc,omitempty"`
}
