package icerest

import (
	"testing"

	"github.com/lakegate/lakegate/internal/strictjson"
)

// TestSchemaFieldsFoldApart: no schema (with its alternatives) has two
// fields that differ only in case, else the case variant check would
// refuse a field a client must send.
func TestSchemaFieldsFoldApart(t *testing.T) {
	seen := map[*node]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		names := map[string]string{}
		for _, alt := range expand(nil, n) {
			for name := range alt.Props {
				if other, ok := names[strictjson.Fold(name)]; ok && other != name {
					t.Errorf("fields %q and %q fold together", name, other)
				}
				names[strictjson.Fold(name)] = name
			}
		}
		for _, c := range n.children() {
			visit(c)
		}
		visit(n.target)
	}
	for _, op := range operationSchemas {
		visit(op.Body)
	}
	if len(seen) < 50 {
		t.Fatalf("visited %d schemas only", len(seen))
	}
}
