package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// registerExternal registers sales.<name> at loc through UC's createTable
// as UC's Spark connector and delta-rs users do: EXTERNAL, a location, no
// columns.
func registerExternal(t *testing.T, base, name, loc string) (int, map[string]any) {
	t.Helper()
	return ucCall(t, http.MethodPost, base+unityAPI+"/tables", "", map[string]any{
		"name": name, "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": "file://" + loc, "columns": []any{}})
}

// columnNames are a UC TableInfo's column names, in order.
func columnNames(info map[string]any) []string {
	var out []string
	cols, _ := info["columns"].([]any)
	for _, c := range cols {
		out = append(out, c.(map[string]any)["name"].(string))
	}
	return out
}

// Finding 2 of issue 37: a table registered without columns over a log
// that already has commits answers the log's columns at once, on the
// create itself, UC's getTable and listTables and the Delta API's load,
// with no Iceberg reader in between; a later schema-merge append shows on
// getTable the same way. A log lakegate cannot show is refused at
// registration, and the table is not left behind.
func TestRegisteredDeltaLogIsReadAtOnce(t *testing.T) {
	base, dir := deltaGateway(t)
	code, out := createSchema(t, base, "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	loc := filepath.Join(dir, "events")
	a := writeIDs(t, loc, "region=eu/part-a.parquet", 1, 2)
	logCommit(t, loc, 0, protocolLine, metaLine(idRegion), addLine(a, "eu", 2))

	code, out = registerExternal(t, base, "events", loc)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"id", "region"}, columnNames(out), "the create's own answer")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.events", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"id", "region"}, columnNames(out), "getTable")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables?catalog_name=lake&schema_name=sales", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Len(t, out["tables"], 1)
	assert.Equal(t, []string{"id", "region"}, columnNames(out["tables"].([]any)[0].(map[string]any)), "listTables")
	code, out = call(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/events", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, meta(out)["columns"].(map[string]any)["fields"], 2, "the Delta API's load")
	assert.Equal(t, []any{"region"}, meta(out)["partition-columns"])

	// A schema-merge append (a new column in the log): UC's readers see it.
	c := writeIDs(t, loc, "region=us/part-c.parquet", 3)
	logCommit(t, loc, 1, metaLine(idRegionScore), addLine(c, "us", 1))
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.events", "", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []string{"id", "region", "score"}, columnNames(out), "getTable after the merge")

	// A log with a deletion vector cannot be shown as Iceberg: refused,
	// and no table is left registered.
	bad := filepath.Join(dir, "bad")
	d := writeIDs(t, bad, "region=eu/part-d.parquet", 9)
	logCommit(t, bad, 0, protocolLine, metaLine(idRegion), `{"add":{"path":"`+d+`","partitionValues":{"region":"eu"},"size":10,`+
		`"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1}","deletionVector":{"storageType":"u",`+
		`"pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":1}}}`)
	code, out = registerExternal(t, base, "bad", bad)
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "INVALID_ARGUMENT", out["error_code"], "%v", out)
	assert.Contains(t, out["message"], "deletion vector")
	code, out = ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.bad", "", nil)
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
}

// sharedCatalog is one catalog "lake" as two replicas share it: on
// PostgreSQL (LAKEGATE_TEST_POSTGRES) each replica runs the embedded
// catalog on the one database, as in production; else one embedded
// catalog on SQLite is both replicas' remote backend. dir is where the
// tables live (an allowed location).
func sharedCatalog(t *testing.T, dir string) map[string]any {
	t.Helper()
	if dsn := os.Getenv("LAKEGATE_TEST_POSTGRES"); dsn != "" {
		// A literal password is refused in the config: the replicas read
		// the DSN from their environment.
		t.Setenv("LAKEGATE_LOGSYNC_TEST_DSN", dsn)
		cfg := embeddedtest.Config(t, embedded.Postgres)
		return map[string]any{"name": "lake", "allowed_locations": []string{dir}, "embedded": map[string]any{
			"name": cfg.Name, "database": embedded.Postgres, "dsn": "{env.LAKEGATE_LOGSYNC_TEST_DSN}", "warehouse": cfg.Warehouse}}
	}
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.AllowedLocations = []string{dir}
	return remote("lake", embeddedtest.Serve(t, cfg).URL, nil)
}

// Finding 3 of issue 37, the freshness promise: two replicas (separate
// processes) on one shared catalog and one Redis (LAKEGATE_TEST_REDIS,
// else a miniredis in this process), an engine committing to an EXTERNAL
// table's log, and right after each commit 4 concurrent loads on each
// replica: every load answers the version just committed. 100 rounds, 800
// loads; no sleeps.
func TestExternalLoadsSeeTheLatestLogVersionOnTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lakegate binary and runs two replicas")
	}
	dir := t.TempDir()
	app := map[string]any{"redis": redistest.URL(t), "catalogs": []any{sharedCatalog(t, dir)}}
	handlers := []any{map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}}
	var replicas []string
	for range 2 {
		addr := freeAddr(t)
		replicas = append(replicas, runReplica(t, addr, caddyJSONHandlers(t, addr, app, handlers...)))
	}
	code, out := createSchema(t, replicas[0], "", map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	loc := filepath.Join(dir, "events")
	logCommit(t, loc, 0, protocolLine, metaLine(idRegion), addLine(writeIDs(t, loc, "region=eu/part-0.parquet", 0), "eu", 1))
	code, out = registerExternal(t, replicas[1], "events", loc)
	require.Equal(t, http.StatusOK, code, "%v", out)

	const rounds, perReplica = 100, 4
	stale := make([]int, len(replicas))
	loads := 0
	for v := int64(1); v <= rounds; v++ {
		f := writeIDs(t, loc, fmt.Sprintf("region=eu/part-%d.parquet", v), v)
		logCommit(t, loc, v, addLine(f, "eu", 1))
		seen := make([][]string, len(replicas))
		var wg sync.WaitGroup
		for i, base := range replicas {
			seen[i] = make([]string, perReplica)
			for j := range perReplica {
				wg.Add(1)
				go func() {
					defer wg.Done()
					seen[i][j] = syncedVersion(base + "/v1/lake/namespaces/sales/tables/events")
				}()
			}
		}
		wg.Wait()
		for i := range replicas {
			for _, got := range seen[i] {
				loads++
				if got != strconv.FormatInt(v, 10) {
					stale[i]++
					t.Logf("round %d, replica %d: served %s", v, i, got)
				}
			}
		}
	}
	assert.Equal(t, []int{0, 0}, stale, "loads (of %d per replica) that served an older version than the log's latest", loads/2)
	t.Logf("%d loads, %d of them stale", loads, stale[0]+stale[1])
}

// syncedVersion loads a table through the Iceberg door and returns the
// log version it shows, or what went wrong.
func syncedVersion(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out struct {
		Metadata struct {
			Properties map[string]string `json:"properties"`
		} `json:"metadata"`
	}
	if resp.StatusCode != http.StatusOK {
		return resp.Status
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return err.Error()
	}
	return out.Metadata.Properties["lakegate.delta.synced-version"]
}
