package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// writeRecorder is an embedded catalog (iceberg-go's request types,
// decoded by encoding/json: keys matched case-insensitively, the last
// duplicate kept) that records every write it is sent.
type writeRecorder struct {
	URL    string
	mu     sync.Mutex
	writes []string
}

func newWriteRecorder(t *testing.T, allowed ...string) *writeRecorder {
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.AllowedLocations = allowed
	cat := embeddedtest.Serve(t, cfg).Catalog
	b := &writeRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			b.mu.Lock()
			b.writes = append(b.writes, r.Method+" "+r.URL.Path)
			b.mu.Unlock()
		}
		cat.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	return b
}

func (b *writeRecorder) reset() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.writes
	b.writes = nil
	return w
}

// ambiguousBody is a request body a Go catalog reads otherwise than
// lakegate checks it (issue 36), and the key the 400 must name.
type ambiguousBody struct {
	name, path, body, key string
}

func ambiguousIcebergBodies(outside string) []ambiguousBody {
	const schema = `"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`
	const ident = `{"namespace":["sales"],"name":"t"}`
	return []ambiguousBody{
		{"namespace Properties", "/namespaces",
			`{"namespace":["cv1"],"properties":{"a":"b"},"Properties":{"location":"` + outside + `/ns"}}`, `"Properties"`},
		{"table Properties", "/namespaces/sales/tables",
			`{"name":"t1",` + schema + `,"Properties":{"write.data.path":"` + outside + `/t1"}}`, `"Properties"`},
		{"register Metadata-Location", "/namespaces/sales/register",
			`{"name":"r","metadata-location":"file:///in/m.json","Metadata-Location":"` + outside + `/m.json"}`, `"Metadata-Location"`},
		{"commit UPDATES", "/namespaces/sales/tables/t",
			`{"requirements":[],"updates":[],"UPDATES":[{"action":"set-properties","updates":{"k":1}}]}`, `"UPDATES"`},
		{"set-location Location", "/namespaces/sales/tables/t",
			`{"requirements":[],"updates":[{"action":"set-location","location":"file:///in/t","Location":"` + outside + `/t"}]}`, `"Location"`},
		{"Kelvin sign", "/namespaces/sales/tables/t",
			`{"requirements":[],"updates":[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1,"min-snapshots-to-\u212Aeep":1}]}`,
			`"min-snapshots-to-keep"`},
		{"rename Destination", "/tables/rename",
			`{"source":` + ident + `,"destination":{"namespace":["sales"],"name":"u"},"Destination":{"namespace":["admin"],"name":"x"}}`, `"Destination"`},
		{"transaction Identifier", "/transactions/commit",
			`{"table-changes":[{"identifier":` + ident + `,"Identifier":{"namespace":["admin"],"name":"x"},"requirements":[],"updates":[]}]}`, `"Identifier"`},
		{"duplicate namespace", "/namespaces", `{"namespace":["a"],"namespace":["admin"]}`, `duplicate key "namespace"`},
		{"duplicate location property", "/namespaces",
			`{"namespace":["a"],"properties":{"location":"file:///in","location":"` + outside + `"}}`, `duplicate key "location"`},
		{"escaped duplicate", "/namespaces/sales/register",
			`{"name":"r","metadata-location":"file:///in/m.json","metadata-loc\u0061tion":"` + outside + `/m.json"}`, `duplicate key "metadata-location"`},
		{"BOM", "/namespaces", "\xef\xbb\xbf{\"namespace\":[\"a\"]}", "invalid character"},
		{"trailing data", "/namespaces", `{"namespace":["a"]}{"namespace":["admin"]}`, "trailing data"},
		{"invalid UTF-8", "/namespaces", "{\"namespace\":[\"a\xff\"]}", "UTF-8"},
		{"int out of range", "/namespaces/sales/tables/t",
			`{"requirements":[{"type":"assert-current-schema-id","current-schema-id":4294967296}],"updates":[]}`, "must be an int"},
	}
}

