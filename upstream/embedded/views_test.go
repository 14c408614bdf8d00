package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// viewEnv is an embedded catalog with namespace "ns" behind iceberg-go's
// REST client, plus the prefixed base URL for raw HTTP requests.
type viewEnv struct {
	cl   *rest.Catalog
	base string // <server>/v1/<prefix>
}

func newViewEnv(t *testing.T) viewEnv {
	t.Helper()
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	cl := client(t, srv)
	require.NoError(t, cl.CreateNamespace(context.Background(), table.Identifier{"ns"}, nil))
	return viewEnv{cl: cl, base: srv + "/v1/" + url.PathEscape(cat.Name())}
}

func viewSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
}

// viewVersion has two dialects, so tests see that every representation
// survives the round trip, not just one SQL string.
func viewVersion(t *testing.T, id int64, query string) *view.Version {
	t.Helper()
	v, err := view.NewVersion(id, 0, []view.Representation{
		view.NewRepresentation(query, "spark"),
		view.NewRepresentation(query, "trino"),
	}, table.Identifier{"ns"}, view.WithVersionSummary(view.VersionSummary{"engine-version": "3.5"}))
	require.NoError(t, err)
	return v
}

func (e viewEnv) createView(t *testing.T, id table.Identifier, opts ...catalog.CreateViewOpt) *view.View {
	t.Helper()
	v, err := e.cl.CreateView(context.Background(), id, viewVersion(t, 1, "SELECT 1 AS id"), viewSchema(), opts...)
	require.NoError(t, err)
	return v
}

// do sends a raw request and returns the status and body.
func (e viewEnv) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, e.base+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rsp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	require.NoError(t, err)
	return rsp.StatusCode, b
}

// requireViewError checks a response is the spec's ErrorModel with the
// given status and exception type.
func requireViewError(t *testing.T, status int, body []byte, wantStatus int, wantType string) {
	t.Helper()
	require.Equal(t, wantStatus, status, "body: %s", body)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
	require.Equal(t, wantType, e.Error.Type, "body: %s", body)
	require.Equal(t, wantStatus, e.Error.Code)
	require.NotEmpty(t, e.Error.Message)
}

