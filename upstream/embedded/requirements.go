package embedded

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// specRequirements are a commit's requirements as the spec defines them.
// iceberg-go's decoding refuses an assert-ref-snapshot-id without
// snapshot-id, but the spec says a snapshot-id that is null *or missing*
// means "the ref must not exist yet", and ClickHouse sends it so on a
// table's first snapshot. Every other requirement decodes as iceberg-go
// decodes it.
type specRequirements table.Requirements

func (r *specRequirements) UnmarshalJSON(data []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	out := make(specRequirements, 0, len(raws))
	for i, raw := range raws {
		req, err := parseRequirement(raw)
		if err != nil {
			return fmt.Errorf("requirements[%d]: %w", i, err)
		}
		out = append(out, req)
	}
	*r = out
	return nil
}

// parseRequirement decodes one requirement; an assert-ref-snapshot-id
// whose snapshot-id is absent is made with a nil id.
func parseRequirement(raw json.RawMessage) (table.Requirement, error) {
	var probe struct {
		Type       string           `json:"type"`
		Ref        *string          `json:"ref"`
		SnapshotID *json.RawMessage `json:"snapshot-id"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if probe.Type == "assert-ref-snapshot-id" && probe.Ref != nil && probe.SnapshotID == nil {
		return table.AssertRefSnapshotID(*probe.Ref, nil), nil
	}
	var reqs table.Requirements // iceberg-go's own decoding, with its messages
	if err := json.Unmarshal(append(append([]byte{'['}, raw...), ']'), &reqs); err != nil {
		return nil, err
	}
	return reqs[0], nil
}
