package schema

import (
	"encoding/json"
	"strconv"
)

// HintsProperty is the Iceberg table property where the UC Delta API
// records what an Iceberg schema cannot hold of the Delta schema it was
// made from (ColumnHints as JSON), so every Delta view of the table (the
// UC Delta API, Delta Sharing) shows the same types.
const HintsProperty = "lakegate.delta.columns"

// ColumnHint is what HintsProperty records for one Iceberg field id: a
// narrow integer type (short, byte: Iceberg stores them as int) and Delta
// field metadata other than comment (Iceberg keeps only the doc).
type ColumnHint struct {
	Type     string         `json:"type,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ColumnHints are ColumnHint by Iceberg field id (decimal string keys).
type ColumnHints map[string]ColumnHint

// ParseHints reads HintsProperty; a damaged record yields no hints: the
// schema is then shown as Iceberg has it, never guessed.
func ParseHints(raw string) ColumnHints {
	var h ColumnHints
	if raw == "" || json.Unmarshal([]byte(raw), &h) != nil {
		return nil
	}
	return h
}

// Narrow is the narrow integer type recorded for Iceberg field id, if any.
func (h ColumnHints) Narrow(id int) (PrimitiveType, bool) {
	t := PrimitiveType(h[strconv.Itoa(id)].Type)
	return t, t == Short || t == Byte
}
