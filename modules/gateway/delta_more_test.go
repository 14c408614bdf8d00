package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// eventsColumns is embeddedtest.EventSchema in Delta columns, so
// embeddedtest.Batch can write rows into a table created through Delta.
const eventsColumns = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":false,"metadata":{}},
 {"name":"msg","type":"string","nullable":true,"metadata":{}}
]}`

// createEvents creates sales.<name> through the Delta API, unpartitioned,
// with eventsColumns; extra fields are added to the request body.
func createEvents(t *testing.T, base, dir, name string, extra map[string]any) (int, map[string]any) {
	t.Helper()
	body := map[string]any{
		"name": name, "location": "file://" + filepath.Join(dir, name), "table-type": "EXTERNAL",
		"columns":                  json.RawMessage(eventsColumns),
		"protocol":                 map[string]any{"min-reader-version": 1, "min-writer-version": 2},
		"properties":               map[string]string{"delta.appendOnly": "false"},
		"last-commit-timestamp-ms": 1700000000000,
	}
	for k, v := range extra {
		body[k] = v
	}
	return call(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/tables", body)
}

// appendEvents appends rows [from, to) to tbl with iceberg-go, through
// the gateway's Iceberg front door.
func appendEvents(t *testing.T, tbl *table.Table, from, to int64) *table.Table {
	t.Helper()
	data, _ := embeddedtest.Batch(t, tbl, from, to)
	defer data.Release()
	tbl, err := tbl.AppendTable(context.Background(), data, 1024, nil)
	require.NoError(t, err)
	return tbl
}

// addCommit is a Delta add-commit update naming UniForm metadata.
func addCommit(version int64, metadataLocation string) map[string]any {
	return map[string]any{
		"action": "add-commit",
		"commit": map[string]any{"version": version, "timestamp": 1700000000000 + version,
			"file-name": fmt.Sprintf("%020d.json", version), "file-size": 100, "file-modification-timestamp": 1700000000000},
		"uniform": map[string]any{"iceberg": map[string]any{"metadata-location": metadataLocation, "converted-delta-version": version}},
	}
}

// updateTable sends a Delta update asserting the table's uuid.
func updateTable(t *testing.T, url, uuid string, updates ...any) (int, map[string]any) {
	t.Helper()
	return call(t, http.MethodPost, url, map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates":      updates,
	})
}

func errType(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func uniformLocation(out map[string]any) string {
	u, _ := out["uniform"].(map[string]any)
	ice, _ := u["iceberg"].(map[string]any)
	s, _ := ice["metadata-location"].(string)
	return s
}

func previousFiles(m table.Metadata) []string {
	var out []string
	for e := range m.PreviousFiles() {
		out = append(out, e.MetadataFile)
	}
	return out
}

// set-partition-columns is allowed only while the table is empty: after an
// iceberg-go append it is 400 InvalidParameterValueException, nothing in
// the same update is applied, and the Iceberg partitioning is unchanged.
func TestDeltaSetPartitionColumnsRefusedWithData(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	// MANAGED: the Iceberg append below is refused on an EXTERNAL table.
	code, created := createEvents(t, base, dir, "events", map[string]any{"table-type": "MANAGED"})
	require.Equal(t, http.StatusOK, code, "%v", created)
	uuid := meta(created)["table-uuid"].(string)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/events"

	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	tbl = appendEvents(t, tbl, 0, 10)
	require.NotNil(t, tbl.CurrentSnapshot())
	specsBefore := len(tbl.Metadata().PartitionSpecs())
	specIDBefore := tbl.Metadata().DefaultPartitionSpec()
	locBefore := tbl.MetadataLocation()

	code, loaded := call(t, http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	assert.Equal(t, float64(0), loaded["latest-table-version"],
		"an Iceberg append is no Delta commit: latest-table-version follows ratified commits")
	assert.Empty(t, meta(loaded)["partition-columns"])

	code, out := updateTable(t, url, uuid,
		map[string]any{"action": "set-partition-columns", "partition-columns": []string{"msg"}},
		map[string]any{"action": "set-properties", "updates": map[string]string{"written.by": "delta"}})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "InvalidParameterValueException", errType(out))
	assert.Contains(t, errMessage(out), "already has data")

	tbl, err = ice.LoadTable(ctx, table.Identifier{"sales", "events"})
	require.NoError(t, err)
	assert.Equal(t, locBefore, tbl.MetadataLocation(), "a refused update commits nothing")
	assert.Len(t, tbl.Metadata().PartitionSpecs(), specsBefore)
	assert.Equal(t, specIDBefore, tbl.Metadata().DefaultPartitionSpec())
	assert.True(t, tbl.Spec().IsUnpartitioned())
	assert.NotContains(t, tbl.Properties(), "written.by")
	code, loaded = call(t, http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	assert.Empty(t, meta(loaded)["partition-columns"])

	// Setting the partition columns the table already has (none) is
	// refused too: the rule is about data, not about what changes.
	code, out = updateTable(t, url, uuid, map[string]any{"action": "set-partition-columns", "partition-columns": []string{}})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "InvalidParameterValueException", errType(out))
}

// add-commit with uniform.iceberg.metadata-location moves the table to the
// UniForm engine's metadata file (register with overwrite), only when that
// file descends from the current one and keeps the table uuid.
func TestDeltaUniformAddCommit(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	ident := table.Identifier{"sales", "events"}
	// add-commit is how a MANAGED (catalog-managed) table commits.
	code, created := createEvents(t, base, dir, "events", map[string]any{"table-type": "MANAGED"})
	require.Equal(t, http.StatusOK, code, "%v", created)
	uuid := meta(created)["table-uuid"].(string)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/events"

	// M1 is the create's metadata file. Created without UniForm metadata,
	// the table is no UniForm table until an add-commit brings some.
	tbl, err := ice.LoadTable(ctx, ident)
	require.NoError(t, err)
	m1 := tbl.MetadataLocation()
	assert.Nil(t, created["uniform"])
	// M2: an iceberg-go append, whose metadata log names M1.
	tbl = appendEvents(t, tbl, 0, 5)
	m2 := tbl.MetadataLocation()
	require.NotEqual(t, m1, m2)
	require.Contains(t, previousFiles(tbl.Metadata()), m1)

	current := func() *table.Table {
		t.Helper()
		tbl, err := ice.LoadTable(ctx, ident)
		require.NoError(t, err)
		return tbl
	}

	// The catalog is already at M2: add-commit ratifies version 1 there
	// (the table stays at M2's data; lakegate records the version on top).
	code, loaded := call(t, http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	assert.Equal(t, float64(0), loaded["latest-table-version"])
	etag2 := meta(loaded)["etag"]
	code, out := call(t, http.MethodPost, url, map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}, map[string]any{"type": "assert-etag", "etag": etag2}},
		"updates":      []any{addCommit(1, m2)},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, float64(1), out["latest-table-version"])
	ratified := current()
	assert.Equal(t, uniformLocation(out), ratified.MetadataLocation())
	// delta-spark refuses a uniform without the converted version and time
	ui := out["uniform"].(map[string]any)["iceberg"].(map[string]any)
	assert.EqualValues(t, 1, ui["converted-delta-version"])
	assert.EqualValues(t, 1700000000001, ui["converted-delta-timestamp"])
	assert.Contains(t, previousFiles(ratified.Metadata()), m2)
	assert.Equal(t, tbl.CurrentSnapshot().SnapshotID, ratified.CurrentSnapshot().SnapshotID)
	// A retry of that commit is a no-op; any other version than the next
	// one is a conflict: versions never go back or skip.
	code, again := updateTable(t, url, uuid, addCommit(1, m2))
	require.Equal(t, http.StatusOK, code, "%v", again)
	assert.Equal(t, meta(out)["etag"], meta(again)["etag"], "a retry changes nothing")
	for _, v := range []int64{0, 1, 3} {
		code, bad := updateTable(t, url, uuid, addCommit(v, m1))
		assert.Equal(t, http.StatusConflict, code, "version %d: %v", v, bad)
		assert.Equal(t, "CommitVersionConflictException", errType(bad))
	}
	// A data-only commit moves latest-table-version, not the last metadata
	// commit (delta.lastUpdateVersion), which is still the create's.
	assert.Equal(t, "0", meta(again)["properties"].(map[string]any)["delta.lastUpdateVersion"], "a data-only commit is no metadata commit")
	assert.Equal(t, float64(0), meta(again)["last-commit-version"])
	// The ratified commit is unbackfilled until the client says it published it.
	commits := again["commits"].([]any)
	require.Len(t, commits, 1, "%v", again)
	assert.EqualValues(t, 1, commits[0].(map[string]any)["version"])
	assert.NotEmpty(t, commits[0].(map[string]any)["file-name"])
	code, bad := updateTable(t, url, uuid, map[string]any{"action": "set-latest-backfilled-version", "latest-published-version": 2})
	assert.Equal(t, http.StatusBadRequest, code, "past the latest ratified version: %v", bad)
	code, published := updateTable(t, url, uuid, map[string]any{"action": "set-latest-backfilled-version", "latest-published-version": 1})
	require.Equal(t, http.StatusOK, code, "%v", published)
	assert.Empty(t, published["commits"])
	assert.Equal(t, float64(1), published["latest-table-version"], "backfilling moves no version")
	code, bad = updateTable(t, url, uuid, map[string]any{"action": "update-metadata-snapshot-version",
		"last-commit-version": 1, "last-commit-timestamp-ms": 1700000000001})
	assert.Equal(t, http.StatusBadRequest, code, "external tables only: %v", bad)
	assert.Contains(t, errMessage(bad), "is for EXTERNAL tables")
	m2 = current().MetadataLocation()

	// M1 has the uuid but does not descend from M2 (a rollback): 409, and
	// the table is moved back to M2.
	code, out = updateTable(t, url, uuid, addCommit(2, m1))
	assert.Equal(t, http.StatusConflict, code, "%v", out)
	assert.Equal(t, "CommitVersionConflictException", errType(out))
	assert.Contains(t, errMessage(out), "does not descend")
	assert.Equal(t, m2, current().MetadataLocation())

	// Another table's metadata (another uuid): 409, the table stays at M2
	// and the other table is untouched.
	code, other := createEvents(t, base, dir, "other", nil)
	require.Equal(t, http.StatusOK, code, "%v", other)
	assert.Nil(t, other["uniform"], "a table created without UniForm metadata is no UniForm table")
	otherBefore, err := ice.LoadTable(ctx, table.Identifier{"sales", "other"})
	require.NoError(t, err)
	otherLoc := otherBefore.MetadataLocation()
	code, out = updateTable(t, url, uuid, addCommit(2, otherLoc))
	assert.Equal(t, http.StatusConflict, code, "%v", out)
	assert.Equal(t, "CommitVersionConflictException", errType(out))
	assert.Contains(t, errMessage(out), "another table")
	after := current()
	assert.Equal(t, m2, after.MetadataLocation())
	assert.Equal(t, uuid, after.Metadata().TableUUID().String())
	otherTbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "other"})
	require.NoError(t, err)
	assert.Equal(t, otherLoc, otherTbl.MetadataLocation())
	assert.Equal(t, meta(other)["table-uuid"], otherTbl.Metadata().TableUUID().String())

	// A metadata file that does not exist: 400 naming the file, nothing moves.
	missing := "file://" + filepath.Join(dir, "events", "metadata", "99999-missing.metadata.json")
	code, out = updateTable(t, url, uuid, addCommit(2, missing))
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Contains(t, errMessage(out), "99999-missing.metadata.json")
	assert.Equal(t, m2, current().MetadataLocation())
	// A file that is not table metadata: 400 as well.
	junk := filepath.Join(dir, "junk.metadata.json")
	require.NoError(t, os.WriteFile(junk, []byte(`{"not":"metadata"}`), 0o644))
	code, out = updateTable(t, url, uuid, addCommit(2, "file://"+junk))
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, m2, current().MetadataLocation())

	// A successor the catalog has not seen: an engine wrote M3 (here an
	// iceberg-go append, after which the catalog is put back at M2 through
	// Iceberg's register with overwrite), and add-commit moves the table to
	// it; the other updates of the request are committed on top of M3.
	tbl = appendEvents(t, current(), 5, 8)
	m3 := tbl.MetadataLocation()
	snap3 := tbl.CurrentSnapshot().SnapshotID
	registerBack(t, base, "events", m2)
	require.Equal(t, m2, current().MetadataLocation())
	code, out = updateTable(t, url, uuid, addCommit(2, m3),
		map[string]any{"action": "set-properties", "updates": map[string]string{"uniform.converted": "2"}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	after = current()
	assert.Equal(t, uniformLocation(out), after.MetadataLocation())
	assert.Contains(t, previousFiles(after.Metadata()), m3, "the property commit is on top of M3")
	assert.Equal(t, snap3, after.CurrentSnapshot().SnapshotID)
	assert.Equal(t, "2", after.Properties()["uniform.converted"])
	assert.Equal(t, float64(2), out["latest-table-version"])
	assert.Equal(t, "2", meta(out)["properties"].(map[string]any)["delta.lastUpdateVersion"], "a commit that sets properties changes metadata")
	assert.Equal(t, float64(2), meta(out)["last-commit-version"])
	assert.Len(t, embeddedtest.ScanAll(t, after), 8)

	// A move followed by an update that is refused undoes the move: the
	// client was told the commit failed, so the table must not be at M4.
	m4tbl := appendEvents(t, after, 8, 9)
	m4 := m4tbl.MetadataLocation()
	registerBack(t, base, "events", after.MetadataLocation())
	code, out = updateTable(t, url, uuid, addCommit(3, m4),
		map[string]any{"action": "set-partition-columns", "partition-columns": []string{"msg"}})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "InvalidParameterValueException", errType(out))
	assert.Equal(t, after.MetadataLocation(), current().MetadataLocation())

	// So does a move whose ratifying commit the catalog refuses (here a
	// data path outside the warehouse, which the embedded catalog refuses
	// when committed).
	code, out = updateTable(t, url, uuid, addCommit(3, m4),
		map[string]any{"action": "set-properties", "updates": map[string]string{"write.data.path": "file:///elsewhere/data"}})
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, after.MetadataLocation(), current().MetadataLocation(), "the move was undone")
}

// registerBack puts sales.<name> at metadata file loc through the
// gateway's Iceberg registerTable with overwrite.
func registerBack(t *testing.T, base, name, loc string) {
	t.Helper()
	code, out := call(t, http.MethodPost, base+"/v1/lake/namespaces/sales/register",
		map[string]any{"name": name, "metadata-location": loc, "overwrite": true})
	require.Equal(t, http.StatusOK, code, "%v", out)
}

// createTable with uniform.iceberg.metadata-location registers the
// Iceberg metadata the engine wrote: the table has that metadata's uuid,
// schema and snapshot, plus the Delta properties of the request.
func TestDeltaCreateUniform(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	// The engine's Iceberg metadata: a table written with iceberg-go (in
	// another schema: one schema's tables may not share a location).
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"engine"}, nil))
	src, err := ice.CreateTable(ctx, table.Identifier{"engine", "engine"}, embeddedtest.EventSchema,
		catalog.WithLocation("file://"+filepath.Join(dir, "engine")))
	require.NoError(t, err)
	src = appendEvents(t, src, 0, 4)
	srcLoc := src.MetadataLocation()

	code, out := createEvents(t, base, dir, "uni", map[string]any{
		"location": src.Location(), "comment": "uniform table",
		"uniform": map[string]any{"iceberg": map[string]any{"metadata-location": srcLoc, "converted-delta-version": 1}},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	m := meta(out)
	assert.Equal(t, src.Metadata().TableUUID().String(), m["table-uuid"])
	cols, _ := json.Marshal(m["columns"])
	assert.JSONEq(t, eventsColumns, string(cols))
	assert.Equal(t, "EXTERNAL", m["table-type"])
	assert.Equal(t, "false", m["properties"].(map[string]any)["delta.appendOnly"])
	assert.Equal(t, float64(1), out["latest-table-version"])

	tbl, err := ice.LoadTable(ctx, table.Identifier{"sales", "uni"})
	require.NoError(t, err)
	assert.True(t, tbl.Schema().Equals(src.Schema()), "%s vs %s", tbl.Schema(), src.Schema())
	assert.Equal(t, src.Metadata().TableUUID(), tbl.Metadata().TableUUID())
	assert.Equal(t, src.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().SnapshotID)
	assert.Equal(t, src.Location(), tbl.Location())
	assert.Contains(t, previousFiles(tbl.Metadata()), srcLoc, "registered at the engine's file, then the properties commit")
	assert.Equal(t, uniformLocation(out), tbl.MetadataLocation())
	assert.Equal(t, "false", tbl.Properties()["delta.appendOnly"])
	assert.Equal(t, "uniform table", tbl.Properties()["comment"])
	assert.Len(t, embeddedtest.ScanAll(t, tbl), 4)

	// Loading it through Delta answers the same.
	code, loaded := call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/uni", nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	cols, _ = json.Marshal(meta(loaded)["columns"])
	assert.JSONEq(t, eventsColumns, string(cols))
	assert.Equal(t, m["etag"], meta(loaded)["etag"])

	// A missing metadata file creates nothing.
	missing := "file://" + filepath.Join(dir, "nowhere", "metadata", "00000-x.metadata.json")
	code, out = createEvents(t, base, dir, "ghost", map[string]any{
		"uniform": map[string]any{"iceberg": map[string]any{"metadata-location": missing}},
	})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Contains(t, errMessage(out), "00000-x.metadata.json")
	ok, err := ice.CheckTableExists(ctx, table.Identifier{"sales", "ghost"})
	require.NoError(t, err)
	assert.False(t, ok)
	// uniform without a metadata-location is a validation error.
	code, out = createEvents(t, base, dir, "ghost", map[string]any{"uniform": map[string]any{"iceberg": map[string]any{}}})
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "InvalidParameterValueException", errType(out))
	// A name that is taken: 409 AlreadyExistsException, the table untouched.
	code, out = createEvents(t, base, dir, "uni", map[string]any{
		"uniform": map[string]any{"iceberg": map[string]any{"metadata-location": srcLoc}},
	})
	assert.Equal(t, http.StatusConflict, code, "%v", out)
	assert.Equal(t, "AlreadyExistsException", errType(out))
	again, err := ice.LoadTable(ctx, table.Identifier{"sales", "uni"})
	require.NoError(t, err)
	assert.Equal(t, tbl.MetadataLocation(), again.MetadataLocation())
}

// denyUpdateTable is a policy allowing everything except Iceberg's
// updateTable operation.
// testPolicy writes one Rego module to a fresh policy directory and
// returns the app's `policy` config for it (the package its first line
// names).
func testPolicy(t *testing.T, rego string) map[string]any {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test.rego"), []byte(rego), 0o644))
	pkg := strings.TrimPrefix(strings.SplitN(rego, "\n", 2)[0], "package ")
	return map[string]any{"dir": dir, "package": pkg}
}

const denyUpdateTable = `package lakegate.noupdate

