package sharing

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/actions"
)

func TestParseRoute(t *testing.T) {
	good := []struct {
		method, path string
		want         Route
	}{
		{"GET", "/shares", Route{Op: OpListShares}},
		{"GET", "/shares/", Route{Op: OpListShares}},
		{"GET", "/shares/s", Route{Op: OpGetShare, Share: "s"}},
		{"GET", "/shares/s/schemas", Route{Op: OpListSchemas, Share: "s"}},
		{"GET", "/shares/s/all-tables", Route{Op: OpListAllTables, Share: "s"}},
		{"GET", "/shares/s/schemas/c/tables", Route{Op: OpListTables, Share: "s", Schema: "c"}},
		{"GET", "/shares/s/schemas/c/tables/t/version", Route{Op: OpTableVersion, Share: "s", Schema: "c", Table: "t"}},
		{"HEAD", "/shares/s/schemas/c/tables/t", Route{Op: OpTableVersion, Share: "s", Schema: "c", Table: "t"}},
		{"GET", "/shares/s/schemas/c/tables/t/metadata", Route{Op: OpTableMetadata, Share: "s", Schema: "c", Table: "t"}},
		{"POST", "/shares/s/schemas/c/tables/t/query", Route{Op: OpQueryTable, Share: "s", Schema: "c", Table: "t"}},
		{"GET", "/shares/s/schemas/c/tables/t/changes", Route{Op: OpQueryChanges, Share: "s", Schema: "c", Table: "t"}},
		{"GET", "/shares/my%20share/schemas/c/tables/t/changes", Route{Op: OpQueryChanges, Share: "my share", Schema: "c", Table: "t"}},
		{"GET", "/files/abc", Route{Op: OpGetFile, File: "abc"}},
		{"HEAD", "/files/abc", Route{Op: OpGetFile, File: "abc"}},
	}
	for _, c := range good {
		got, err := ParseRoute(c.method, c.path)
		require.Nil(t, err, "%s %s", c.method, c.path)
		assert.Equal(t, c.want, got, "%s %s", c.method, c.path)
	}
	bad := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "", 404, CodeNotFound},
		{"GET", "/nope", 404, CodeNotFound},
		{"POST", "/shares", 404, CodeNotFound},
		{"GET", "/shares/s/schemas/c/tables/t/query", 404, CodeNotFound},
		{"POST", "/shares/s/schemas/c/tables/t/metadata", 404, CodeNotFound},
		{"GET", "/shares/s/schemas/c/tables/t/unknown", 404, CodeNotFound},
		{"DELETE", "/files/abc", 404, CodeNotFound},
		{"GET", "/shares/%zz", 400, CodeMalformedRequest},
		{"GET", "/shares//schemas", 400, CodeMalformedRequest},
		{"GET", "/shares/" + strings.Repeat("x", 256), 400, CodeInvalidParameter},
		{"GET", "/shares/a/b/c/d/e/f/g/h/i", 404, CodeNotFound},
	}
	for _, c := range bad {
		_, err := ParseRoute(c.method, c.path)
		require.NotNil(t, err, "%s %s", c.method, c.path)
		assert.Equal(t, c.status, err.Code, "%s %s", c.method, c.path)
		assert.Equal(t, c.code, err.Type, "%s %s", c.method, c.path)
	}
}

