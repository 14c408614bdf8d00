package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// The embedded catalog words its errors as Iceberg's Java catalogs do
// ("Table does not exist: ns.tbl", "Requirement failed: current schema
// changed: expected id 0 != 1"). Engines show these messages to people, who
// search for them, and Apache Iceberg's own catalog test suite
// (interop/java) checks them.

// catalogError is a catalog error with its Java wording; it unwraps to
// iceberg-go's sentinel (catalog.ErrNoSuchTable, ...), which decides the
// status and type in restError.
type catalogError struct {
	kind error
	msg  string
}

func (e *catalogError) Error() string { return e.msg }
func (e *catalogError) Unwrap() error { return e.kind }

func dotted(id []string) string { return strings.Join(id, ".") }

// noSuchObject is a missing table or view (typ).
func noSuchObject(typ string, id table.Identifier) error {
	return &catalogError{noSuchErr(typ), objectWord(typ) + " does not exist: " + dotted(id)}
}

func noSuchTable(id table.Identifier) error { return noSuchObject(rowTable, id) }

func noSuchView(id table.Identifier) error { return noSuchObject(rowView, id) }

// missingFile is a metadata file that is not there; Java catalogs answer
// NotFoundException, worded as here.
func missingFile(loc string) error {
	return icerest.Errorf(http.StatusNotFound, icerest.NotFound, "Failed to open input stream for file: %s", loc)
}

func noSuchNamespace(ns table.Identifier) error {
	return &catalogError{catalog.ErrNoSuchNamespace, "Namespace does not exist: " + dotted(ns)}
}

func namespaceExists(ns table.Identifier) error {
	return &catalogError{catalog.ErrNamespaceAlreadyExists, "Namespace already exists: " + dotted(ns)}
}

// nameTaken is the create (or register) of a table or view whose name a
// table or view already has.
func nameTaken(creating, occupant string, id table.Identifier) error {
	if creating == occupant {
		return &catalogError{alreadyExistsErr(creating), objectWord(occupant) + " already exists: " + dotted(id)}
	}
	return &catalogError{alreadyExistsErr(creating), objectWord(occupant) + " with same name already exists: " + dotted(id)}
}

// renameTaken is a rename onto a name a table or view already has.
func renameTaken(renaming, occupant string, from, to table.Identifier) error {
	return &catalogError{alreadyExistsErr(renaming), fmt.Sprintf("Cannot rename %s to %s. %s already exists",
		dotted(from), dotted(to), objectWord(occupant))}
}

func objectWord(typ string) string {
	if typ == rowView {
		return "View"
	}
	return "Table"
}

// routeMessage is the message of err: its Java wording, or an iceberg-go
// "does not exist" worded after the object the request path names, else
// iceberg-go's own message, capitalized.
func routeMessage(err error, rt icerest.Route) string {
	var ce *catalogError
	if errors.As(err, &ce) {
		return ce.msg
	}
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) && rt.Table != "":
		return noSuchTable(ident(rt.Namespace, rt.Table)).Error()
	case errors.Is(err, catalog.ErrNoSuchView) && rt.View != "":
		return noSuchView(ident(rt.Namespace, rt.View)).Error()
	case errors.Is(err, catalog.ErrNoSuchNamespace) && rt.Namespace != nil:
		return noSuchNamespace(rt.Namespace).Error()
	}
	return capitalized(err.Error())
}

func capitalized(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// requirementFailed words a failed commit requirement as Java's
// UpdateRequirement does, from the requirement and the table's current
// metadata (nil when the table does not exist yet).
func requirementFailed(req table.Requirement, cur table.Metadata, cause error) error {
	var f struct {
		Type                    string `json:"type"`
		UUID                    string `json:"uuid"`
		Ref                     string `json:"ref"`
		SnapshotID              *int64 `json:"snapshot-id"`
		LastAssignedFieldID     int    `json:"last-assigned-field-id"`
		CurrentSchemaID         int    `json:"current-schema-id"`
		LastAssignedPartitionID int    `json:"last-assigned-partition-id"`
		DefaultSpecID           int    `json:"default-spec-id"`
		DefaultSortOrderID      int    `json:"default-sort-order-id"`
	}
	if b, err := json.Marshal(req); err == nil {
		_ = json.Unmarshal(b, &f)
	}
	msg := ""
	switch {
	case f.Type == "assert-create":
		msg = "table already exists"
	case cur == nil:
		msg = "table does not exist"
	case f.Type == "assert-table-uuid":
		msg = fmt.Sprintf("UUID does not match: expected %s != %s", cur.TableUUID(), f.UUID)
	case f.Type == "assert-ref-snapshot-id":
		msg = refMessage(cur, f.Ref, f.SnapshotID)
	case f.Type == "assert-last-assigned-field-id":
		msg = fmt.Sprintf("last assigned field id changed: expected id %d != %d", f.LastAssignedFieldID, cur.LastColumnID())
	case f.Type == "assert-current-schema-id":
		msg = fmt.Sprintf("current schema changed: expected id %d != %d", f.CurrentSchemaID, cur.CurrentSchema().ID)
	case f.Type == "assert-last-assigned-partition-id":
		last := -1
		if p := cur.LastPartitionSpecID(); p != nil {
			last = *p
		}
		msg = fmt.Sprintf("last assigned partition id changed: expected id %d != %d", f.LastAssignedPartitionID, last)
	case f.Type == "assert-default-spec-id":
		msg = fmt.Sprintf("default partition spec changed: expected id %d != %d", f.DefaultSpecID, cur.DefaultPartitionSpec())
	case f.Type == "assert-default-sort-order-id":
		msg = fmt.Sprintf("default sort order changed: expected id %d != %d", f.DefaultSortOrderID, cur.DefaultSortOrder())
	default:
		msg = fmt.Sprintf("%s: %v", f.Type, cause)
	}
	return &catalogError{errRequirementFailed, "Requirement failed: " + msg}
}

func refMessage(cur table.Metadata, name string, want *int64) string {
	for refName, ref := range cur.Refs() {
		if refName != name {
			continue
		}
		if want == nil {
			return fmt.Sprintf("%s %s was created concurrently", ref.SnapshotRefType, name)
		}
		return fmt.Sprintf("%s %s has changed: expected id %d != %d", ref.SnapshotRefType, name, *want, ref.SnapshotID)
	}
	if want == nil {
		return fmt.Sprintf("branch or tag %s: unexpected state", name)
	}
	return fmt.Sprintf("branch or tag %s is missing, expected %d", name, *want)
}

// invalidArgument is a request that is well-formed but asks for something
// invalid. Java clients turn the type IllegalArgumentException (what
// Iceberg's own REST server answers) into the exception Java catalogs
// throw for it.
func invalidArgument(format string, args ...any) error {
	return icerest.Errorf(http.StatusBadRequest, "IllegalArgumentException", format, args...)
}

// viewRequirementFailed words a failed view requirement as Java's
// UpdateRequirement does.
func viewRequirementFailed(req view.Requirement, base view.Metadata, cause error) error {
	if req.GetType() != "assert-view-uuid" {
		return &catalogError{errRequirementFailed, fmt.Sprintf("Requirement failed: %s: %v", req.GetType(), cause)}
	}
	var f struct {
		UUID string `json:"uuid"`
	}
	if b, err := json.Marshal(req); err == nil {
		_ = json.Unmarshal(b, &f)
	}
	return &catalogError{errRequirementFailed, fmt.Sprintf(
		"Requirement failed: view UUID does not match: expected %s != %s", base.ViewUUID(), f.UUID)}
}