decision := {"allow": false, "reason": "updateTable is denied by the test policy"} if {
	input.operation == "updateTable"
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// READ_WRITE credentials need updateTable: a policy that denies it answers
// 403 PermissionDeniedException, while READ credentials are still vended.
func TestDeltaReadWriteCredentialsNeedUpdateTable(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGatewayWith(t, map[string]any{"policy": testPolicy(t, denyUpdateTable)})
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	code, created := createEvents(t, base, dir, "events", nil)
	require.Equal(t, http.StatusOK, code, "%v", created)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/events"

	code, out := call(t, http.MethodGet, url+"/credentials?operation=READ", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.NotNil(t, out["storage-credentials"])

	code, out = call(t, http.MethodGet, url+"/credentials?operation=READ_WRITE", nil)
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "PermissionDeniedException", errType(out))
	assert.True(t, strings.HasPrefix(errMessage(out), "getTableCredentials: "), errMessage(out))
	assert.Contains(t, errMessage(out), "updateTable is denied by the test policy")

	// The same policy refuses a Delta update, as updateTable.
	code, out = updateTable(t, url, meta(created)["table-uuid"].(string),
		map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}})
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "PermissionDeniedException", errType(out))
	assert.Contains(t, errMessage(out), "updateTable: ")
}

// The Delta-only parts of the columns (narrow integer types, column
// metadata) are kept by the field ids of the registered metadata, which
// need not be the ids a fresh schema would get: here a dropped column
// leaves a gap, so "n" is field 3 and "msg" field 4.
func TestDeltaCreateUniformColumnExtras(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"engine"}, nil))
	src, err := ice.CreateTable(ctx, table.Identifier{"engine", "engine"}, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "gone", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 4, Name: "msg", Type: iceberg.PrimitiveTypes.String},
	), catalog.WithLocation("file://"+filepath.Join(dir, "engine")))
	require.NoError(t, err)
	tx := src.NewTransaction()
	require.NoError(t, tx.UpdateSchema(true, false).DeleteColumn([]string{"gone"}).Commit())
	src, err = tx.Commit(ctx)
	require.NoError(t, err)
	n, _ := src.Schema().FindFieldByName("n")
	require.Equal(t, 3, n.ID)

	const cols = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":false,"metadata":{}},
 {"name":"n","type":"short","nullable":true,"metadata":{}},
 {"name":"msg","type":"string","nullable":true,"metadata":{"delta.generationExpression":"'x'"}}
]}`
	code, out := createEvents(t, base, dir, "uni", map[string]any{
		"location": src.Location(), "columns": json.RawMessage(cols),
		"uniform": map[string]any{"iceberg": map[string]any{"metadata-location": src.MetadataLocation()}},
	})
	require.Equal(t, http.StatusOK, code, "%v", out)
	got, _ := json.Marshal(meta(out)["columns"])
	assert.JSONEq(t, cols, string(got))
	code, loaded := call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/uni", nil)
	require.Equal(t, http.StatusOK, code, "%v", loaded)
	got, _ = json.Marshal(meta(loaded)["columns"])
	assert.JSONEq(t, cols, string(got))
}

// A plain Iceberg table (created through Iceberg, no Delta side) is not
// served as a Delta table: UnsupportedTableFormatException, as the spec
// tells clients to fall back to the UC API on; tableExists and deleteTable,
// for which the spec lists no 400, say 404. Rename and drop leave it in
// place.
func TestDeltaRefusesPlainIcebergTables(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	ice := gatewayClient(t, base, "lake")
	require.NoError(t, ice.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	plain, err := ice.CreateTable(ctx, table.Identifier{"sales", "plain"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/plain"
	for name, req := range map[string]func() (int, map[string]any){
		"load":        func() (int, map[string]any) { return call(t, http.MethodGet, url, nil) },
		"credentials": func() (int, map[string]any) { return call(t, http.MethodGet, url+"/credentials?operation=READ", nil) },
		"update": func() (int, map[string]any) {
			return updateTable(t, url, plain.Metadata().TableUUID().String(),
				map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}})
		},
		"rename": func() (int, map[string]any) {
			return call(t, http.MethodPost, url+"/rename", map[string]any{"new-name": "moved"})
		},
		"metrics": func() (int, map[string]any) {
			return call(t, http.MethodPost, url+"/metrics", map[string]any{"table-id": plain.Metadata().TableUUID().String(),
				"report": map[string]any{"commit-report": map[string]any{"num-files-added": 1}}})
		},
	} {
		code, out := req()
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", name, out)
		assert.Equal(t, "UnsupportedTableFormatException", errType(out), name)
	}
	code, out := call(t, http.MethodDelete, url, nil)
	assert.Equal(t, http.StatusNotFound, code, "no Delta table of that name: %v", out)
	assert.Equal(t, "NoSuchTableException", errType(out))
	assert.Contains(t, errMessage(out), "an Iceberg table without a Delta log")
	code, _ = call(t, http.MethodHead, url, nil)
	assert.Equal(t, http.StatusNotFound, code, "no Delta table of that name")
	after, err := ice.LoadTable(ctx, table.Identifier{"sales", "plain"})
	require.NoError(t, err, "neither renamed nor dropped")
	assert.NotContains(t, after.Properties(), "k", "the refused update did not reach the table")
	exists, err := ice.CheckTableExists(ctx, table.Identifier{"sales", "moved"})
	require.NoError(t, err)
	assert.False(t, exists)

	// A Delta table of the same schema still answers all three.
	code, _ = createEvents(t, base, dir, "events", nil)
	require.Equal(t, http.StatusOK, code)
	events := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/events"
	code, _ = call(t, http.MethodHead, events, nil)
	assert.Equal(t, http.StatusNoContent, code)
	code, out = call(t, http.MethodPost, events+"/rename", map[string]any{"new-name": "renamed"})
	require.Equal(t, http.StatusNoContent, code, "%v", out)
	code, out = call(t, http.MethodDelete, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/renamed", nil)
	assert.Equal(t, http.StatusNoContent, code, "%v", out)
}

// A create's location must be absolute, inside the catalog's allowed
// locations, and apart from every other table of the schema.
func TestDeltaCreateLocations(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	code, out := createEvents(t, base, dir, "events", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	for _, tc := range []struct {
		name, location string
		code           int
		typ, message   string
	}{
		{"relative", "events2", 400, "InvalidParameterValueException", `location "events2" is not an absolute storage location: a relative location`},
		{"dot segments", "file://" + dir + "/x/../events", 400, "InvalidParameterValueException", `location "file://` + dir + `/x/../events" is not an absolute storage location: a location with . or .. segments`},
		{"inside another table", "file://" + filepath.Join(dir, "events", "sub"), 400, "InvalidParameterValueException",
			`location "file://` + filepath.Join(dir, "events", "sub") + `" overlaps table sales.events at "file://` + filepath.Join(dir, "events") + `"`},
		{"around another table", "file://" + dir, 400, "InvalidParameterValueException",
			`location "file://` + dir + `" overlaps table sales.events at "file://` + filepath.Join(dir, "events") + `"`},
		{"outside the warehouse", "file:///elsewhere/t", 403, "PermissionDeniedException", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := createEvents(t, base, dir, "other", map[string]any{"location": tc.location})
			require.Equal(t, tc.code, code, "%v", out)
			e := out["error"].(map[string]any)
			assert.Equal(t, tc.typ, e["type"])
			if tc.message != "" {
				assert.Equal(t, tc.message, e["message"])
			}
		})
	}
	code, out = createEvents(t, base, dir, "other", map[string]any{"location": "file://" + filepath.Join(dir, "events2")})
	assert.Equal(t, http.StatusOK, code, "a sibling location is fine: %v", out)
}

// An EXTERNAL table commits to its own Delta log and reports each version
// with update-metadata-snapshot-version, which may skip ahead but never go
// back; add-commit is for MANAGED tables only.
func TestDeltaExternalSnapshotVersion(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGateway(t)
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	code, created := createEvents(t, base, dir, "ext", nil)
	require.Equal(t, http.StatusOK, code, "%v", created)
	uuid := meta(created)["table-uuid"].(string)
	url := base + deltaAPI + "/catalogs/lake/schemas/sales/tables/ext"
	snap := func(v int64) (int, map[string]any) {
		return updateTable(t, url, uuid, map[string]any{"action": "update-metadata-snapshot-version",
			"last-commit-version": v, "last-commit-timestamp-ms": 1700000000000 + v})
	}
	code, out := snap(5)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, float64(5), out["latest-table-version"])
	assert.Equal(t, "5", meta(out)["properties"].(map[string]any)["delta.lastUpdateVersion"])
	code, out = snap(5)
	assert.Equal(t, http.StatusOK, code, "the same version again: %v", out)
	code, out = snap(4)
	assert.Equal(t, http.StatusConflict, code, "backwards: %v", out)
	assert.Contains(t, errMessage(out), "never go back")
	code, out = updateTable(t, url, uuid, addCommit(6, uniformLocation(created)))
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Contains(t, errMessage(out), "add-commit is for MANAGED tables")
}

const denySecretTables = `package lakegate.nosecret

