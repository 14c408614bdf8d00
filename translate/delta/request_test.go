package delta

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestChecks(t *testing.T) {
	ns := []string{"s"}
	for _, tc := range []struct {
		name, method, path, query, body string
		want                            []Check
	}{
		{"load", "GET", "catalogs/c/schemas/s/tables/t", "", "",
			[]Check{{Op: OpLoadTable, Iceberg: "loadTable", Catalog: "c", Namespace: ns, Table: "t"}}},
		{"create names the new table", "POST", "catalogs/c/schemas/s/tables", "", string(createReq(func(m map[string]any) { m["name"] = "n" })),
			[]Check{{Op: OpCreateTable, Iceberg: "createTable", Catalog: "c", Namespace: ns, Table: "n"}}},
		{"stage names the new table", "POST", "catalogs/c/schemas/s/staging-tables", "", `{"name":"n"}`,
			[]Check{{Op: OpCreateStagingTable, Iceberg: "createTable", Catalog: "c", Namespace: ns, Table: "n"}}},
		{"rename asks about both names", "POST", "catalogs/c/schemas/s/tables/t/rename", "", `{"new-name":"u"}`,
			[]Check{
				{Op: OpRenameTable, Iceberg: "renameTable", Catalog: "c", Namespace: ns, Table: "t"},
				{Op: OpRenameTable, Iceberg: "renameTable", Catalog: "c", Namespace: ns, Table: "u"},
			}},
		{"READ credentials", "GET", "catalogs/c/schemas/s/tables/t/credentials", "operation=READ", "",
			[]Check{{Op: OpGetTableCredentials, Iceberg: "loadCredentials", Catalog: "c", Namespace: ns, Table: "t"}}},
		{"READ_WRITE credentials need write access", "GET", "catalogs/c/schemas/s/tables/t/credentials", "operation=READ_WRITE", "",
			[]Check{
				{Op: OpGetTableCredentials, Iceberg: "loadCredentials", Catalog: "c", Namespace: ns, Table: "t"},
				{Op: OpGetTableCredentials, Iceberg: "updateTable", Catalog: "c", Namespace: ns, Table: "t"},
			}},
		{"config asks only about a known catalog", "GET", "config", "catalog=c", "",
			[]Check{{Op: OpGetConfig, Iceberg: "getConfig", Catalog: "c", IfCatalog: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := ParseRoute(tc.method, tc.path)
			require.NoError(t, err)
			query, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			q, err := ParseRequest(rt, query, []byte(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.want, q.Checks())
		})
	}
}

func TestRequestTemporaryPathChecks(t *testing.T) {
	rt, err := ParseRoute("GET", "temporary-path-credentials")
	require.NoError(t, err)
	_, err = ParseRequest(rt, url.Values{"operation": {"READ"}}, nil)
	assert.Equal(t, "location is required", AsError(err).Message)
	_, err = ParseRequest(rt, url.Values{"location": {"s3://b/p"}, "operation": {"WRITE"}}, nil)
	assert.Equal(t, `operation must be READ or READ_WRITE, got "WRITE"`, AsError(err).Message)

	q, err := ParseRequest(rt, url.Values{"location": {"s3://b/p"}, "operation": {"READ"}}, nil)
	require.NoError(t, err)
	assert.Empty(t, q.Checks(), "no checks before the source is known")
	q.VendFrom("c", []string{"stage"})
	assert.Equal(t, []Check{
		{Op: OpGetTemporaryPathCredentials, Iceberg: "loadCredentials", Catalog: "c", Namespace: []string{"stage"}, Location: "s3://b/p"},
		{Op: OpGetTemporaryPathCredentials, Iceberg: "createTable", Catalog: "c", Namespace: []string{"stage"}, Location: "s3://b/p"},
	}, q.Checks())
}
