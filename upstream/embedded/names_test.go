package embedded_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// TestNamesWithPercent creates, loads and lists a namespace and a table
// whose names hold "%", the character that escaped paths make ambiguous:
// the table gets a location that is a plain directory name, and its
// metadata is written there.
func TestNamesWithPercent(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["a%b"]}`)
	c.post(t, "/v1/{p}/namespaces/a%25b/tables", createTableBody("t%1"))

	rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/a%25b/tables/t%251", nil)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	var res struct {
		MetadataLocation string `json:"metadata-location"`
		Metadata         struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.NotContains(t, res.Metadata.Location, "%", "location %s", res.Metadata.Location)
	u, err := url.Parse(res.MetadataLocation)
	require.NoError(t, err)
	_, err = os.Stat(u.Path)
	require.NoError(t, err, "metadata file %s", res.MetadataLocation)

	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/a%25b/tables", nil)
	require.JSONEq(t, `{"identifiers":[{"namespace":["a%b"],"name":"t%1"}]}`, string(b))
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces", nil)
	require.JSONEq(t, `{"namespaces":[["a%b"]]}`, string(b))
}

// TestNamespaceHierarchy: a child needs its parent, and a parent with
// children is not empty.
func TestNamespaceHierarchy(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["p"]}`)
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["p","c"]}`)

	rsp, b := c.do(t, http.MethodDelete, "/v1/{p}/namespaces/p", nil)
	requireErrorModel(t, http.MethodDelete, rsp, b, http.StatusConflict, "NamespaceNotEmptyException")
	require.Contains(t, string(b), "is not empty")
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces?parent=p", nil)
	require.JSONEq(t, `{"namespaces":[["p","c"]]}`, string(b))

	rsp, b = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/nope", nil)
	requireErrorModel(t, http.MethodDelete, rsp, b, http.StatusNotFound, "NoSuchNamespaceException")

	rsp, _ = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/p%1Fc", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
	rsp, _ = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/p", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode)
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces", nil)
	require.JSONEq(t, `{"namespaces":[]}`, string(b))

	// recursive=true still drops the whole tree.
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["r"]}`)
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["r","s"]}`)
	rsp, b = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/r?recursive=true", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces", nil)
	require.False(t, strings.Contains(string(b), `"r"`), "%s", b)
}

// TestListingUUIDs: returnUuids and returnProtectionStatus (seed 000) add
// namespace-uuids, table-uuids and protection-status aligned with the page;
// without them the fields are absent. lakegate's own namespace property
// stays hidden and cannot be set.
func TestListingUUIDs(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	cat, srv := serve(t, cfg)
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"],"properties":{"owner":"me"}}`)
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["other"]}`)
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t1"))
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t2"))

	var nsList struct {
		Namespaces       [][]string `json:"namespaces"`
		NamespaceUUIDs   []string   `json:"namespace-uuids"`
		ProtectionStatus []bool     `json:"protection-status"`
	}
	_, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces?returnUuids=true&returnProtectionStatus=true", nil)
	require.NoError(t, json.Unmarshal(b, &nsList), "%s", b)
	require.Equal(t, [][]string{{"ns"}, {"other"}}, nsList.Namespaces)
	require.Len(t, nsList.NamespaceUUIDs, 2)
	require.NotEqual(t, nsList.NamespaceUUIDs[0], nsList.NamespaceUUIDs[1])
	require.Equal(t, []bool{false, false}, nsList.ProtectionStatus)

	var ns struct {
		Properties    map[string]string `json:"properties"`
		NamespaceUUID string            `json:"namespace-uuid"`
	}
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns?returnUuid=true", nil)
	require.NoError(t, json.Unmarshal(b, &ns), "%s", b)
	require.Equal(t, nsList.NamespaceUUIDs[0], ns.NamespaceUUID)
	require.Equal(t, map[string]string{"owner": "me", "location": "file://" + cfg.Warehouse + "/ns.db"}, ns.Properties, "lakegate's key must stay hidden")
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns", nil)
	require.NotContains(t, string(b), "namespace-uuid")

	var tables struct {
		Identifiers []struct {
			Name string `json:"name"`
		} `json:"identifiers"`
		TableUUIDs       []string `json:"table-uuids"`
		ProtectionStatus []bool   `json:"protection-status"`
	}
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables?returnUuids=true&returnProtectionStatus=true&pageSize=1", nil)
	require.NoError(t, json.Unmarshal(b, &tables), "%s", b)
	require.Len(t, tables.Identifiers, 1)
	require.Equal(t, "t1", tables.Identifiers[0].Name)
	rsp, lb := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/t1", nil)
	require.Equal(t, http.StatusOK, rsp.StatusCode)
	var loaded struct {
		Metadata struct {
			TableUUID string `json:"table-uuid"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(lb, &loaded))
	require.Equal(t, []string{loaded.Metadata.TableUUID}, tables.TableUUIDs)
	require.Equal(t, []bool{false}, tables.ProtectionStatus)

	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/other/tables?returnUuids=true", nil)
	require.JSONEq(t, `{"identifiers":[],"table-uuids":[]}`, string(b))
	_, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables", nil)
	require.NotContains(t, string(b), "table-uuids")

	for _, body := range []string{
		`{"namespace":["x"],"properties":{"lakegate.namespace-uuid":"00000000-0000-0000-0000-000000000000"}}`,
	} {
		rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces", strings.NewReader(body))
		requireErrorModel(t, http.MethodPost, rsp, b, http.StatusBadRequest, "BadRequestException")
	}
	for _, body := range []string{
		`{"removals":["lakegate.namespace-uuid"]}`,
		`{"updates":{"lakegate.namespace-uuid":"x"}}`,
	} {
		rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/properties", strings.NewReader(body))
		requireErrorModel(t, http.MethodPost, rsp, b, http.StatusBadRequest, "BadRequestException")
	}
	rsp, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces?returnUuids=maybe", nil)
	requireErrorModel(t, http.MethodGet, rsp, b, http.StatusBadRequest, "BadRequestException")
}

