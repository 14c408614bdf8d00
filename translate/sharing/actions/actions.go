// Package actions builds the NDJSON response lines of the Delta Sharing
// metadata, query and changes endpoints from Iceberg objects.
//
// Every exported builder returns exactly one JSON object without a trailing
// newline; the caller frames the lines. Two wire formats exist: "parquet"
// (the default, understood by every client) and "delta" (Delta actions
// wrapped for the recipient's Delta library, needed for column mapping and
// timestamp_ntz). Iceberg tables are exposed in delta format with id-mode
// column mapping because Iceberg data files carry field ids, which is exactly
// what id mode resolves columns by.
package actions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
)

// Format is the Delta Sharing response format (capability responseformat).
type Format string

// The two response formats of the protocol.
const (
	Parquet Format = "parquet"
	Delta   Format = "delta"
)

// ErrTimestampNtzNeedsDelta reports a schema that the parquet response
// format cannot carry: Iceberg timestamp (without zone) maps only to Delta
// timestamp_ntz, which needs the delta format and its timestampNtz reader
// feature. Callers map it to INVALID_PARAMETER_VALUE.
var ErrTimestampNtzNeedsDelta = errors.New("table has a timestamp without time zone column, which needs responseformat=delta with the timestampNtz reader feature")

// ErrUnknownFormat reports a Format other than Parquet or Delta.
var ErrUnknownFormat = errors.New("actions: unknown response format")

// Table is what the protocol and metadata lines need.
type Table struct {
	ID          string // Iceberg table-uuid
	Name        string
	Description string
	Schema      *iceberg.Schema
	Spec        iceberg.PartitionSpec
	Properties  iceberg.Properties
	Version     int64
	CreatedTime int64 // ms since epoch; 0 omits it
	Size        *int64
	NumFiles    *int64
	// ColumnMapping (delta format only) maps columns by field id: the
	// columnMapping feature, id-mode configuration and field metadata.
	ColumnMapping bool
	// ChangeDataFeed declares the table's change data feed:
	// delta.enableChangeDataFeed, and in delta format the writer protocol
	// that has it (writer version 4, or the changeDataFeed feature).
	ChangeDataFeed bool
}

// File is one data file to list.
type File struct {
	URL  string // pre-signed URL handed to the recipient
	Data iceberg.DataFile
	// Log, when set, is the file as a Delta log lists it (a table whose
	// truth is its log): its path, size, partition values and stats are
	// the log's, and Data, Spec and Schema are not used.
	Log  *LogFile
	Spec iceberg.PartitionSpec // the spec the file was written with (its spec id)
	// Schema names the stats and partition values. Pass the schema the
	// metaData line was built from (normally the current one), not the
	// file's write-time schema: Delta matches them by the metadata's
	// column names, and Iceberg metrics are keyed by field id, which
	// survives renames.
	Schema     *iceberg.Schema
	Version    int64
	Timestamp  int64 // ms, commit time of the snapshot that added/removed the file
	Expiration int64 // ms, URL expiry; 0 omits it
}

// FileID is the stable file id the protocol requires: the same file must
// get the same id across requests, while its URL changes with every
// pre-signing. The Iceberg file path is immutable per file, so its hash is.
func FileID(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:])
}

// EndStream builds the endStreamAction line; empty fields are omitted since
// the client reads their presence as meaning (e.g. a nextPageToken means
// "more pages").
func EndStream(refreshToken, nextPageToken string, minURLExpiration int64) ([]byte, error) {
	type endStream struct {
		RefreshToken              string `json:"refreshToken,omitempty"`
		NextPageToken             string `json:"nextPageToken,omitempty"`
		MinURLExpirationTimestamp int64  `json:"minUrlExpirationTimestamp,omitempty"`
	}
	return line("endStreamAction", endStream{refreshToken, nextPageToken, minURLExpiration})
}

// line marshals {key: v}, the single-field wrapper every response line is.
func line(key string, v any) ([]byte, error) {
	b, err := json.Marshal(map[string]any{key: v})
	if err != nil {
		return nil, fmt.Errorf("actions: encoding %s line: %w", key, err)
	}
	return b, nil
}

func checkFormat(f Format) error {
	if f != Parquet && f != Delta {
		return fmt.Errorf("%w %q", ErrUnknownFormat, string(f))
	}
	return nil
}