decision := {"allow": false, "reason": "secret tables are denied"} if {
	input.resource.table == "secret"
} else := {"allow": true, "reason": "allowed"}

visible contains i if some i, _ in input.items
`

// The policy decides on the name the operation uses, and there is only
// one: a body naming "allowed" under one spelling and "secret" under
// another (which encoding/json would decode as "secret") is refused as
// ambiguous before the policy is asked, and nothing is created or renamed.
func TestDeltaPolicySeesTheParsedName(t *testing.T) {
	ctx := context.Background()
	base, dir := deltaGatewayWith(t, map[string]any{"policy": testPolicy(t, denySecretTables)})
	require.NoError(t, gatewayClient(t, base, "lake").CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tables := base + deltaAPI + "/catalogs/lake/schemas/sales/tables"
	ambiguous := func(code int, out map[string]any, key string) {
		t.Helper()
		assert.Equal(t, http.StatusBadRequest, code, "%v", out)
		assert.Contains(t, errMessage(out), `key "`+key+`" is a case variant`)
	}

	body := fmt.Sprintf(`{"name":"allowed","NAME":"secret","location":"file://%s/secret","table-type":"EXTERNAL",
		"columns":%s,"protocol":{"min-reader-version":1,"min-writer-version":2},"properties":{},"last-commit-timestamp-ms":1}`,
		dir, eventsColumns)
	code, out := callRaw(t, http.MethodPost, tables, body)
	ambiguous(code, out, "NAME")
	code, out = callRaw(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/staging-tables", `{"name":"ok","Name":"secret"}`)
	ambiguous(code, out, "Name")
	code, out = callRaw(t, http.MethodPost, base+deltaAPI+"/catalogs/lake/schemas/sales/staging-tables", `{"name":"secret"}`)
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "createStagingTable: secret tables are denied", errMessage(out))

	code, created := createEvents(t, base, dir, "events", nil)
	require.Equal(t, http.StatusOK, code, "%v", created)
	code, out = callRaw(t, http.MethodPost, tables+"/events/rename", `{"new-name":"fine","New-Name":"secret"}`)
	ambiguous(code, out, "New-Name")
	code, _ = call(t, http.MethodHead, tables+"/events", nil)
	assert.Equal(t, http.StatusNoContent, code, "the refused rename left the table in place")
}

// callRaw sends a raw JSON body.
func callRaw(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
