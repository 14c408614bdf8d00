package actions

// ChangeFile is a change data file lakegate wrote for a version: rows with
// a `_change_type` column (insert, delete), all in one partition.
type ChangeFile struct {
	URL             string
	Path            string // where lakegate keeps it; its id is the path's hash
	PartitionValues map[string]*string
	Size            int64
	Version         int64
	Timestamp       int64 // ms, the version's commit time
	Expiration      int64 // ms, URL expiry; 0 omits it
}

// parquetCdf is the parquet-format `cdf` object.
type parquetCdf struct {
	URL                 string             `json:"url"`
	ID                  string             `json:"id"`
	PartitionValues     map[string]*string `json:"partitionValues"`
	Size                int64              `json:"size"`
	Timestamp           int64              `json:"timestamp"`
	Version             int64              `json:"version"`
	ExpirationTimestamp *int64             `json:"expirationTimestamp,omitempty"`
}

// deltaCdc is Delta's cdc action (Add CDC File).
type deltaCdc struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	DataChange      bool               `json:"dataChange"`
}

// Cdf builds a changes-endpoint line for a change data file: `cdf` in
// parquet format, a `file` wrapping a Delta `cdc` action in delta format.
// A version answered with change files has no add or remove lines: its
// change files are its changes, as in a Delta log.
func Cdf(f Format, c ChangeFile) ([]byte, error) {
	if err := checkFormat(f); err != nil {
		return nil, err
	}
	pv := c.PartitionValues
	if pv == nil {
		pv = map[string]*string{}
	}
	id, expiration := FileID(c.Path), optionalMillis(c.Expiration)
	if f == Parquet {
		return line("cdf", parquetCdf{URL: c.URL, ID: id, PartitionValues: pv, Size: c.Size,
			Timestamp: c.Timestamp, Version: c.Version, ExpirationTimestamp: expiration})
	}
	version, timestamp := c.Version, c.Timestamp
	return line("file", deltaFile{ID: id, Version: &version, Timestamp: &timestamp, ExpirationTimestamp: expiration,
		DeltaSingleAction: singleAction{Cdc: &deltaCdc{Path: c.URL, PartitionValues: pv, Size: c.Size}}})
}