func TestParseCapabilities(t *testing.T) {
	c, err := ParseCapabilities("responseFormat=Delta,parquet; readerFeatures=DeletionVectors,columnMapping;includeEndStreamAction=TRUE;asyncquery=true")
	require.Nil(t, err)
	assert.Equal(t, []actions.Format{actions.Delta, actions.Parquet}, c.Formats)
	assert.Equal(t, map[string]bool{"deletionvectors": true, "columnmapping": true}, c.ReaderFeatures)
	assert.True(t, c.EndStream)

	c, err = ParseCapabilities("")
	require.Nil(t, err)
	assert.True(t, c.accepts(actions.Parquet))
	assert.False(t, c.accepts(actions.Delta))
	assert.Nil(t, c.ReaderFeatures)

	for _, h := range []string{"responseformat=csv", "responseformat=delta,json"} {
		_, err := ParseCapabilities(h)
		require.NotNil(t, err, h)
		assert.Equal(t, CodeInvalidParameter, err.Type)
	}
	for _, h := range []string{";;;", "=", "includeendstreamaction", "unknown=1", "responseformat="} {
		_, err := ParseCapabilities(h)
		assert.Nil(t, err, "%q is ignorable", h)
	}
}

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(strings.NewReader(`{"predicateHints":["a = 1"],"limitHint":5,"version":3,"futureField":1}`))
	require.Nil(t, err)
	assert.Equal(t, []string{"a = 1"}, q.PredicateHints)
	assert.EqualValues(t, 5, *q.LimitHint)
	assert.EqualValues(t, 3, *q.Version)
	for _, body := range []string{"", "  ", "{}"} {
		_, err := ParseQuery(strings.NewReader(body))
		assert.Nil(t, err, "%q", body)
	}
	// jsonPredicateHints: the protocol's string, the object some clients
	// send (taken as its JSON text), anything else dropped, never a failure.
	const hint = `{"op":"equal","children":[{"op":"column","name":"a","valueType":"int"},{"op":"literal","value":"1","valueType":"int"}]}`
	for body, want := range map[string]string{
		`{"jsonPredicateHints":` + strconv.Quote(hint) + `}`: hint,
		`{"jsonPredicateHints":` + hint + `}`:                hint,
		`{"jsonPredicateHints":[1,2]}`:                       "",
		`{"jsonPredicateHints":42}`:                          "",
		`{"jsonPredicateHints":null}`:                        "",
	} {
		q, err := ParseQuery(strings.NewReader(body))
		require.Nil(t, err, body)
		assert.Equal(t, want, string(q.JSONPredicateHints), body)
	}
	bad := []struct {
		body, code string
	}{
		{`{`, CodeMalformedRequest},
		{`[]`, CodeMalformedRequest},
		{`{"version":"one"}`, CodeMalformedRequest},
		{`{"limitHint":1.5}`, CodeMalformedRequest},
		{`{"predicateHints":"a = 1"}`, CodeMalformedRequest},
		{`{"version":1,"timestamp":"2022-01-01T00:00:00Z"}`, CodeInvalidParameter},
		{`{"version":1,"startingVersion":1}`, CodeInvalidParameter},
		{`{"timestamp":"2022-01-01T00:00:00Z","startingVersion":1}`, CodeInvalidParameter},
		{`{"endingVersion":3}`, CodeInvalidParameter},
		{`{"startingVersion":4,"endingVersion":3}`, CodeInvalidParameter},
		{`{"version":-1}`, CodeInvalidParameter},
		{`{"limitHint":-1}`, CodeInvalidParameter},
		{`{"timestamp":"yesterday"}`, CodeInvalidParameter},
		{`{"timestamp":"2022-01-01"}`, CodeInvalidParameter},
	}
	for _, c := range bad {
		_, err := ParseQuery(strings.NewReader(c.body))
		require.NotNil(t, err, c.body)
		assert.Equal(t, c.code, err.Type, c.body)
		assert.Equal(t, http.StatusBadRequest, err.Code, c.body)
	}
	_, err = ParseQuery(strings.NewReader(`{"predicateHints":["` + strings.Repeat("x", maxQueryBody) + `"]}`))
	require.NotNil(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, err.Code)
}

func TestParseChanges(t *testing.T) {
	c, err := ParseChanges(url.Values{"startingVersion": {"2"}, "endingTimestamp": {"2022-01-01T00:00:00Z"}, "includeHistoricalMetadata": {"true"}})
	require.Nil(t, err)
	assert.EqualValues(t, 2, *c.Start.Version)
	assert.Equal(t, 2022, c.End.Timestamp.Year())
	assert.True(t, c.HistoricalMetadata)
	bad := []url.Values{
		{},
		{"endingVersion": {"3"}},
		{"startingVersion": {"x"}},
		{"startingVersion": {"-1"}},
		{"startingVersion": {"1"}, "startingTimestamp": {"2022-01-01T00:00:00Z"}},
		{"startingVersion": {"1"}, "endingVersion": {"2"}, "endingTimestamp": {"2022-01-01T00:00:00Z"}},
		{"startingVersion": {"3"}, "endingVersion": {"2"}},
		{"startingTimestamp": {"not a time"}},
		{"startingVersion": {"1"}, "includeHistoricalMetadata": {"maybe"}},
	}
	for _, q := range bad {
		_, err := ParseChanges(q)
		require.NotNil(t, err, "%v", q)
		assert.Equal(t, CodeInvalidParameter, err.Type, "%v", q)
	}
}