// TestAmbiguousBodiesNeverReachTheBackend (issue 36): behind a remote
// catalog with allowed_locations, a body a Go catalog would read
// otherwise than lakegate checked it — a case variant of a field, a
// repeated key, text a lenient decoder repairs — is a 400 in the Iceberg
// error model naming the key, and the backend receives nothing; the same
// bodies are 400 against the embedded catalog. Unknown keys and map keys
// in any case still pass.
func TestAmbiguousBodiesNeverReachTheBackend(t *testing.T) {
	inside, outside := t.TempDir(), "file://"+t.TempDir()
	backend := newWriteRecorder(t, inside, strings.TrimPrefix(outside, "file://"))
	direct := embeddedtest.Client(t, backend.URL)
	require.NoError(t, direct.CreateNamespace(context.Background(), table.Identifier{"sales"}, nil))
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{"file://" + inside}
	addr := freeAddr(t)
	// One gateway (Caddy runs one config): "lake" over the Go catalog,
	// "emb" the embedded one.
	base := serveOn(t, addr, caddyJSON(t, addr, map[string]any{"catalogs": []any{lake, embeddedCatalog(t, "emb")}}))
	backend.reset()

	for _, tc := range ambiguousIcebergBodies(outside) {
		for _, cat := range []string{"lake", "emb"} {
			status, b := do(t, http.MethodPost, base+"/v1/"+cat+tc.path, "", tc.body, nil)
			assert.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, b)
			assert.Equal(t, "BadRequestException", errorType(b), "%s: %s", tc.name, b)
			assert.Contains(t, errorMessage(b), tc.key, tc.name)
		}
	}
	assert.Empty(t, backend.reset(), "refused bodies reached the backend")

	// Map keys are data, unknown keys a vendor's: both still pass.
	status, b := do(t, http.MethodPost, base+"/v1/lake/namespaces", "",
		`{"namespace":["ok"],"properties":{"Owner":"a","owner":"b"},"x-vendor":{"A":1,"a":2}}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	if w := backend.reset(); assert.Len(t, w, 1) {
		assert.True(t, strings.HasPrefix(w[0], "POST ") && strings.HasSuffix(w[0], "/namespaces"), w[0])
	}
}

// TestAmbiguousBodiesDeltaDoors: the UC Delta API, the UC catalogs API
// and Delta Sharing refuse the same ambiguities with a 400 in their own
// error models, before anything reaches the catalog.
func TestAmbiguousBodiesDeltaDoors(t *testing.T) {
	inside := t.TempDir()
	backend := newWriteRecorder(t, inside)
	require.NoError(t, embeddedtest.Client(t, backend.URL).CreateNamespace(context.Background(), table.Identifier{"sales"}, nil))
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{"file://" + inside}
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{lake}},
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	backend.reset()

	created := `"table-type":"EXTERNAL","columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]},` +
		`"protocol":{"min-reader-version":1,"min-writer-version":2},"last-commit-timestamp-ms":1700000000000`
	for _, tc := range []ambiguousBody{
		{"Delta create Location", deltaAPI + "/catalogs/lake/schemas/sales/tables",
			`{"name":"d1","location":"file://` + inside + `/d1","Location":"file:///outside/d1",` + created + `}`, `"Location"`},
		{"Delta create duplicate name", deltaAPI + "/catalogs/lake/schemas/sales/tables",
			`{"name":"d1","name":"d2","location":"file://` + inside + `/d1",` + created + `}`, `duplicate key "name"`},
		{"Delta create duplicate column key", deltaAPI + "/catalogs/lake/schemas/sales/tables",
			`{"name":"d1","location":"file://` + inside + `/d1",` + strings.Replace(created, `"type":"long"`, `"type":"long","type":"string"`, 1) + `}`,
			`duplicate key "type"`},
	} {
		status, b := do(t, http.MethodPost, base+tc.path, "", tc.body, nil)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, b)
		assert.Equal(t, "BadRequestException", errorType(b), "%s: %s", tc.name, b)
		assert.Contains(t, errorMessage(b), tc.key, tc.name)
	}

	table := `"name":"u1","catalog_name":"lake","schema_name":"sales","table_type":"EXTERNAL","storage_location":"file://` + inside + `/u1"`
	for _, tc := range []ambiguousBody{
		{"UC createTable Storage_Location", unityAPI + "/tables", `{` + table + `,"Storage_Location":"file:///outside/u1"}`, `"Storage_Location"`},
		{"UC createTable duplicate property", unityAPI + "/tables", `{` + table + `,"properties":{"k":"a","k":"b"}}`, `duplicate key "k"`},
		{"UC createSchema Catalog_Name", unityAPI + "/schemas", `{"name":"s2","catalog_name":"lake","Catalog_Name":"other"}`, `"Catalog_Name"`},
		{"UC createSchema escaped duplicate", unityAPI + "/schemas", `{"name":"s2","n\u0061me":"s3","catalog_name":"lake"}`, `duplicate key "name"`},
		{"UC createCatalog NAME", unityAPI + "/catalogs", `{"name":"lake","NAME":"other"}`, `"NAME"`},
		{"UC createSchema trailing data", unityAPI + "/schemas", `{"name":"s2","catalog_name":"lake"} {}`, "trailing data"},
		// Names are never repaired into U+FFFD: a name that is not UTF-8,
		// or a lone surrogate escape, is refused as the other doors refuse it.
		{"UC createSchema invalid UTF-8 name", unityAPI + "/schemas", "{\"name\":\"s\xff\",\"catalog_name\":\"lake\"}", "UTF-8"},
		{"UC createTable lone surrogate name", unityAPI + "/tables", `{"name":"u\ud800",` + table[len(`"name":"u1",`):] + `}`, "surrogate"},
		{"UC createCatalog invalid UTF-8 comment", unityAPI + "/catalogs", "{\"name\":\"c2\",\"comment\":\"\xc3\"}", "UTF-8"},
	} {
		status, b := do(t, http.MethodPost, base+tc.path, "", tc.body, nil)
		var out struct {
			Code    string `json:"error_code"`
			Message string `json:"message"`
		}
		require.NoError(t, json.Unmarshal(b, &out), "%s: %s", tc.name, b)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.name, b)
		assert.Equal(t, "INVALID_ARGUMENT", out.Code, "%s: %s", tc.name, b)
		assert.Contains(t, out.Message, tc.key, tc.name)
	}
	assert.Empty(t, backend.reset(), "refused bodies reached the backend")
}

// TestAmbiguousSharingQuery: a Delta Sharing query body with a case
// variant or a repeated key is a 400 MALFORMED_REQUEST.
func TestAmbiguousSharingQuery(t *testing.T) {
	base, _ := sharingGateway(t, nil)
	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	for body, key := range map[string]string{
		`{"version":1,"Version":0}`:       `"Version"`,
		`{"limitHint":1,"limitHint":1e6}`: `duplicate key "limitHint"`,
	} {
		r := c.do(http.MethodPost, "/shares/demo/schemas/sales/tables/orders/query", nil, body)
		var out struct {
			Code    string `json:"errorCode"`
			Message string `json:"message"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out), "%s: %s", body, r.body)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", body, r.body)
		assert.Equal(t, "MALFORMED_REQUEST", out.Code, body)
		assert.Contains(t, out.Message, key, body)
	}
}

func errorMessage(b []byte) string { return readIcebergError(b).Message }
