package upstream

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// A write evicts what the policy was asked about: the tables its body
// names are read as ValidateBody reads them (icerest.TouchedTables), and a
// body that cannot be read evicts the whole catalog.
func TestTableCacheAffected(t *testing.T) {
	tc := &TableCache{Catalog: "lake"}
	ns := []string{"a", "b"}
	for _, c := range []struct {
		name string
		rt   icerest.Route
		body string
		want []string
	}{
		{"commit", icerest.Route{Operation: icerest.OpUpdateTable, Namespace: ns, Table: "t"}, `{}`,
			[]string{cache.TableKey("lake", ns, "t")}},
		{"drop", icerest.Route{Operation: icerest.OpDropTable, Namespace: ns, Table: "t"}, ``,
			[]string{cache.TableKey("lake", ns, "t")}},
		{"create", icerest.Route{Operation: icerest.OpCreateTable, Namespace: ns}, `{}`,
			[]string{cache.NamespacePrefix("lake", ns)}},
		{"rename", icerest.Route{Operation: icerest.OpRenameTable},
			`{"source":{"namespace":["a"],"name":"x"},"destination":{"namespace":["c"],"name":"y"}}`,
			[]string{cache.TableKey("lake", []string{"a"}, "x"), cache.TableKey("lake", []string{"c"}, "y")}},
		{"transaction", icerest.Route{Operation: icerest.OpCommitTransaction},
			`{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],"updates":[]},` +
				`{"identifier":{"namespace":["b"],"name":"y"},"requirements":[],"updates":[]}]}`,
			[]string{cache.TableKey("lake", []string{"a"}, "x"), cache.TableKey("lake", []string{"b"}, "y")}},
		{"rename, unreadable", icerest.Route{Operation: icerest.OpRenameTable}, `{"source":`,
			[]string{cache.CatalogPrefix("lake")}},
		{"rename, keys differing in case", icerest.Route{Operation: icerest.OpRenameTable},
			`{"source":{"namespace":["a"],"name":"x"},"destination":{"namespace":["c"],"name":"y"},"SOURCE":{"namespace":["z"],"name":"z"}}`,
			[]string{cache.TableKey("lake", []string{"a"}, "x"), cache.TableKey("lake", []string{"c"}, "y")}},
		{"transaction, not an array", icerest.Route{Operation: icerest.OpCommitTransaction}, `{"table-changes":{}}`,
			[]string{cache.CatalogPrefix("lake")}},
	} {
		assert.Equal(t, c.want, tc.affected(c.rt, []byte(c.body)), c.name)
	}
}