// TestRecreateAfterRename: a table renamed away keeps its directory, so a
// new table under the old name gets a directory of its own, and purging
// the renamed one leaves the new one whole.
func TestRecreateAfterRename(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	location := func(name string) string {
		rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/"+name, nil)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
		var res struct {
			Metadata struct {
				Location string `json:"location"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(b, &res))
		return res.Metadata.Location
	}
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t"))
	first := location("t")
	require.True(t, strings.HasSuffix(first, "/ns.db/t"), first)
	c.post(t, "/v1/{p}/tables/rename",
		`{"source":{"namespace":["ns"],"name":"t"},"destination":{"namespace":["ns"],"name":"old"}}`)
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t"))
	second := location("t")
	require.NotEqual(t, first, second)
	require.False(t, strings.HasPrefix(second, first+"/"), "%s is inside %s", second, first)

	rsp, b := c.do(t, http.MethodDelete, "/v1/{p}/namespaces/ns/tables/old?purgeRequested=true", nil)
	require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
	require.Equal(t, second, location("t"))
}

// TestNamespaceDefaultLocation: every namespace answers a `location`, the
// one set or else where its tables go by default (as Iceberg's JDBC
// catalog answers), and a table created without a location lands under it.
// Trino builds a staged table's location from it; without one it lets the
// catalog write the table first and then refuses its own non-empty
// location.
func TestNamespaceDefaultLocation(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	cat, srv := serve(t, cfg)
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	nsLocation := func(b []byte) string {
		var res struct {
			Properties map[string]string `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(b, &res), "%s", b)
		return res.Properties["location"]
	}
	warehouse := "file://" + cfg.Warehouse
	created := c.post(t, "/v1/{p}/namespaces", `{"namespace":["sales"]}`)
	assert.Equal(t, warehouse+"/sales.db", nsLocation(created), "the create answer")
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["sales","eu"]}`)
	own := warehouse + "/elsewhere/ml"
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ml"],"properties":{"location":"`+own+`/"}}`)
	for ns, want := range map[string]string{"sales": warehouse + "/sales.db", "sales%1Feu": warehouse + "/sales.eu.db", "ml": own} {
		rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/"+ns, nil)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
		assert.Equal(t, want, strings.TrimSuffix(nsLocation(b), "/"), ns)
		c.post(t, "/v1/{p}/namespaces/"+ns+"/tables", createTableBody("t"))
		rsp, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/"+ns+"/tables/t", nil)
		require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
		assert.Contains(t, string(b), `"location":"`+want+`/t"`, ns)
	}
	// Nothing is stored: setting the property later moves new tables.
	rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/sales/properties", strings.NewReader(`{"removals":["location"]}`))
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	assert.Contains(t, string(b), `"missing":["location"]`)
}

