package embedded_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// Commit shapes of engines from the registries, as they send them (issue
// 38): each is one the spec allows, and the embedded catalog must take it.
func TestEngineCommitShapes(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)

	t.Run("duckdb create: specs and sort order before set-current-schema", func(t *testing.T) {
		var staged struct {
			Metadata struct {
				Location string `json:"location"`
			} `json:"metadata"`
		}
		b := c.post(t, "/v1/{p}/namespaces/ns/tables", `{"name":"duck","stage-create":true,"schema":`+badInputSchema+`}`)
		require.NoError(t, json.Unmarshal(b, &staged))
		updates := strings.Join([]string{
			`{"action":"assign-uuid","uuid":"4e6b3c2a-1f0d-4c7e-9a8b-0d1e2f3a4b5c"}`,
			`{"action":"upgrade-format-version","format-version":2}`,
			`{"action":"add-schema","schema":` + badInputSchema + `,"last-column-id":1}`,
			`{"action":"add-spec","spec":{"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"id_b","transform":"bucket[4]"}]}}`,
			`{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}`,
			`{"action":"set-current-schema","schema-id":-1}`,
			`{"action":"set-default-spec","spec-id":-1}`,
			`{"action":"set-default-sort-order","sort-order-id":-1}`,
			`{"action":"set-location","location":"` + staged.Metadata.Location + `"}`,
		}, ",")
		c.post(t, "/v1/{p}/namespaces/ns/tables/duck", commitBody("duck", `{"type":"assert-create"}`, updates))
		rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/duck", nil)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
		var got struct {
			Metadata struct {
				TableUUID       string `json:"table-uuid"`
				CurrentSchemaID int    `json:"current-schema-id"`
				DefaultSpecID   int    `json:"default-spec-id"`
				DefaultOrderID  int    `json:"default-sort-order-id"`
				PartitionSpecs  []struct {
					Fields []struct {
						Transform string `json:"transform"`
					} `json:"fields"`
				} `json:"partition-specs"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(b, &got))
		m := got.Metadata
		require.Equal(t, "4e6b3c2a-1f0d-4c7e-9a8b-0d1e2f3a4b5c", m.TableUUID)
		require.Equal(t, 1, m.DefaultOrderID, "the sort order is the default")
		require.Len(t, m.PartitionSpecs, 1)
		require.Equal(t, "bucket[4]", m.PartitionSpecs[0].Fields[0].Transform)
	})

	t.Run("clickhouse first snapshot: assert-ref-snapshot-id without snapshot-id", func(t *testing.T) {
		c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("click"))
		loc := c.metadataLocation(t, "click")
		base := loc[:strings.LastIndex(loc, "/")]
		snap := `{"action":"add-snapshot","snapshot":{"snapshot-id":7001,"parent-snapshot-id":-1,"sequence-number":1,` +
			`"timestamp-ms":` + strconv.FormatInt(time.Now().UnixMilli()+1000, 10) + `,"manifest-list":"` + base + `/snap-7001.avro","summary":{"operation":"append"},"schema-id":0}}`
		ref := `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":7001}`
		noID := `{"type":"assert-ref-snapshot-id","ref":"main"}`
		c.post(t, "/v1/{p}/namespaces/ns/tables/click", commitBody("", noID, snap+","+ref))
		require.NotEqual(t, loc, c.metadataLocation(t, "click"))

		// Missing means "the ref must not exist": now that main exists,
		// the same requirement fails as a conflict, as with null.
		for _, req := range []string{noID, `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}`} {
			rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/tables/click",
				strings.NewReader(commitBody("", req, setProps)))
			require.Equal(t, http.StatusConflict, rsp.StatusCode, "%s", b)
		}
		// ...and a missing ref is still refused.
		rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/tables/click",
			strings.NewReader(commitBody("", `{"type":"assert-ref-snapshot-id","snapshot-id":1}`, setProps)))
		require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s", b)
	})
}

// Locations without a scheme are stored as file: URIs (ClickHouse cannot
// use a table stored at /tmp/...), Trino's local:// is file:, and a commit
// that sets a location without a scheme is refused, not rewritten.
func TestLocationsGetASchemes(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("probe"))
	probe := c.metadataLocation(t, "probe") // file:///<warehouse>/ns.db/probe/metadata/...
	warehouse := strings.TrimPrefix(probe[:strings.Index(probe, "/ns.db/")], "file://")

	location := func(table string) string {
		rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/"+table, nil)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
		var m struct {
			Metadata struct{ Location string } `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(b, &m))
		return m.Metadata.Location
	}
	withLocation := func(name, loc string) string {
		return `{"name":"` + name + `","location":"` + loc + `","schema":` + badInputSchema + `}`
	}
	c.post(t, "/v1/{p}/namespaces/ns/tables", withLocation("plain", warehouse+"/plain"))
	require.Equal(t, "file://"+warehouse+"/plain", location("plain"))
	c.post(t, "/v1/{p}/namespaces/ns/tables", withLocation("trino", "local://"+warehouse+"/trino"))
	require.Equal(t, "file://"+warehouse+"/trino", location("trino"))
	require.True(t, strings.HasPrefix(c.metadataLocation(t, "trino"), "file://"+warehouse+"/trino/metadata/"))

	// register_table as Trino sends it: the metadata file as local://
	c.post(t, "/v1/{p}/namespaces/ns/register",
		`{"name":"again","metadata-location":"local://`+strings.TrimPrefix(probe, "file://")+`"}`)
	require.Equal(t, probe, c.metadataLocation(t, "again"))

	rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/tables/plain",
		strings.NewReader(commitBody("", "", `{"action":"set-location","location":"`+warehouse+`/moved"}`)))
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s", b)
	require.Contains(t, string(b), "needs a scheme")
}

// With namespace_separator ".", a namespace level holding "." could be
// created and listed but never reached (every path splits it): refused.
func TestNamespaceLevelWithTheSeparator(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	cfg.NamespaceSeparator = "."
	cat, srv := serve(t, cfg)
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces", strings.NewReader(`{"namespace":["x.y"]}`))
	require.Equal(t, http.StatusBadRequest, rsp.StatusCode, "%s", b)
	require.Contains(t, string(b), "namespace separator")
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["x"]}`)
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["x","y"]}`)
	rsp, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/x.y", nil)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	require.JSONEq(t, `["x","y"]`, string(mustField(t, b, "namespace")))
}

func mustField(t *testing.T, b []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	return m[name]
}

// DuckDB's CTAS: a staged create, then manifests written into
// <location>/metadata/ before the commit, on a local file system that
// creates no parent folders. The staged create makes that folder (and
// nothing else: no table, no metadata file).
func TestStagedCreateMakesTheMetadataFolder(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	b := c.post(t, "/v1/{p}/namespaces/ns/tables", `{"name":"ctas","stage-create":true,"schema":`+badInputSchema+`}`)
	var staged struct {
		Metadata struct{ Location string } `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(b, &staged))
	dir := strings.TrimPrefix(staged.Metadata.Location, "file://") + "/metadata"
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, "the metadata folder exists")
	require.Empty(t, entries, "nothing is written into it")
	rsp, _ := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/ctas", nil)
	require.Equal(t, http.StatusNotFound, rsp.StatusCode, "no table was created")
}