func TestParsePage(t *testing.T) {
	p, err := ParsePage(url.Values{"maxResults": {"0"}, "pageToken": {"t"}})
	require.Nil(t, err)
	assert.Equal(t, Page{Max: 0, Token: "t"}, p)
	p, err = ParsePage(url.Values{})
	require.Nil(t, err)
	assert.Equal(t, -1, p.Max)
	for _, v := range []string{"-1", "x", "1.5", "2147483648"} {
		_, err := ParsePage(url.Values{"maxResults": {v}})
		require.NotNil(t, err, v)
		assert.Equal(t, CodeInvalidParameter, err.Type)
	}
}

func TestValidateShares(t *testing.T) {
	ns := []NamespaceRef{{Catalog: "c", Namespace: []string{"n"}}}
	ok := []Share{{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: ns}}}}
	require.NoError(t, Validate(ok))
	bad := map[string][]Share{
		"unnamed share":        {{Schemas: []Schema{{Name: "s", Namespaces: ns}}}},
		"duplicate share":      {ok[0], {Name: "A", Schemas: ok[0].Schemas}},
		"duplicate schema":     {{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: ns}, {Name: "S", Namespaces: ns}}}},
		"empty schema":         {{Name: "a", Schemas: []Schema{{Name: "s"}}}},
		"slash in name":        {{Name: "a/b", Schemas: ok[0].Schemas}},
		"incomplete table":     {{Name: "a", Schemas: []Schema{{Name: "s", Tables: []TableRef{{Name: "t", Catalog: "c"}}}}}},
		"duplicate table":      {{Name: "a", Schemas: []Schema{{Name: "s", Tables: []TableRef{{Name: "t", Catalog: "c", Namespace: []string{"n"}, Table: "x"}, {Name: "T", Catalog: "c", Namespace: []string{"n"}, Table: "y"}}}}}},
		"namespace no catalog": {{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: []NamespaceRef{{Namespace: []string{"n"}}}}}}},
	}
	for name, shares := range bad {
		assert.Error(t, Validate(shares), name)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`{}`, `{"version":1}`, `{"predicateHints":["a=1"],"limitHint":3}`, `{"timestamp":"2022-01-01T00:00:00Z"}`, `{"startingVersion":1,"endingVersion":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		q, err := ParseQuery(strings.NewReader(body))
		if err != nil {
			if err.Code != http.StatusBadRequest && err.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d for %q", err.Code, body)
			}
			return
		}
		if q.check() != nil {
			t.Fatalf("accepted a query its own check refuses: %q", body)
		}
	})
}

func FuzzParseCapabilities(f *testing.F) {
	for _, s := range []string{"", "responseformat=delta", "responseformat=delta,parquet;readerfeatures=a,b;includeendstreamaction=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		c, err := ParseCapabilities(h)
		if err != nil {
			return
		}
		for _, f := range c.Formats {
			if f != actions.Parquet && f != actions.Delta {
				t.Fatalf("accepted format %q", f)
			}
		}
	})
}

func TestParseFileIDHash(t *testing.T) {
	for in, want := range map[string]string{"": "", "parquet": "parquet", "Delta": "delta", " PARQUET ": "parquet"} {
		got, err := ParseFileIDHash(in)
		assert.Nil(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"md5", "parquet,delta", "json", "delta;x"} {
		_, err := ParseFileIDHash(bad)
		if assert.NotNil(t, err, bad) {
			assert.Equal(t, 400, err.Code)
		}
	}
}