// TestJavaWording: errors are worded as Iceberg's Java catalogs word them
// (people search for these; Iceberg's catalog suite checks them).
func TestJavaWording(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t"))
	id := func(name string) string { return `{"namespace":["ns"],"name":"` + name + `"}` }
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/v1/{p}/namespaces/ns/tables/nope", "", "Table does not exist: ns.nope"},
		{"GET", "/v1/{p}/namespaces/gone/tables/t", "", "Table does not exist: gone.t"},
		{"GET", "/v1/{p}/namespaces/gone", "", "Namespace does not exist: gone"},
		{"GET", "/v1/{p}/namespaces/gone/tables", "", "Namespace does not exist: gone"},
		{"GET", "/v1/{p}/namespaces/ns/views/t", "", "View does not exist: ns.t"},
		{"POST", "/v1/{p}/namespaces", `{"namespace":["ns"]}`, "Namespace already exists: ns"},
		{"POST", "/v1/{p}/namespaces/ns/tables", createTableBody("t"), "Table already exists: ns.t"},
		{"POST", "/v1/{p}/tables/rename", `{"source":` + id("nope") + `,"destination":` + id("x") + `}`,
			"Table does not exist: ns.nope"},
		{"POST", "/v1/{p}/namespaces/ns/tables/t",
			`{"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}],"updates":[]}`,
			"Requirement failed: current schema changed: expected id 7 != 0"},
		{"POST", "/v1/{p}/namespaces/ns/tables/t",
			`{"requirements":[{"type":"assert-create"}],"updates":[]}`,
			"Requirement failed: table already exists"},
	} {
		rsp, b := c.do(t, tc.method, tc.path, strings.NewReader(tc.body))
		require.GreaterOrEqual(t, rsp.StatusCode, 400, "%s %s: %s", tc.method, tc.path, b)
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(b, &e))
		require.Equal(t, tc.want, e.Error.Message, "%s %s", tc.method, tc.path)
	}
}

// TestRegisterView registers a view from an existing view metadata file,
// and refuses taken names and unreadable files.
func TestRegisterView(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody("t"))
	version := `{"version-id":1,"schema-id":0,"timestamp-ms":1700000000000,"summary":{},` +
		`"representations":[{"type":"sql","sql":"SELECT 1","dialect":"spark"}],"default-namespace":["ns"]}`
	b := c.post(t, "/v1/{p}/namespaces/ns/views", `{"name":"v","schema":`+badInputSchema+`,"view-version":`+version+`}`)
	var created struct {
		MetadataLocation string `json:"metadata-location"`
	}
	require.NoError(t, json.Unmarshal(b, &created))
	register := func(name, loc string) (*http.Response, []byte) {
		return c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/register-view",
			strings.NewReader(`{"name":"`+name+`","metadata-location":"`+loc+`"}`))
	}
	rsp, b := register("v2", created.MetadataLocation)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	rsp, b = c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/views/v2", nil)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	require.Contains(t, string(b), created.MetadataLocation)

	rsp, b = register("v2", created.MetadataLocation)
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusConflict, "AlreadyExistsException")
	require.Contains(t, string(b), "View already exists: ns.v2")
	rsp, b = register("t", created.MetadataLocation)
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusConflict, "AlreadyExistsException")
	require.Contains(t, string(b), "Table with same name already exists: ns.t")
	missing := strings.TrimSuffix(created.MetadataLocation, ".metadata.json") + "-gone.metadata.json"
	rsp, b = register("v3", missing)
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusNotFound, "NotFoundException")
	require.Contains(t, string(b), "Failed to open input stream for file: "+missing)

	// A view with gc.enabled=false keeps its metadata file when dropped, so
	// it can be registered again; any other view's file goes with it.
	for _, gc := range []string{"false", "true"} {
		b = c.post(t, "/v1/{p}/namespaces/ns/views", `{"name":"g","schema":`+badInputSchema+
			`,"view-version":`+version+`,"properties":{"gc.enabled":"`+gc+`"}}`)
		var g struct {
			MetadataLocation string `json:"metadata-location"`
		}
		require.NoError(t, json.Unmarshal(b, &g))
		rsp, b = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/ns/views/g", nil)
		require.Equal(t, http.StatusNoContent, rsp.StatusCode, "%s", b)
		rsp, b = register("g", g.MetadataLocation)
		if gc == "false" {
			require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
			rsp, _ = c.do(t, http.MethodDelete, "/v1/{p}/namespaces/ns/views/g", nil)
			require.Equal(t, http.StatusNoContent, rsp.StatusCode)
		} else {
			requireErrorModel(t, http.MethodPost, rsp, b, http.StatusNotFound, "NotFoundException")
		}
	}
	rsp, b = c.do(t, http.MethodPost, "/v1/{p}/namespaces/gone/register-view",
		strings.NewReader(`{"name":"x","metadata-location":"`+created.MetadataLocation+`"}`))
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusNotFound, "NoSuchNamespaceException")
}

