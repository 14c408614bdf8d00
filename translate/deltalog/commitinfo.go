package deltalog

import (
	"encoding/json"
	"errors"
)

// UnmarshalJSON reads commitInfo leniently: it is free form ("Commit
// Provenance Information": "Implementations are free to store any valid
// JSON-formatted data"), so an engine's odd timestamp or operation must not
// make the table unreadable. Only inCommitTimestamp is held to its type,
// a long ("In-Commit Timestamps"), because time travel depends on it.
func (c *CommitInfo) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = CommitInfo{}
	if raw, ok := m["inCommitTimestamp"]; ok && string(raw) != "null" {
		var ict int64
		if err := json.Unmarshal(raw, &ict); err != nil {
			return errors.New("commitInfo.inCommitTimestamp is not a long")
		}
		c.InCommitTimestamp = &ict
	}
	var ts int64
	if json.Unmarshal(m["timestamp"], &ts) == nil {
		c.Timestamp = &ts
	}
	_ = json.Unmarshal(m["operation"], &c.Operation)
	return nil
}
