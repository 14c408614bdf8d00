package deltalog

import (
	"strconv"

	"github.com/lakegate/lakegate/translate/schema"
)

// Action is one line of a commit file or one row of a checkpoint: exactly
// one field is set. Actions this reader has no use for (cdc, and any the
// protocol adds later) leave all fields nil and are skipped, as "Protocol
// Evolution" requires ("Clients must ignore such unrecognized fields").
type Action struct {
	Add                *AddFile            `json:"add,omitempty"`
	Remove             *RemoveFile         `json:"remove,omitempty"`
	MetaData           *Metadata           `json:"metaData,omitempty"`
	Protocol           *Protocol           `json:"protocol,omitempty"`
	Txn                *Txn                `json:"txn,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
}

// Protocol is the protocol action ("Protocol Evolution").
type Protocol struct {
	MinReaderVersion int32    `json:"minReaderVersion"`
	MinWriterVersion int32    `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// HasReaderFeature reports a reader table feature (reader version 3).
func (p Protocol) HasReaderFeature(f string) bool { return contains(p.ReaderFeatures, f) }

// HasWriterFeature reports a writer table feature (writer version 7).
func (p Protocol) HasWriterFeature(f string) bool { return contains(p.WriterFeatures, f) }

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Format is metaData.format ("Format Specification").
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options,omitempty"`
}

// Metadata is the metaData action ("Change Metadata"). SchemaString is kept
// as written; Columns parses it.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
	Configuration    map[string]string `json:"configuration"`
}

// Columns parses SchemaString ("Schema Serialization Format").
func (m Metadata) Columns() (schema.StructType, error) {
	return schema.ParseStructType([]byte(m.SchemaString))
}

// DeletionVector is a DeletionVectorDescriptor ("Deletion Vectors"). It is
// reported, not resolved: reading the bitmap is the data reader's business.
type DeletionVector struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDV string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
}

// UniqueID is the derived uniqueId ("Derived Fields"): the DV half of a
// logical file's key. A nil descriptor's id is "" (the protocol's NULL).
func (d *DeletionVector) UniqueID() string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDV
	if d.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*d.Offset), 10)
	}
	return id
}

// AddFile is the add action ("Add File and Remove File").
//
// Path is as the log writes it: a URI (RFC 2396), URL-encoded, relative to
// the table root unless absolute. Location is that path decoded and made
// absolute (see ResolvePath): the name a file system or object store knows
// the file by. Location is set in a Snapshot, not by ParseCommit, which
// knows no table root.
//
// PartitionValues map partition columns to their serialized values
// ("Partition Value Serialization"); a nil value is null, and so is an
// empty string, which the reader turns into nil as that section says.
// Under column mapping (name or id mode) the keys are the columns'
// physical names ("Reader Requirements for Column Mapping").
type AddFile struct {
	Path                    string             `json:"path"`
	Location                string             `json:"-"`
	PartitionValues         map[string]*string `json:"partitionValues"`
	Size                    int64              `json:"size"`
	ModificationTime        int64              `json:"modificationTime"`
	DataChange              bool               `json:"dataChange"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitempty"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string             `json:"clusteringProvider,omitempty"`
}

// RemoveFile is the remove action. In a snapshot removes are tombstones,
// kept for VACUUM only ("Action Reconciliation").
type RemoveFile struct {
	Path                 string             `json:"path"`
	Location             string             `json:"-"`
	DeletionTimestamp    *int64             `json:"deletionTimestamp,omitempty"`
	DataChange           bool               `json:"dataChange"`
	ExtendedFileMetadata bool               `json:"extendedFileMetadata,omitempty"`
	PartitionValues      map[string]*string `json:"partitionValues,omitempty"`
	Size                 *int64             `json:"size,omitempty"`
	DeletionVector       *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID            *int64             `json:"baseRowId,omitempty"`
}

// Txn is a transaction identifier ("Transaction Identifiers").
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// DomainMetadata is a domainMetadata action ("Domain Metadata").
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CommitInfo keeps what this reader needs of commitInfo, which is free
// form ("Commit Provenance Information"): the In-Commit Timestamp, the
// engine's own timestamp and the operation.
type CommitInfo struct {
	InCommitTimestamp *int64 `json:"inCommitTimestamp,omitempty"`
	Timestamp         *int64 `json:"timestamp,omitempty"`
	Operation         string `json:"operation,omitempty"`
}

// Sidecar names a V2 checkpoint's sidecar file ("Sidecar File Information").
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// CheckpointMetadata heads a V2 checkpoint ("Checkpoint Metadata").
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}
