package embedded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// rawClient sends hand-written requests to an embedded catalog. Paths are
// sent exactly as written (already escaped, possibly malformed), with
// {p} standing for the catalog's prefix.
type rawClient struct {
	srv    string
	prefix string
}

func (c rawClient) do(t *testing.T, method, path string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, c.srv+"/", body)
	require.NoError(t, err)
	// Opaque is written to the request line verbatim, so that paths the
	// url package would re-escape or refuse (%ZZ) reach the server as is.
	req.URL.Opaque, req.URL.RawQuery, _ = strings.Cut(strings.ReplaceAll(path, "{p}", c.prefix), "?")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rsp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	require.NoError(t, err)
	return rsp, b
}

// post sends body and requires a 2xx answer.
func (c rawClient) post(t *testing.T, path, body string) []byte {
	t.Helper()
	rsp, b := c.do(t, http.MethodPost, path, strings.NewReader(body))
	require.Less(t, rsp.StatusCode, 300, "POST %s: %s", path, b)
	return b
}

// metadataLocation loads a table and returns its metadata location.
func (c rawClient) metadataLocation(t *testing.T, table string) string {
	t.Helper()
	rsp, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces/ns/tables/"+table, nil)
	require.Equal(t, http.StatusOK, rsp.StatusCode, "%s", b)
	var res struct {
		MetadataLocation string `json:"metadata-location"`
		Metadata         struct {
			TableUUID string `json:"table-uuid"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.NotEmpty(t, res.MetadataLocation)
	require.NotEmpty(t, res.Metadata.TableUUID)
	return res.MetadataLocation
}

const badInputSchema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

func createTableBody(name string) string {
	return `{"name":"` + name + `","schema":` + badInputSchema + `}`
}

const setProps = `{"action":"set-properties","updates":{"k":"v"}}`

// commitBody is a CommitTableRequest (ident "" leaves the identifier out).
func commitBody(ident, reqs, updates string) string {
	b := `{"requirements":[` + reqs + `],"updates":[` + updates + `]`
	if ident != "" {
		b += `,"identifier":{"namespace":["ns"],"name":"` + ident + `"}`
	}
	return b + "}"
}

const wrongUUID = `{"type":"assert-table-uuid","uuid":"00000000-0000-4000-8000-000000000001"}`

// TestBadInput sends malformed, conflicting and impossible requests over
// HTTP and checks each answer's status and the spec's ErrorModel body.
func TestBadInput(t *testing.T) {
	cat, srv := serve(t, testConfig(t, embedded.SQLite))
	c := rawClient{srv: srv, prefix: url.PathEscape(cat.Name())}
	c.post(t, "/v1/{p}/namespaces", `{"namespace":["ns"]}`)
	for _, name := range []string{"t", "t2", "u"} {
		c.post(t, "/v1/{p}/namespaces/ns/tables", createTableBody(name))
	}
	tLoc, t2Loc := c.metadataLocation(t, "t"), c.metadataLocation(t, "t2")

	const (
		bad         = http.StatusBadRequest
		notFound    = http.StatusNotFound
		conflict    = http.StatusConflict
		notAllowed  = http.StatusMethodNotAllowed
		unprocessed = http.StatusUnprocessableEntity
	)
	type testCase struct {
		name   string
		method string
		path   string
		body   string
		code   int
		typ    string // "" when the Go HTTP server itself rejects the request
		after  func(t *testing.T)
	}
	unchanged := func(t *testing.T) {
		require.Equal(t, tLoc, c.metadataLocation(t, "t"), "ns.t changed")
		require.Equal(t, t2Loc, c.metadataLocation(t, "t2"), "ns.t2 changed")
	}
	noNamespace := func(name string) func(t *testing.T) {
		return func(t *testing.T) {
			rsp, b := c.do(t, http.MethodHead, "/v1/{p}/namespaces/"+name, nil)
			require.Equal(t, notFound, rsp.StatusCode, "namespace %s was created: %s", name, b)
		}
	}
	onlyNamespace := func(want string) func(t *testing.T) {
		return func(t *testing.T) {
			_, b := c.do(t, http.MethodGet, "/v1/{p}/namespaces", nil)
			require.JSONEq(t, `{"namespaces":[["`+want+`"]]}`, string(b))
		}
	}
	viewVersion := `{"version-id":1,"schema-id":0,"timestamp-ms":1700000000000,"summary":{},` +
		`"representations":[{"type":"sql","sql":"SELECT 1","dialect":"spark"}],"default-namespace":["ns"]}`
	tx := func(changes ...string) string { return `{"table-changes":[` + strings.Join(changes, ",") + `]}` }
	rename := func(src, dst string) string {
		return `{"source":{"namespace":["ns"],"name":"` + src + `"},"destination":{"namespace":["ns"],"name":"` + dst + `"}}`
	}

	cases := []testCase{
		// Malformed JSON bodies.
		{name: "create namespace: malformed JSON", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["x1"]`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: not an object", method: "POST", path: "/v1/{p}/namespaces",
			body: `["x1"]`, code: bad, typ: "BadRequestException"},
		{name: "create namespace: wrong field type", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":"x1"}`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: empty namespace", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":[]}`, code: bad, typ: "BadRequestException"},
		{name: "create namespace: empty level", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["a",""]}`, code: bad, typ: "BadRequestException", after: noNamespace("a")},
		{name: "create namespace: trailing JSON value", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["x1"]} {"namespace":["x2"]}`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: trailing garbage", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["x1"]} garbage`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: trailing close brace", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["x1"]}}`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: trailing close bracket", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["x1"]}]`, code: bad, typ: "BadRequestException", after: noNamespace("x1")},
		{name: "create namespace: empty body", method: "POST", path: "/v1/{p}/namespaces",
			code: bad, typ: "BadRequestException"},
		{name: "create namespace: whitespace body", method: "POST", path: "/v1/{p}/namespaces",
			body: " \n", code: bad, typ: "BadRequestException"},
		{name: "create table: malformed JSON", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: `{"name":"x","schema":`, code: bad, typ: "BadRequestException"},
		{name: "create table: invalid schema", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: `{"name":"x","schema":{"type":"struct","fields":[{"id":1,"name":"a","type":"nope"}]}}`,
			code: bad, typ: "BadRequestException"},
		{name: "create table: no schema", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: `{"name":"x"}`, code: bad, typ: "BadRequestException"},
		{name: "create table: trailing data", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: createTableBody("x") + "{}", code: bad, typ: "BadRequestException"},
		{name: "create table: empty body", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			code: bad, typ: "BadRequestException"},
		{name: "commit: malformed JSON", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: `{"requirements":[`, code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: trailing data", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", "", setProps) + " x", code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: empty body", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			code: bad, typ: "BadRequestException", after: unchanged},
		{name: "rename: malformed JSON", method: "POST", path: "/v1/{p}/tables/rename",
			body: `{"source":`, code: bad, typ: "BadRequestException"},
		{name: "rename: trailing data", method: "POST", path: "/v1/{p}/tables/rename",
			body: rename("t", "z") + "}", code: bad, typ: "BadRequestException", after: unchanged},
		{name: "rename: empty body", method: "POST", path: "/v1/{p}/tables/rename",
			code: bad, typ: "BadRequestException"},
		{name: "rename: no destination name", method: "POST", path: "/v1/{p}/tables/rename",
			body: `{"source":{"namespace":["ns"],"name":"t"},"destination":{"namespace":["ns"]}}`,
			code: bad, typ: "BadRequestException"},
		{name: "transaction: malformed JSON", method: "POST", path: "/v1/{p}/transactions/commit",
			body: `{"table-changes":[{]}`, code: bad, typ: "BadRequestException"},
		{name: "transaction: trailing data", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", setProps)) + "[]", code: bad, typ: "BadRequestException", after: unchanged},
		{name: "transaction: empty body", method: "POST", path: "/v1/{p}/transactions/commit",
			code: bad, typ: "BadRequestException"},
		{name: "update properties: malformed JSON", method: "POST", path: "/v1/{p}/namespaces/ns/properties",
			body: `{"updates":`, code: bad, typ: "BadRequestException"},

		// Commit contents.
		{name: "commit: unknown update action", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", "", `{"action":"frobnicate"}`), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: update without action", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", "", `{"updates":{"k":"v"}}`), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: unknown requirement type", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", `{"type":"assert-frobnicated"}`, setProps), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: update that cannot apply", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", "", `{"action":"set-current-schema","schema-id":42}`), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: identifier does not match the path", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("t2", "", setProps), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "commit: assert-table-uuid fails", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", wrongUUID, setProps), code: conflict, typ: "CommitFailedException", after: unchanged},
		{name: "commit: assert-ref-snapshot-id fails", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":123}`, setProps),
			code: conflict, typ: "CommitFailedException", after: unchanged},
		{name: "commit: assert-create on an existing table", method: "POST", path: "/v1/{p}/namespaces/ns/tables/t",
			body: commitBody("", `{"type":"assert-create"}`, setProps), code: conflict, typ: "CommitFailedException", after: unchanged},
		{name: "commit: missing table", method: "POST", path: "/v1/{p}/namespaces/ns/tables/missing",
			body: commitBody("", "", setProps), code: notFound, typ: "NoSuchTableException"},
		{name: "commit: missing namespace", method: "POST", path: "/v1/{p}/namespaces/nope/tables/t",
			body: commitBody("", "", setProps), code: notFound, typ: "NoSuchTableException"},

		// Missing objects.
		{name: "create table: missing namespace", method: "POST", path: "/v1/{p}/namespaces/nope/tables",
			body: createTableBody("x"), code: notFound, typ: "NoSuchNamespaceException", after: noNamespace("nope")},
		{name: "load table: missing table", method: "GET", path: "/v1/{p}/namespaces/ns/tables/missing",
			code: notFound, typ: "NoSuchTableException"},
		{name: "load table: missing namespace", method: "GET", path: "/v1/{p}/namespaces/nope/tables/t",
			code: notFound, typ: "NoSuchTableException"},
		{name: "table exists: missing", method: "HEAD", path: "/v1/{p}/namespaces/ns/tables/missing",
			code: notFound, typ: "NoSuchTableException"},
		{name: "drop table: missing", method: "DELETE", path: "/v1/{p}/namespaces/ns/tables/missing",
			code: notFound, typ: "NoSuchTableException"},
		{name: "load namespace: missing", method: "GET", path: "/v1/{p}/namespaces/nope",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "load namespace: missing child", method: "GET", path: "/v1/{p}/namespaces/ns%1Fnope",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "namespace exists: missing", method: "HEAD", path: "/v1/{p}/namespaces/nope",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "drop namespace: missing", method: "DELETE", path: "/v1/{p}/namespaces/nope",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "list tables: missing namespace", method: "GET", path: "/v1/{p}/namespaces/nope/tables",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "update properties: missing namespace", method: "POST", path: "/v1/{p}/namespaces/nope/properties",
			body: `{"updates":{"a":"b"}}`, code: notFound, typ: "NoSuchNamespaceException"},
		{name: "rename: missing source", method: "POST", path: "/v1/{p}/tables/rename",
			body: rename("missing", "z"), code: notFound, typ: "NoSuchTableException"},
		{name: "rename: missing destination namespace", method: "POST", path: "/v1/{p}/tables/rename",
			body: `{"source":{"namespace":["ns"],"name":"t"},"destination":{"namespace":["nope"],"name":"t"}}`,
			code: notFound, typ: "NoSuchNamespaceException", after: unchanged},

		// Bad namespace encodings.
		{name: "namespace: bad percent-encoding", method: "GET", path: "/v1/{p}/namespaces/%ZZ",
			code: bad}, // refused by net/http before any handler runs: no JSON body
		{name: "namespace: empty level", method: "GET", path: "/v1/{p}/namespaces/ns%1F%1Fx",
			code: bad, typ: "BadRequestException"},
		{name: "namespace: trailing empty level", method: "GET", path: "/v1/{p}/namespaces/ns%1F/tables",
			code: bad, typ: "BadRequestException"},
		{name: "namespace: empty segment", method: "GET", path: "/v1/{p}/namespaces//tables",
			code: bad, typ: "BadRequestException"},
		{name: "list namespaces: parent with empty level", method: "GET", path: "/v1/{p}/namespaces?parent=ns%1F%1Fx",
			code: bad, typ: "BadRequestException"},
		{name: "list namespaces: parent with bad percent-encoding", method: "GET", path: "/v1/{p}/namespaces?parent=%ZZ",
			code: bad, typ: "BadRequestException"},
		{name: "list namespaces: missing parent", method: "GET", path: "/v1/{p}/namespaces?parent=nope",
			code: notFound, typ: "NoSuchNamespaceException"},
		{name: "table name: bad percent-encoding", method: "GET", path: "/v1/{p}/namespaces/ns/tables/t%G1",
			code: bad}, // refused by net/http

		// Conflicts.
		{name: "create namespace: exists", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["ns"]}`, code: conflict, typ: "AlreadyExistsException"},
		{name: "create table: exists", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: createTableBody("t"), code: conflict, typ: "AlreadyExistsException", after: unchanged},
		{name: "create table: staged, exists", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: `{"name":"t","stage-create":true,"schema":` + badInputSchema + `}`,
			code: conflict, typ: "AlreadyExistsException", after: unchanged},
		{name: "rename onto an existing table", method: "POST", path: "/v1/{p}/tables/rename",
			body: rename("t", "u"), code: conflict, typ: "AlreadyExistsException", after: unchanged},
		{name: "create view over a table name", method: "POST", path: "/v1/{p}/namespaces/ns/views",
			body: `{"name":"t","schema":` + badInputSchema + `,"view-version":` + viewVersion + `}`,
			code: conflict, typ: "AlreadyExistsException", after: unchanged},
		{name: "drop a non-empty namespace", method: "DELETE", path: "/v1/{p}/namespaces/ns",
			code: conflict, typ: "NamespaceNotEmptyException", after: unchanged},
		{name: "update properties: key removed and updated", method: "POST", path: "/v1/{p}/namespaces/ns/properties",
			body: `{"removals":["a","b"],"updates":{"b":"1","c":"2"}}`, code: unprocessed, typ: "UnprocessableEntityException"},

		// Query parameters.
		{name: "list namespaces: pageSize=0", method: "GET", path: "/v1/{p}/namespaces?pageSize=0",
			code: bad, typ: "BadRequestException"},
		{name: "list namespaces: pageSize=abc", method: "GET", path: "/v1/{p}/namespaces?pageSize=abc",
			code: bad, typ: "BadRequestException"},
		{name: "list tables: pageSize=-1", method: "GET", path: "/v1/{p}/namespaces/ns/tables?pageSize=-1",
			code: bad, typ: "BadRequestException"},
		{name: "list tables: pageSize=0", method: "GET", path: "/v1/{p}/namespaces/ns/tables?pageSize=0",
			code: bad, typ: "BadRequestException"},
		{name: "list tables: invalid pageToken", method: "GET", path: "/v1/{p}/namespaces/ns/tables?pageToken=%21%21%21",
			code: bad, typ: "BadRequestException"},
		{name: "list namespaces: invalid pageToken", method: "GET", path: "/v1/{p}/namespaces?pageToken=not+base64",
			code: bad, typ: "BadRequestException"},
		{name: "list views: pageSize=abc", method: "GET", path: "/v1/{p}/namespaces/ns/views?pageSize=abc",
			code: bad, typ: "BadRequestException"},
		{name: "load table: snapshots=bogus", method: "GET", path: "/v1/{p}/namespaces/ns/tables/t?snapshots=bogus",
			code: bad, typ: "BadRequestException"},
		{name: "drop namespace: recursive=maybe", method: "DELETE", path: "/v1/{p}/namespaces/ns?recursive=maybe",
			code: bad, typ: "BadRequestException", after: unchanged},
		{name: "drop table: purgeRequested=maybe", method: "DELETE", path: "/v1/{p}/namespaces/ns/tables/t?purgeRequested=maybe",
			code: bad, typ: "BadRequestException", after: unchanged},

		// Multi-table transactions.
		{name: "transaction: no changes", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(), code: bad, typ: "BadRequestException"},
		{name: "transaction: no table-changes field", method: "POST", path: "/v1/{p}/transactions/commit",
			body: `{}`, code: bad, typ: "BadRequestException"},
		{name: "transaction: change without identifier", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", setProps), commitBody("", "", setProps)),
			code: bad, typ: "BadRequestException", after: unchanged},
		{name: "transaction: identifier without namespace", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(`{"identifier":{"namespace":[],"name":"t"},"requirements":[],"updates":[` + setProps + `]}`),
			code: bad, typ: "BadRequestException", after: unchanged},
		{name: "transaction: same table twice", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", setProps), commitBody("t", "", setProps)),
			code: bad, typ: "BadRequestException", after: unchanged},
		{name: "transaction: unknown update action", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", `{"action":"frobnicate"}`)), code: bad, typ: "BadRequestException", after: unchanged},
		{name: "transaction: second table's requirement fails", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", setProps), commitBody("t2", wrongUUID, setProps)),
			code: conflict, typ: "CommitFailedException", after: unchanged},
		{name: "transaction: first table's requirement fails", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":1}`, setProps),
				commitBody("t2", "", setProps)),
			code: conflict, typ: "CommitFailedException", after: unchanged},
		{name: "transaction: one table is missing", method: "POST", path: "/v1/{p}/transactions/commit",
			body: tx(commitBody("t", "", setProps), commitBody("missing", "", setProps)),
			code: notFound, typ: "NoSuchTableException", after: unchanged},

		// Unknown endpoints and methods.
		{name: "unknown path", method: "GET", path: "/v1/{p}/nope", code: notFound, typ: "NotFoundException"},
		{name: "unknown table sub-resource", method: "GET", path: "/v1/{p}/namespaces/ns/tables/t/nope",
			code: notFound, typ: "NotFoundException"},
		{name: "unknown prefix", method: "GET", path: "/v1/other/namespaces", code: notFound, typ: "NotFoundException"},
		{name: "config under a prefix", method: "GET", path: "/v1/{p}/config", code: notFound, typ: "NotFoundException"},
		{name: "not under /v1", method: "GET", path: "/v2/namespaces", code: notFound, typ: "NotFoundException"},
		{name: "wrong method on namespaces", method: "PUT", path: "/v1/{p}/namespaces", body: `{}`,
			code: notAllowed, typ: "UnsupportedOperationException"},
		{name: "wrong method on a table", method: "PATCH", path: "/v1/{p}/namespaces/ns/tables/t", body: `{}`,
			code: notAllowed, typ: "UnsupportedOperationException", after: unchanged},
		{name: "wrong method on config", method: "DELETE", path: "/v1/config", code: notAllowed, typ: "UnsupportedOperationException"},
		{name: "HEAD on rename", method: "HEAD", path: "/v1/{p}/tables/rename", code: notAllowed, typ: "UnsupportedOperationException"},
		{name: "HEAD on a missing view", method: "HEAD", path: "/v1/{p}/namespaces/ns/views/nope",
			code: notFound, typ: "NoSuchViewException"},
		// Names the catalog cannot store are refused as such, not as
		// "does not exist".
		{name: "slash in a table name (path)", method: "GET", path: "/v1/{p}/namespaces/ns/tables/t%2F1",
			code: bad, typ: "BadRequestException"},
		{name: "slash in a table name (create)", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: createTableBody("t/1"), code: bad, typ: "BadRequestException"},
		{name: "slash in a namespace", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["a/b"]}`, code: bad, typ: "BadRequestException", after: onlyNamespace("ns")},
		{name: "NUL in a namespace", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["a\u0000b"]}`, code: bad, typ: "BadRequestException", after: noNamespace("ab")},
		{name: "control character in a table name", method: "POST", path: "/v1/{p}/namespaces/ns/tables",
			body: createTableBody(`t\u0007`), code: bad, typ: "BadRequestException"},
		{name: "dot-dot view name", method: "POST", path: "/v1/{p}/namespaces/ns/views",
			body: `{"name":"..","schema":` + badInputSchema + `,"view-version":` + viewVersion + `}`,
			code: bad, typ: "BadRequestException"},
		{name: "rename to a slash name", method: "POST", path: "/v1/{p}/tables/rename",
			body: rename("u", "u/2"), code: bad, typ: "BadRequestException"},
		{name: "invalid UTF-8 in a path name", method: "GET", path: "/v1/{p}/namespaces/ns/tables/%FF",
			code: bad, typ: "BadRequestException"},
		// A child namespace needs its parent.
		{name: "child without parent", method: "POST", path: "/v1/{p}/namespaces",
			body: `{"namespace":["orphan","child"]}`, code: notFound, typ: "NoSuchNamespaceException",
			after: noNamespace("orphan")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			rsp, b := c.do(t, tc.method, tc.path, body)
			requireErrorModel(t, tc.method, rsp, b, tc.code, tc.typ)
			if tc.method == http.MethodHead {
				requireNoHeadBody(t, cat, c.prefix, tc.path, tc.code)
			}
			if tc.after != nil {
				tc.after(t)
			}
		})
	}

	t.Run("body over 32 MiB", func(t *testing.T) {
		big := `{"namespace":["big"],"properties":{"k":"` + strings.Repeat("x", 33<<20) + `"}}`
		rsp, b := c.do(t, http.MethodPost, "/v1/{p}/namespaces", strings.NewReader(big))
		requireErrorModel(t, http.MethodPost, rsp, b, http.StatusRequestEntityTooLarge, "RequestEntityTooLargeException")
		noNamespace("big")(t)
	})

	t.Run("everything is unchanged", unchanged)
}