func TestViewCreateLoadList(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	id := table.Identifier{"ns", "v1"}
	created := e.createView(t, id, catalog.WithViewProperties(iceberg.Properties{"comment": "first"}))

	meta := created.Metadata()
	require.Contains(t, meta.Location(), "/ns.db/v1")
	require.Contains(t, created.MetadataLocation(), "/ns.db/v1/metadata/00000-")
	require.Equal(t, int64(1), meta.CurrentVersionID())
	cur := meta.CurrentVersion()
	require.Len(t, cur.Representations, 2)
	require.Equal(t, "spark", cur.Representations[0].Dialect)
	require.Equal(t, "trino", cur.Representations[1].Dialect)
	require.Equal(t, table.Identifier{"ns"}, cur.DefaultNamespace)
	require.Equal(t, "3.5", cur.Summary["engine-version"])
	require.Equal(t, "test", cur.DefaultCatalog) // the client's catalog name
	require.Equal(t, "first", meta.Properties()["comment"])
	require.Len(t, meta.CurrentSchema().Fields(), 2)

	loaded, err := e.cl.LoadView(ctx, id)
	require.NoError(t, err)
	require.Equal(t, created.MetadataLocation(), loaded.MetadataLocation())
	require.True(t, meta.Equals(loaded.Metadata()))

	ok, err := e.cl.CheckViewExists(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = e.cl.CheckViewExists(ctx, table.Identifier{"ns", "nope"})
	require.NoError(t, err)
	require.False(t, ok)

	var listed []table.Identifier
	for vid, err := range e.cl.ListViews(ctx, table.Identifier{"ns"}) {
		require.NoError(t, err)
		listed = append(listed, vid)
	}
	require.Equal(t, []table.Identifier{id}, listed)

	// Views are not tables.
	for tid, err := range e.cl.ListTables(ctx, table.Identifier{"ns"}) {
		require.NoError(t, err)
		t.Fatalf("unexpected table %v", tid)
	}
}

func TestViewCreateExplicitLocationAndCompression(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	first := e.createView(t, table.Identifier{"ns", "v1"})
	loc := strings.TrimSuffix(first.Metadata().Location(), "/v1") + "/elsewhere"

	// A compression codec must not make the view unreadable: view
	// metadata is always written as plain JSON.
	id := table.Identifier{"ns", "v2"}
	created := e.createView(t, id, catalog.WithViewLocation(loc),
		catalog.WithViewProperties(iceberg.Properties{table.MetadataCompressionKey: table.MetadataCompressionCodecGzip}))
	require.Equal(t, loc, created.Metadata().Location())
	require.True(t, strings.HasPrefix(created.MetadataLocation(), loc+"/metadata/00000-"))
	require.True(t, strings.HasSuffix(created.MetadataLocation(), ".metadata.json"))
	require.False(t, strings.HasSuffix(created.MetadataLocation(), ".gz.metadata.json"))

	loaded, err := e.cl.LoadView(ctx, id)
	require.NoError(t, err)
	require.Equal(t, created.MetadataLocation(), loaded.MetadataLocation())
}

func TestViewListPagination(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	for _, n := range []string{"c", "a", "b"} {
		e.createView(t, table.Identifier{"ns", n})
	}
	var names []string
	token := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4, "pagination does not end")
		path := "/namespaces/ns/views?pageSize=1"
		if token != "" {
			path += "&pageToken=" + url.QueryEscape(token)
		}
		status, body := e.do(t, http.MethodGet, path, "")
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		var page struct {
			Identifiers []struct {
				Namespace []string `json:"namespace"`
				Name      string   `json:"name"`
			} `json:"identifiers"`
			NextPageToken string `json:"next-page-token"`
		}
		require.NoError(t, json.Unmarshal(body, &page))
		require.Len(t, page.Identifiers, 1)
		require.Equal(t, []string{"ns"}, page.Identifiers[0].Namespace)
		names = append(names, page.Identifiers[0].Name)
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	require.Equal(t, []string{"a", "b", "c"}, names)

	// The client, paging with its own page size, sees them all.
	n := 0
	for _, err := range e.cl.ListViews(e.cl.SetPageSize(ctx, 2), table.Identifier{"ns"}) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 3, n)

	// An empty namespace lists an empty array, not null.
	require.NoError(t, e.cl.CreateNamespace(ctx, table.Identifier{"empty"}, nil))
	status, body := e.do(t, http.MethodGet, "/namespaces/empty/views", "")
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"identifiers":[]}`, string(body))

	status, body = e.do(t, http.MethodGet, "/namespaces/ns/views?pageSize=0", "")
	requireViewError(t, status, body, http.StatusBadRequest, "BadRequestException")
}

func TestViewReplace(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	id := table.Identifier{"ns", "v"}
	created := e.createView(t, id)
	base := created.Metadata()

	// A new version on a new schema, made current, as engines replace a view.
	newSchema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz})
	v2 := viewVersion(t, 2, "SELECT 2 AS id")
	v2.SchemaID = view.LastAddedID
	updated, err := e.cl.UpdateView(ctx, id,
		[]view.Requirement{view.AssertViewUUID(base.ViewUUID())},
		[]view.Update{
			view.NewAddSchemaUpdate(newSchema),
			view.NewAddViewVersionUpdate(v2),
			view.NewSetCurrentVersionUpdate(view.LastAddedID),
			view.NewSetPropertiesUpdate(iceberg.Properties{"owner": "etl"}),
		})
	require.NoError(t, err)
	meta := updated.Metadata()
	require.Contains(t, updated.MetadataLocation(), "/metadata/00001-")
	require.Equal(t, base.ViewUUID(), meta.ViewUUID())
	require.Equal(t, int64(2), meta.CurrentVersionID())
	require.Len(t, meta.Versions(), 2)
	require.Len(t, meta.Schemas(), 2)
	require.Len(t, meta.CurrentSchema().Fields(), 3)
	require.Equal(t, "SELECT 2 AS id", meta.CurrentVersion().Representations[0].Sql)
	require.Len(t, meta.CurrentVersion().Representations, 2)
	require.Equal(t, "etl", meta.Properties()["owner"])
	require.Len(t, meta.VersionLog(), 2)

	loaded, err := e.cl.LoadView(ctx, id)
	require.NoError(t, err)
	require.Equal(t, updated.MetadataLocation(), loaded.MetadataLocation())
	require.True(t, meta.Equals(loaded.Metadata()))

	// Back to version 1: an existing version becomes current again.
	back, err := e.cl.UpdateView(ctx, id, nil, []view.Update{view.NewSetCurrentVersionUpdate(1)})
	require.NoError(t, err)
	require.Equal(t, int64(1), back.Metadata().CurrentVersionID())
	require.Contains(t, back.MetadataLocation(), "/metadata/00002-")

	// An update that changes nothing writes no new metadata file.
	same, err := e.cl.UpdateView(ctx, id, nil, []view.Update{view.NewSetCurrentVersionUpdate(1)})
	require.NoError(t, err)
	require.Equal(t, back.MetadataLocation(), same.MetadataLocation())

	// A stale view UUID is a commit conflict for the client.
	_, err = e.cl.UpdateView(ctx, id, []view.Requirement{view.AssertViewUUID(uuid.New())},
		[]view.Update{view.NewSetPropertiesUpdate(iceberg.Properties{"x": "y"})})
	require.ErrorIs(t, err, table.ErrCommitFailed)
}

func TestViewRenameDrop(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	require.NoError(t, e.cl.CreateNamespace(ctx, table.Identifier{"other"}, nil))
	from := table.Identifier{"ns", "v"}
	created := e.createView(t, from)

	to := table.Identifier{"other", "renamed"}
	renamed, err := e.cl.RenameView(ctx, from, to)
	require.NoError(t, err)
	require.Equal(t, created.MetadataLocation(), renamed.MetadataLocation())
	ok, err := e.cl.CheckViewExists(ctx, from)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = e.cl.LoadView(ctx, from)
	require.ErrorIs(t, err, catalog.ErrNoSuchView)

	// The renamed view can still be replaced.
	_, err = e.cl.UpdateView(ctx, to, nil, []view.Update{view.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})})
	require.NoError(t, err)

	require.NoError(t, e.cl.DropView(ctx, to))
	ok, err = e.cl.CheckViewExists(ctx, to)
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, e.cl.DropView(ctx, to), catalog.ErrNoSuchView)
}

// TestViewErrors checks each failure's status and exception type over raw
// HTTP, as any REST client would see it.
func TestViewErrors(t *testing.T) {
	ctx := context.Background()
	e := newViewEnv(t)
	require.NoError(t, e.cl.CreateNamespace(ctx, table.Identifier{"other"}, nil))
	v := e.createView(t, table.Identifier{"ns", "v"})
	e.createView(t, table.Identifier{"ns", "w"})
	_, err := e.cl.CreateTable(ctx, table.Identifier{"ns", "t"}, viewSchema())
	require.NoError(t, err)

	createBody := func(name string) string {
		b, err := json.Marshal(map[string]any{
			"name":         name,
			"schema":       viewSchema(),
			"view-version": viewVersion(t, 1, "SELECT 1"),
			"properties":   map[string]string{},
		})
		require.NoError(t, err)
		return string(b)
	}
	commitBody := func(reqs, updates string) string {
		return `{"requirements":` + reqs + `,"updates":` + updates + `}`
	}
	uuidReq := `[{"type":"assert-view-uuid","uuid":"` + v.Metadata().ViewUUID().String() + `"}]`
	setProps := `[{"action":"set-properties","updates":{"a":"b"}}]`
	rename := func(fromNS, from, toNS, to string) string {
		return `{"source":{"namespace":["` + fromNS + `"],"name":"` + from + `"},` +
			`"destination":{"namespace":["` + toNS + `"],"name":"` + to + `"}}`
	}

	cases := []struct {
		name         string
		method, path string
		body         string
		status       int
		typ          string
	}{
		{"list missing namespace", http.MethodGet, "/namespaces/missing/views", "", 404, "NoSuchNamespaceException"},
		{"list bad page token", http.MethodGet, "/namespaces/ns/views?pageToken=%25%25", "", 400, "BadRequestException"},
		{"create missing namespace", http.MethodPost, "/namespaces/missing/views", createBody("x"), 404, "NoSuchNamespaceException"},
		{"create existing view", http.MethodPost, "/namespaces/ns/views", createBody("v"), 409, "AlreadyExistsException"},
		{"create over table", http.MethodPost, "/namespaces/ns/views", createBody("t"), 409, "AlreadyExistsException"},
		{"create malformed", http.MethodPost, "/namespaces/ns/views", `{"name":`, 400, "BadRequestException"},
		{"create without version", http.MethodPost, "/namespaces/ns/views",
			`{"name":"x","schema":{"type":"struct","schema-id":0,"fields":[]},"properties":{}}`, 400, "BadRequestException"},
		{"create empty sql", http.MethodPost, "/namespaces/ns/views",
			`{"name":"x","schema":{"type":"struct","schema-id":0,"fields":[]},"properties":{},` +
				`"view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["ns"],` +
				`"representations":[{"type":"sql","sql":"","dialect":"spark"}]}}`, 400, "IllegalArgumentException"},
		{"table create over view", http.MethodPost, "/namespaces/ns/tables",
			`{"name":"v","schema":{"type":"struct","schema-id":0,"fields":[]}}`, 409, "AlreadyExistsException"},
		{"load missing", http.MethodGet, "/namespaces/ns/views/missing", "", 404, "NoSuchViewException"},
		{"load table as view", http.MethodGet, "/namespaces/ns/views/t", "", 404, "NoSuchViewException"},
		{"load in missing namespace", http.MethodGet, "/namespaces/missing/views/v", "", 404, "NoSuchViewException"},
		{"replace missing", http.MethodPost, "/namespaces/ns/views/missing", commitBody("[]", setProps), 404, "NoSuchViewException"},
		{"replace stale uuid", http.MethodPost, "/namespaces/ns/views/w", commitBody(uuidReq, setProps), 409, "CommitFailedException"},
		{"replace unknown requirement", http.MethodPost, "/namespaces/ns/views/v",
			commitBody(`[{"type":"assert-current-schema-id","current-schema-id":0}]`, setProps), 400, "BadRequestException"},
		{"replace unknown update", http.MethodPost, "/namespaces/ns/views/v",
			commitBody("[]", `[{"action":"add-snapshot","snapshot":{}}]`), 400, "BadRequestException"},
		{"replace unknown version", http.MethodPost, "/namespaces/ns/views/v",
			commitBody("[]", `[{"action":"set-current-view-version","view-version-id":99}]`), 400, "BadRequestException"},
		{"replace reassign uuid", http.MethodPost, "/namespaces/ns/views/v",
			commitBody("[]", `[{"action":"assign-uuid","uuid":"`+uuid.NewString()+`"}]`), 400, "BadRequestException"},
		{"replace identifier mismatch", http.MethodPost, "/namespaces/ns/views/v",
			`{"identifier":{"namespace":["ns"],"name":"w"},"updates":` + setProps + `}`, 400, "BadRequestException"},
		{"drop missing", http.MethodDelete, "/namespaces/ns/views/missing", "", 404, "NoSuchViewException"},
		{"drop table as view", http.MethodDelete, "/namespaces/ns/views/t", "", 404, "NoSuchViewException"},
		{"rename missing source", http.MethodPost, "/views/rename", rename("ns", "missing", "ns", "x"), 404, "NoSuchViewException"},
		{"rename table as view", http.MethodPost, "/views/rename", rename("ns", "t", "ns", "x"), 404, "NoSuchViewException"},
		{"rename to missing namespace", http.MethodPost, "/views/rename", rename("ns", "v", "missing", "x"), 404, "NoSuchNamespaceException"},
		{"rename onto view", http.MethodPost, "/views/rename", rename("ns", "v", "ns", "w"), 409, "AlreadyExistsException"},
		{"rename onto table", http.MethodPost, "/views/rename", rename("ns", "v", "ns", "t"), 409, "AlreadyExistsException"},
		{"rename without destination", http.MethodPost, "/views/rename",
			`{"source":{"namespace":["ns"],"name":"v"}}`, 400, "BadRequestException"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.do(t, tc.method, tc.path, tc.body)
			requireViewError(t, status, body, tc.status, tc.typ)
		})
	}

	// HEAD answers carry no body: the status alone tells.
	status, body := e.do(t, http.MethodHead, "/namespaces/ns/views/missing", "")
	require.Equal(t, http.StatusNotFound, status)
	require.Empty(t, body)
	status, _ = e.do(t, http.MethodHead, "/namespaces/ns/views/t", "")
	require.Equal(t, http.StatusNotFound, status)
	status, _ = e.do(t, http.MethodHead, "/namespaces/ns/views/v", "")
	require.Equal(t, http.StatusNoContent, status)

	// None of the failures changed the views.
	loaded, err := e.cl.LoadView(ctx, table.Identifier{"ns", "v"})
	require.NoError(t, err)
	require.Equal(t, v.MetadataLocation(), loaded.MetadataLocation())
	ok, err := e.cl.CheckViewExists(ctx, table.Identifier{"other", "x"})
	require.NoError(t, err)
	require.False(t, ok)
}

// TestViewLoadRaw checks the LoadViewResult wire shape.
func TestViewLoadRaw(t *testing.T) {
	e := newViewEnv(t)
	v := e.createView(t, table.Identifier{"ns", "v"})
	status, body := e.do(t, http.MethodGet, "/namespaces/ns/views/v", "")
	require.Equal(t, http.StatusOK, status, "body: %s", body)
	var res struct {
		MetadataLocation string            `json:"metadata-location"`
		Metadata         json.RawMessage   `json:"metadata"`
		Config           map[string]string `json:"config"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	require.NoError(t, dec.Decode(&res))
	require.Equal(t, v.MetadataLocation(), res.MetadataLocation)
	require.NotNil(t, res.Config)
	meta, err := view.ParseMetadataBytes(res.Metadata)
	require.NoError(t, err)
	require.Equal(t, v.Metadata().ViewUUID(), meta.ViewUUID())
}
