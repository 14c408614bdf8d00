package embedded

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// errValidation marks a table shape that Iceberg's Java catalogs refuse
// with ValidationException (400): a partition or sort field whose source
// is not a column, or whose transform does not apply to the column's type.
// iceberg-go stores some of these (a `day` of a long), and Java engines
// then cannot load the table at all; others it refuses with an error that
// would otherwise be a 500.
var errValidation = errors.New("validation failed")

func validationError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errValidation, fmt.Sprintf(format, args...))
}

// maxNameBytes bounds a table, view or namespace name: a name is a
// directory of the default location, and file systems hold at most 255
// bytes per path element.
const maxNameBytes = 255

// checkSpec checks that every field of spec has a source column in schema
// that its transform applies to.
func checkSpec(schema *iceberg.Schema, spec *iceberg.PartitionSpec) error {
	for _, f := range spec.Fields() {
		for _, id := range f.SourceIDs {
			if err := checkSource(schema, "partition field "+f.Name, id, f.Transform); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOrder is checkSpec for a sort order.
func checkOrder(schema *iceberg.Schema, order table.SortOrder) error {
	for i, f := range order.Fields() {
		for _, id := range f.SourceIDs {
			if err := checkSource(schema, fmt.Sprintf("sort field %d", i), id, f.Transform); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkSource(schema *iceberg.Schema, what string, id int, t iceberg.Transform) error {
	typ, ok := schema.FindTypeByID(id)
	if !ok {
		return validationError("%s: source id %d is not a column of schema %d", what, id, schema.ID)
	}
	if !t.CanTransform(typ) {
		return validationError("%s: transform %s cannot be applied to source column %d of type %s", what, t, id, typ)
	}
	return nil
}

// checkNewShapes checks the partition specs and sort orders a commit added
// (those not in base; base is nil for a create) against the schema that
// is current after it, as Java checks each when it is added.
func checkNewShapes(base, meta table.Metadata) error {
	schema := meta.CurrentSchema()
	if schema == nil {
		return nil
	}
	for _, spec := range meta.PartitionSpecs() {
		if base != nil && hasSpec(base, spec.ID()) {
			continue
		}
		if err := checkSpec(schema, &spec); err != nil {
			return err
		}
	}
	for _, order := range meta.SortOrders() {
		if base != nil && hasOrder(base, order.OrderID()) {
			continue
		}
		if err := checkOrder(schema, order); err != nil {
			return err
		}
	}
	return nil
}

func hasSpec(m table.Metadata, id int) bool {
	for _, s := range m.PartitionSpecs() {
		if s.ID() == id {
			return true
		}
	}
	return false
}

func hasOrder(m table.Metadata, id int) bool {
	for _, o := range m.SortOrders() {
		if o.OrderID() == id {
			return true
		}
	}
	return false
}