// requireErrorModel checks status, and for typ != "" the ErrorModel body
// {"error":{"message","type","code"}}; HEAD answers carry no body.
func requireErrorModel(t *testing.T, method string, rsp *http.Response, body []byte, code int, typ string) {
	t.Helper()
	require.Equal(t, code, rsp.StatusCode, "body: %s", body)
	if method == http.MethodHead {
		require.Empty(t, body)
		return
	}
	if typ == "" {
		return
	}
	require.Equal(t, "application/json", rsp.Header.Get("Content-Type"))
	var e struct {
		Error *struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Code    *int    `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "body: %s", body)
	require.NotNil(t, e.Error, "body: %s", body)
	require.NotNil(t, e.Error.Type, "body: %s", body)
	require.NotNil(t, e.Error.Code, "body: %s", body)
	require.NotNil(t, e.Error.Message, "body: %s", body)
	require.Equal(t, typ, *e.Error.Type, "body: %s", body)
	require.Equal(t, code, *e.Error.Code, "body: %s", body)
	require.NotEmpty(t, *e.Error.Message, "body: %s", body)
}

// requireNoHeadBody serves a HEAD request straight into a recorder, which
// (unlike a client over the network) would see any body the handler
// writes.
func requireNoHeadBody(t *testing.T, h http.Handler, prefix, path string, code int) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, strings.ReplaceAll(path, "{p}", prefix), nil))
	require.Equal(t, code, rec.Code)
	require.Empty(t, rec.Body.String(), fmt.Sprintf("HEAD %s wrote a body", path))
}
