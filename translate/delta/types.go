package delta

import (
	"encoding/json"

	"github.com/lakegate/lakegate/translate/schema"
)

// Table types (DeltaTableType).
const (
	Managed  = "MANAGED"
	External = "EXTERNAL"
)

// Credential operations (DeltaCredentialOperation).
const (
	Read      = "READ"
	ReadWrite = "READ_WRITE"
)

// Protocol is DeltaProtocol.
type Protocol struct {
	MinReaderVersion *int     `json:"min-reader-version"`
	MinWriterVersion *int     `json:"min-writer-version"`
	ReaderFeatures   []string `json:"reader-features,omitempty"`
	WriterFeatures   []string `json:"writer-features,omitempty"`
}

// Uniform is DeltaUniformMetadata.
type Uniform struct {
	Iceberg *UniformIceberg `json:"iceberg"`
}

// UniformIceberg is DeltaUniformMetadata.iceberg.
type UniformIceberg struct {
	MetadataLocation          string `json:"metadata-location,omitempty"`
	ConvertedDeltaVersion     *int64 `json:"converted-delta-version,omitempty"`
	ConvertedDeltaTimestamp   *int64 `json:"converted-delta-timestamp,omitempty"`
	BaseConvertedDeltaVersion *int64 `json:"base-converted-delta-version,omitempty"`
}

// CreateTableRequest is DeltaCreateTableRequest. Columns stay raw until
// validation, which parses them with the UC (kebab-case) dialect.
type CreateTableRequest struct {
	Name                  *string                    `json:"name"`
	Location              *string                    `json:"location"`
	TableType             *string                    `json:"table-type"`
	Comment               *string                    `json:"comment"`
	Columns               json.RawMessage            `json:"columns"`
	PartitionColumns      []string                   `json:"partition-columns"`
	Protocol              *Protocol                  `json:"protocol"`
	Properties            map[string]string          `json:"properties"`
	DomainMetadata        map[string]json.RawMessage `json:"domain-metadata"`
	LastCommitTimestampMs *int64                     `json:"last-commit-timestamp-ms"`
	Uniform               *Uniform                   `json:"uniform"`

	columns schema.StructType
	// registration marks a create that registers an EXTERNAL table whose
	// log the engine already wrote (ParseRegistration).
	registration bool
}

// StagingTableRequest is DeltaCreateStagingTableRequest.
type StagingTableRequest struct {
	Name *string `json:"name"`
}

// RenameRequest is DeltaRenameTableRequest.
type RenameRequest struct {
	NewName *string `json:"new-name"`
}

// Requirement is one DeltaTableRequirement.
type Requirement struct {
	Type string  `json:"type"`
	UUID *string `json:"uuid"`
	Etag *string `json:"etag"`
}

// Commit is DeltaCommit.
type Commit struct {
	Version                   *int64  `json:"version"`
	Timestamp                 *int64  `json:"timestamp"`
	FileName                  *string `json:"file-name"`
	FileSize                  *int64  `json:"file-size"`
	FileModificationTimestamp *int64  `json:"file-modification-timestamp"`
}

// Update is one DeltaTableUpdate; which fields apply depends on Action.
type Update struct {
	Action                 string          `json:"action"`
	Updates                json.RawMessage `json:"updates"`  // set-properties: map; set-domain-metadata: domains
	Removals               []string        `json:"removals"` // remove-properties
	Columns                json.RawMessage `json:"columns"`  // set-columns
	Comment                *string         `json:"comment"`  // set-table-comment
	Commit                 *Commit         `json:"commit"`   // add-commit
	Uniform                *Uniform        `json:"uniform"`  // add-commit
	LatestPublishedVersion *int64          `json:"latest-published-version"`
	Protocol               *Protocol       `json:"protocol"`
	Domains                []string        `json:"domains"`
	PartitionColumns       []string        `json:"partition-columns"`
	LastCommitVersion      *int64          `json:"last-commit-version"`
	LastCommitTimestampMs  *int64          `json:"last-commit-timestamp-ms"`

	properties map[string]string
	domains    map[string]json.RawMessage
	columns    schema.StructType
}

// UpdateTableRequest is DeltaUpdateTableRequest.
type UpdateTableRequest struct {
	Requirements []Requirement `json:"requirements"`
	Updates      []Update      `json:"updates"`
}

// StorageCredential is DeltaStorageCredential: one set of vended
// credentials, its config keys in the Delta API's names (UC's own API
// answers them as TemporaryCredentials, translate/unity).
type StorageCredential struct {
	Prefix           string            `json:"prefix"`
	Operation        string            `json:"operation"`
	Config           map[string]string `json:"config"`
	ExpirationTimeMs int64             `json:"expiration-time-ms"`
}

// CredentialsResponse is DeltaCredentialsResponse.
type CredentialsResponse struct {
	StorageCredentials []StorageCredential `json:"storage-credentials"`
}

// TableMetadata is DeltaTableMetadata.
type TableMetadata struct {
	Etag                  string            `json:"etag"`
	TableType             string            `json:"table-type"`
	TableUUID             string            `json:"table-uuid"`
	Location              string            `json:"location"`
	CreatedTime           int64             `json:"created-time"`
	UpdatedTime           int64             `json:"updated-time"`
	Columns               json.RawMessage   `json:"columns"`
	PartitionColumns      []string          `json:"partition-columns"`
	Properties            map[string]string `json:"properties"`
	LastCommitVersion     *int64            `json:"last-commit-version,omitempty"`
	LastCommitTimestampMs *int64            `json:"last-commit-timestamp-ms,omitempty"`
	// Comment is the table comment, which the Delta API's load does not
	// answer (it is no property there) but UC's getTable does.
	Comment string `json:"-"`
}

// LoadTableResponse is DeltaLoadTableResponse; commits are the ratified
// commits not yet backfilled (PropCommits), newest first.
type LoadTableResponse struct {
	Metadata TableMetadata `json:"metadata"`
	Commits  []Commit      `json:"commits"`
	Uniform  *Uniform      `json:"uniform,omitempty"`
	// LatestTableVersion is absent for EXTERNAL tables: the server ratifies
	// none of their versions (their log is the truth), as UC answers.
	LatestTableVersion *int64 `json:"latest-table-version,omitempty"`
}

// StagingTableResponse is DeltaStagingTableResponse.
type StagingTableResponse struct {
	TableID            string              `json:"table-id"`
	TableType          string              `json:"table-type"`
	Location           string              `json:"location"`
	StorageCredentials []StorageCredential `json:"storage-credentials"`
	RequiredProtocol   protocolOut         `json:"required-protocol"`
	RequiredProperties map[string]*string  `json:"required-properties"`
}

// protocolOut is DeltaProtocol as lakegate answers it.
type protocolOut struct {
	MinReaderVersion int      `json:"min-reader-version"`
	MinWriterVersion int      `json:"min-writer-version"`
	ReaderFeatures   []string `json:"reader-features,omitempty"`
	WriterFeatures   []string `json:"writer-features,omitempty"`
}

// configResponse is DeltaCatalogConfig.
type configResponse struct {
	Endpoints       []string `json:"endpoints"`
	ProtocolVersion string   `json:"protocol-version"`
}

// MetricsRequest is DeltaReportMetricsRequest.
type MetricsRequest struct {
	TableID *string `json:"table-id"`
	Report  *struct {
		CommitReport map[string]json.RawMessage `json:"commit-report"`
	} `json:"report"`
}
