package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// carriesTableMetadata are the operations whose success answer holds a
// table's metadata, which clients act on and the cache keeps.
var carriesTableMetadata = map[string]bool{
	icerest.OpLoadTable: true, icerest.OpCreateTable: true, icerest.OpRegisterTable: true,
	icerest.OpUpdateTable: true,
}

// tableMetadata is the part of TableMetadata lakegate checks: the fields
// the spec requires, and the types of the fields every client reads when
// present. Arrays of objects decode into struct{}: their items must be
// objects, and nothing else of them is kept.
type tableMetadata struct {
	FormatVersion     *int                `json:"format-version"`
	TableUUID         *string             `json:"table-uuid"`
	Location          *string             `json:"location"`
	LastUpdatedMs     *int64              `json:"last-updated-ms"`
	LastColumnID      *int64              `json:"last-column-id"`
	Schemas           []struct{}          `json:"schemas"`
	CurrentSchemaID   *int64              `json:"current-schema-id"`
	PartitionSpecs    []struct{}          `json:"partition-specs"`
	DefaultSpecID     *int64              `json:"default-spec-id"`
	SortOrders        []struct{}          `json:"sort-orders"`
	Properties        map[string]string   `json:"properties"`
	CurrentSnapshotID *int64              `json:"current-snapshot-id"`
	Snapshots         []struct{}          `json:"snapshots"`
	SnapshotLog       []struct{}          `json:"snapshot-log"`
	MetadataLog       []struct{}          `json:"metadata-log"`
	Refs              map[string]struct{} `json:"refs"`
}

// checkTableMetadata checks an answer's "metadata" is table metadata: a
// backend answering {"metadata":{"garbage":true}} must not be served,
// nor cached and served again as stale while it is down.
func checkTableMetadata(body []byte) error {
	var a struct {
		Metadata *tableMetadata `json:"metadata"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%q is not of its type", te.Field)
		}
		return err
	}
	m := a.Metadata
	switch {
	case m == nil:
		return errors.New(`no "metadata"`)
	case m.FormatVersion == nil || *m.FormatVersion < 1 || *m.FormatVersion > 3:
		return errors.New(`"format-version" is not 1, 2 or 3`)
	case m.TableUUID == nil:
		return errors.New(`no "table-uuid"`)
	}
	if _, err := uuid.Parse(*m.TableUUID); err != nil {
		return errors.New(`"table-uuid" is not a UUID`)
	}
	return nil
}

// nullListsAsEmpty rewrites the named top-level fields from null to []:
// a backend that answers "updated": null means it updated nothing, and
// clients that parse the spec's form fail on null.
func nullListsAsEmpty(body []byte, fields ...string) []byte {
	if !bytes.Contains(body, []byte("null")) {
		return body
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body // checkSuccess says what is wrong with it
	}
	changed := false
	for _, f := range fields {
		if v, ok := top[f]; ok && string(bytes.TrimSpace(v)) == "null" {
			top[f], changed = json.RawMessage("[]"), true
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}