// TestCreateWithClientFieldIDs: Spark numbers a new table's columns from 0,
// and its partition spec and sort order name those ids; the catalog
// renumbers the schema and the spec and order follow.
func TestCreateWithClientFieldIDs(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	body := func(name string, stage bool) string {
		return fmt.Sprintf(`{"name":"%s","stage-create":%t,"schema":{"type":"struct","schema-id":0,"fields":[`+
			`{"id":0,"name":"category","type":"string","required":false},`+
			`{"id":1,"name":"id","type":"long","required":false}]},`+
			`"partition-spec":{"spec-id":0,"fields":[{"source-id":0,"field-id":1000,"name":"category","transform":"identity"}]},`+
			`"write-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}`,
			name, stage)
	}
	for _, stage := range []bool{false, true} {
		b := c.post(t, "/v1/{p}/namespaces/ns/tables", body(fmt.Sprintf("t_%t", stage), stage))
		var res struct {
			Metadata struct {
				Schemas []struct {
					Fields []struct {
						ID   int    `json:"id"`
						Name string `json:"name"`
					} `json:"fields"`
				} `json:"schemas"`
				Specs []struct {
					Fields []struct {
						SourceID int `json:"source-id"`
					} `json:"fields"`
				} `json:"partition-specs"`
				Orders []struct {
					Fields []struct {
						SourceID int `json:"source-id"`
					} `json:"fields"`
				} `json:"sort-orders"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(b, &res), "%s", b)
		ids := map[string]int{}
		for _, f := range res.Metadata.Schemas[0].Fields {
			ids[f.Name] = f.ID
		}
		require.Equal(t, ids["category"], res.Metadata.Specs[0].Fields[0].SourceID, "stage=%t: %s", stage, b)
		last := res.Metadata.Orders[len(res.Metadata.Orders)-1]
		require.Equal(t, ids["id"], last.Fields[0].SourceID, "stage=%t: %s", stage, b)
		require.Positive(t, ids["category"])
	}
}

// TestRegisterDoesNotEchoFiles: registering from a file in the warehouse
// that is not table metadata is a 400 that says so without quoting what
// the file holds.
func TestRegisterDoesNotEchoFiles(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	cat, srv := serve(t, cfg)
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	secret := cfg.Warehouse + "/secret.txt"
	require.NoError(t, os.WriteFile(secret, []byte("root:x:0:0:secret"), 0o600))
	rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces/ns/register",
		strings.NewReader(`{"name":"t","metadata-location":"file://`+secret+`"}`))
	requireErrorModel(t, http.MethodPost, rsp, b, http.StatusBadRequest, "BadRequestException")
	for _, leak := range []string{"'r'", "x:0:0", "invalid character"} {
		require.NotContains(t, string(b), leak)
	}
}
