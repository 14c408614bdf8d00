package embedded_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

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
