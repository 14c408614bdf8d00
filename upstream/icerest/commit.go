package icerest

import (
	"encoding/json"
	"slices"
)

// Commit is what one table commit (an updateTable, or one table of a
// commitTransaction) says that lets a gateway find it in the table
// afterwards, when its outcome is unknown (upstream's replay resolves an
// Idempotency-Key that way). ParseRequest reads it from the body's one
// parse.
type Commit struct {
	// Table is a transaction's table; zero for an updateTable, whose
	// table is the route's.
	Table        Identifier
	Snapshots    []int64  // ids of the snapshots it adds (add-snapshot)
	AssertCreate bool     // it creates the table (assert-create)
	UUID         string   // the table uuid it assigns (assign-uuid)
	Moved        []string // branches and tags it points elsewhere (set-snapshot-ref)
	Asserted     []string // refs it asserts at a snapshot id (assert-ref-snapshot-id)
	// Unreadable: an add-snapshot without a snapshot-id that is an
	// int64, so the commit cannot be told in the table.
	Unreadable bool
	// Actions are its updates' actions, each once, in order: what the
	// commit changes (add-schema, set-properties, ...), for the gateway's
	// record of commits.
	Actions []string
	// Operations are the summary operations (append, overwrite, delete,
	// replace) of the snapshots it adds.
	Operations []string
}

// commitsOf reads the commits of an updateTable or commitTransaction body
// the schema check passed; ids are the transaction's tables, in order.
func commitsOf(op string, o object, ids []Identifier) []Commit {
	switch op {
	case OpUpdateTable:
		return []Commit{readCommit(o)}
	case OpCommitTransaction:
		changes, _ := o["table-changes"].([]any)
		if len(changes) != len(ids) {
			return nil // every change has an identifier once validated
		}
		out := make([]Commit, 0, len(changes))
		for i, v := range changes {
			c, _ := v.(map[string]any)
			one := readCommit(c)
			one.Table = ids[i]
			out = append(out, one)
		}
		return out
	}
	return nil
}

func readCommit(o object) Commit {
	var c Commit
	for _, v := range asArray(o["requirements"]) {
		q, _ := v.(map[string]any)
		switch q["type"] {
		case "assert-create":
			c.AssertCreate = true
		case "assert-ref-snapshot-id":
			ref, _ := q["ref"].(string)
			c.Asserted = append(c.Asserted, ref)
		}
	}
	for _, v := range asArray(o["updates"]) {
		u, _ := v.(map[string]any)
		if action, _ := u["action"].(string); !slices.Contains(c.Actions, action) {
			c.Actions = append(c.Actions, action)
		}
		switch u["action"] {
		case "add-snapshot":
			s, _ := u["snapshot"].(map[string]any)
			summary, _ := s["summary"].(map[string]any)
			if op, _ := summary["operation"].(string); op != "" && !slices.Contains(c.Operations, op) {
				c.Operations = append(c.Operations, op)
			}
			n, ok := s["snapshot-id"].(json.Number)
			id, err := n.Int64()
			if !ok || err != nil {
				c.Unreadable = true
				continue
			}
			c.Snapshots = append(c.Snapshots, id)
		case "set-snapshot-ref":
			ref, _ := u["ref-name"].(string)
			c.Moved = append(c.Moved, ref)
		case "assign-uuid":
			c.UUID, _ = u["uuid"].(string)
		}
	}
	return c
}

func asArray(v any) []any {
	a, _ := v.([]any)
	return a
}
