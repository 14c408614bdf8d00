package icerest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ParseRequest reads a request once into the value every stage reads: the
// query parsed and checked, the body held and validated, and what the
// body names (tables, locations) read from that one parse.
func TestParseRequest(t *testing.T) {
	body := `{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],` +
		`"updates":[{"action":"set-location","location":"s3://b/x"}]}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/transactions/commit?extra=1", strings.NewReader(body))
	rt := Route{Operation: OpCommitTransaction}
	q, err := ParseRequest(r, rt)
	require.NoError(t, err)
	assert.Equal(t, rt, q.Route)
	assert.Equal(t, url.Values{"extra": {"1"}}, q.Query)
	assert.Equal(t, body, string(q.Body))
	assert.Equal(t, []Identifier{{Namespace: []string{"a"}, Name: "x"}}, q.Touched.Identifiers)
	assert.Equal(t, []string{"s3://b/x"}, q.Locations)
	held, err := HoldBody(r)
	require.NoError(t, err)
	assert.Same(t, &q.Body[0], &held[0], "the body is held once; r.Body reads the same bytes")
	rest, _ := io.ReadAll(r.Body)
	assert.Equal(t, body, string(rest))

	// A load: no query, no body, nothing parsed.
	load := httptest.NewRequest(http.MethodGet, "/v1/namespaces/ns/tables/t", nil)
	q, err = ParseRequest(load, Route{Operation: OpLoadTable})
	require.NoError(t, err)
	assert.Nil(t, q.Query)
	assert.Nil(t, q.Body)
	assert.Equal(t, 0.0, testing.AllocsPerRun(20, func() { _, _ = ParseRequest(load, Route{Operation: OpLoadTable}) }),
		"a bodiless load without a query allocates nothing")
}

// What ParseRequest refuses, each a 4xx in the Iceberg error model: a
// query CheckQuery refuses, a body over its limit, a body ValidateBody
// refuses.
func TestParseRequestRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      *http.Request
		op     string
		status int
	}{
		{"query type", httptest.NewRequest(http.MethodGet, "/v1/namespaces?pageSize=abc", nil), OpListNamespaces, http.StatusBadRequest},
		{"query syntax", httptest.NewRequest(http.MethodGet, "/v1/namespaces?a=%zz", nil), OpListNamespaces, http.StatusBadRequest},
		{"body", httptest.NewRequest(http.MethodPost, "/v1/namespaces", strings.NewReader(`{"namespace":"a"}`)), OpCreateNamespace, http.StatusBadRequest},
		{"repeated key", httptest.NewRequest(http.MethodPost, "/v1/namespaces",
			strings.NewReader(`{"namespace":["a"],"namespace":["b"]}`)), OpCreateNamespace, http.StatusBadRequest},
	} {
		_, err := ParseRequest(c.r, Route{Operation: c.op})
		require.Error(t, err, c.name)
		assert.Equal(t, c.status, AsError(err).Code, c.name)
	}
	big := httptest.NewRequest(http.MethodPost, "/v1/namespaces", strings.NewReader(`{"namespace":["a"]}`))
	big.Body = http.MaxBytesReader(httptest.NewRecorder(), big.Body, 4)
	_, err := ParseRequest(big, Route{Operation: OpCreateNamespace})
	assert.Equal(t, http.StatusRequestEntityTooLarge, AsError(err).Code)
}

// The commits of a transaction are read from the same parse, for replay
// to find them in their tables (the snapshots they add, the refs they
// move and assert, the table they create) and for the gateway's record of
// commits (their actions, each once, and their snapshots' operations).
func TestParseRequestCommits(t *testing.T) {
	body := `{"table-changes":[` +
		`{"identifier":{"namespace":["a"],"name":"x"},"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":1}],` +
		`"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":7,"timestamp-ms":1,"manifest-list":"s3://b/m","summary":{"operation":"append"}}},` +
		`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":7}]},` +
		`{"identifier":{"namespace":["b"],"name":"y"},"requirements":[{"type":"assert-create"}],` +
		`"updates":[{"action":"assign-uuid","uuid":"u-1"}]}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/transactions/commit", strings.NewReader(body))
	q, err := ParseRequest(r, Route{Operation: OpCommitTransaction})
	require.NoError(t, err)
	assert.Equal(t, []Commit{
		{Table: Identifier{Namespace: []string{"a"}, Name: "x"}, Snapshots: []int64{7}, Moved: []string{"main"}, Asserted: []string{"main"},
			Actions: []string{"add-snapshot", "set-snapshot-ref"}, Operations: []string{"append"}},
		{Table: Identifier{Namespace: []string{"b"}, Name: "y"}, AssertCreate: true, UUID: "u-1", Actions: []string{"assign-uuid"}},
	}, q.Commits)

	r = httptest.NewRequest(http.MethodPost, "/v1/namespaces/a/tables/x",
		strings.NewReader(`{"requirements":[],"updates":[{"action":"assign-uuid","uuid":"u-2"},`+
			`{"action":"set-properties","updates":{"a":"1"}},{"action":"set-properties","updates":{"b":"2"}}]}`))
	q, err = ParseRequest(r, Route{Operation: OpUpdateTable})
	require.NoError(t, err)
	assert.Equal(t, []Commit{{UUID: "u-2", Actions: []string{"assign-uuid", "set-properties"}}}, q.Commits)
}
