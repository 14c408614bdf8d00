package sharing

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

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
		require.NoError(t, err, "%s %s", c.method, c.path)
		assert.Equal(t, c.want, got, "%s %s", c.method, c.path)
	}
	bad := []struct {
		method, path string
		status       int
		code, msg    string
	}{
		{"GET", "", 404, CodeNotFound, "no Delta Sharing operation is served at GET "},
		{"GET", "/nope", 404, CodeNotFound, "no Delta Sharing operation is served at GET /nope"},
		{"POST", "/shares", 404, CodeNotFound, "no Delta Sharing operation is served at POST /shares"},
		{"GET", "/shares/s/schemas/c/tables/t/query", 404, CodeNotFound, "no Delta Sharing operation is served at GET /shares/s/schemas/c/tables/t/query"},
		{"POST", "/shares/s/schemas/c/tables/t/metadata", 404, CodeNotFound, "no Delta Sharing operation is served at POST /shares/s/schemas/c/tables/t/metadata"},
		{"GET", "/shares/s/schemas/c/tables/t/unknown", 404, CodeNotFound, "no Delta Sharing operation is served at GET /shares/s/schemas/c/tables/t/unknown"},
		{"DELETE", "/files/abc", 404, CodeNotFound, "no Delta Sharing operation is served at DELETE /files/abc"},
		{"GET", "/shares/%zz", 400, CodeMalformedRequest, `malformed path segment "%zz"`},
		{"GET", "/shares//schemas", 400, CodeMalformedRequest, `malformed path segment ""`},
		{"GET", "/shares/" + strings.Repeat("x", 256), 400, CodeInvalidParameter, "name longer than 255 characters"},
		// Too many segments: the method is not named (as always).
		{"GET", "/shares/a/b/c/d/e/f/g/h/i", 404, CodeNotFound, "no Delta Sharing operation is served at  shares/a/b/c/d/e/f/g/h/i"},
	}
	for _, c := range bad {
		_, err := ParseRoute(c.method, c.path)
		requireError(t, err, c.status, c.code, c.msg, "%s %s", c.method, c.path)
	}
}

func TestParseCapabilities(t *testing.T) {
	c, err := ParseCapabilities("responseFormat=Delta,parquet; readerFeatures=DeletionVectors,columnMapping;includeEndStreamAction=TRUE;asyncquery=true")
	require.NoError(t, err)
	assert.Equal(t, []actions.Format{actions.Delta, actions.Parquet}, c.Formats)
	assert.Equal(t, map[string]bool{"deletionvectors": true, "columnmapping": true}, c.ReaderFeatures)
	assert.True(t, c.EndStream)

	c, err = ParseCapabilities("")
	require.NoError(t, err)
	assert.True(t, c.accepts(actions.Parquet))
	assert.False(t, c.accepts(actions.Delta))
	assert.Nil(t, c.ReaderFeatures)

	for h, msg := range map[string]string{
		"responseformat=csv":        `unsupported responseformat "csv" (parquet or delta)`,
		"responseformat=delta,json": `unsupported responseformat "json" (parquet or delta)`,
		"ResponseFormat=JSON":       `unsupported responseformat "json" (parquet or delta)`,
	} {
		_, err := ParseCapabilities(h)
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, msg, h)
	}
	for _, h := range []string{";;;", "=", "includeendstreamaction", "unknown=1", "responseformat="} {
		_, err := ParseCapabilities(h)
		assert.NoError(t, err, "%q is ignorable", h)
	}
}

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(strings.NewReader(`{"predicateHints":["a = 1"],"limitHint":5,"version":3,"futureField":1}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a = 1"}, q.PredicateHints)
	assert.EqualValues(t, 5, *q.LimitHint)
	assert.EqualValues(t, 3, *q.Version)
	for _, body := range []string{"", "  ", "{}"} {
		_, err := ParseQuery(strings.NewReader(body))
		assert.NoError(t, err, "%q", body)
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
		require.NoError(t, err, body)
		assert.Equal(t, want, string(q.JSONPredicateHints), body)
	}
	// A body that is not a query quotes encoding/json, naming the field.
	const notQuery = "request body is not a valid query: "
	for body, field := range map[string]string{
		`{`:                          "unexpected end of JSON input",
		`[]`:                         "cannot unmarshal array",
		`{"version":"one"}`:          "QueryRequest.version",
		`{"limitHint":1.5}`:          "at limitHint: number 1.5 does not fit int64",
		`{"predicateHints":"a = 1"}`: "QueryRequest.predicateHints",
	} {
		_, err := ParseQuery(strings.NewReader(body))
		requireErrorContains(t, err, http.StatusBadRequest, CodeMalformedRequest, []string{notQuery, field}, body)
		assert.True(t, strings.HasPrefix(AsError(err).Message, notQuery), body)
	}
	const exclusive = "version, timestamp and startingVersion are mutually exclusive"
	const negative = "version, startingVersion, endingVersion and limitHint must not be negative"
	for body, msg := range map[string]string{
		`{"version":1,"timestamp":"2022-01-01T00:00:00Z"}`:         exclusive,
		`{"version":1,"startingVersion":1}`:                        exclusive,
		`{"timestamp":"2022-01-01T00:00:00Z","startingVersion":1}`: exclusive,
		`{"endingVersion":3}`:                                      "endingVersion is only valid with startingVersion",
		`{"startingVersion":4,"endingVersion":3}`:                  "endingVersion 3 is before startingVersion 4",
		`{"version":-1}`:                                           negative,
		`{"limitHint":-1}`:                                         negative,
		`{"timestamp":"yesterday"}`:                                `timestamp "yesterday" is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)`,
		`{"timestamp":"2022-01-01"}`:                               `timestamp "2022-01-01" is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)`,
	} {
		_, err := ParseQuery(strings.NewReader(body))
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, msg, body)
	}
	_, err = ParseQuery(strings.NewReader(`{"predicateHints":["` + strings.Repeat("x", maxQueryBody) + `"]}`))
	requireError(t, err, http.StatusRequestEntityTooLarge, CodeMalformedRequest, "request body exceeds 1048576 bytes")
}

func TestParseChanges(t *testing.T) {
	c, err := ParseChanges(url.Values{"startingVersion": {"2"}, "endingTimestamp": {"2022-01-01T00:00:00Z"}, "includeHistoricalMetadata": {"true"}})
	require.NoError(t, err)
	assert.EqualValues(t, 2, *c.Start.Version)
	assert.Equal(t, 2022, c.End.Timestamp.Year())
	assert.True(t, c.HistoricalMetadata)
	const required = "startingVersion or startingTimestamp is required"
	bad := []struct {
		q   url.Values
		msg string
	}{
		{url.Values{}, required},
		{url.Values{"endingVersion": {"3"}}, required},
		{url.Values{"startingVersion": {"x"}}, `startingVersion must be a non-negative integer, not "x"`},
		{url.Values{"startingVersion": {"-1"}}, `startingVersion must be a non-negative integer, not "-1"`},
		{url.Values{"startingVersion": {"1"}, "endingVersion": {"x"}}, `endingVersion must be a non-negative integer, not "x"`},
		{url.Values{"startingVersion": {"1"}, "startingTimestamp": {"2022-01-01T00:00:00Z"}}, "startingVersion and startingTimestamp are mutually exclusive"},
		{url.Values{"startingVersion": {"1"}, "endingVersion": {"2"}, "endingTimestamp": {"2022-01-01T00:00:00Z"}}, "endingVersion and endingTimestamp are mutually exclusive"},
		{url.Values{"startingVersion": {"3"}, "endingVersion": {"2"}}, "endingVersion 2 is before startingVersion 3"},
		{url.Values{"startingTimestamp": {"not a time"}}, `timestamp "not a time" is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)`},
		{url.Values{"startingVersion": {"1"}, "endingTimestamp": {"soon"}}, `timestamp "soon" is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)`},
		{url.Values{"startingVersion": {"1"}, "includeHistoricalMetadata": {"maybe"}}, "includeHistoricalMetadata must be true or false"},
	}
	for _, c := range bad {
		_, err := ParseChanges(c.q)
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter, c.msg, "%v", c.q)
	}
}

func TestParsePage(t *testing.T) {
	p, err := ParsePage(url.Values{"maxResults": {"0"}, "pageToken": {"t"}})
	require.NoError(t, err)
	assert.Equal(t, Page{Max: 0, Token: "t"}, p)
	p, err = ParsePage(url.Values{})
	require.NoError(t, err)
	assert.Equal(t, -1, p.Max)
	for _, v := range []string{"-1", "x", "1.5", "2147483648"} {
		_, err := ParsePage(url.Values{"maxResults": {v}})
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter,
			fmt.Sprintf("maxResults must be a non-negative 32-bit integer, not %q", v), v)
	}
}

func TestValidateShares(t *testing.T) {
	ns := []NamespaceRef{{Catalog: "c", Namespace: []string{"n"}}}
	ok := []Share{{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: ns}}}}
	require.NoError(t, Validate(ok))
	bad := map[string]struct {
		shares []Share
		msg    string
	}{
		"unnamed share":        {[]Share{{Schemas: []Schema{{Name: "s", Namespaces: ns}}}}, `share name "": must be 1-255 characters without '/'`},
		"duplicate share":      {[]Share{ok[0], {Name: "A", Schemas: ok[0].Schemas}}, `share "A" is configured twice (names are case-insensitive)`},
		"duplicate schema":     {[]Share{{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: ns}, {Name: "S", Namespaces: ns}}}}, `schema a. "S" is configured twice (names are case-insensitive)`},
		"empty schema":         {[]Share{{Name: "a", Schemas: []Schema{{Name: "s"}}}}, "schema a.s shares no table and no namespace"},
		"slash in name":        {[]Share{{Name: "a/b", Schemas: ok[0].Schemas}}, `share name "a/b": must be 1-255 characters without '/'`},
		"incomplete table":     {[]Share{{Name: "a", Schemas: []Schema{{Name: "s", Tables: []TableRef{{Name: "t", Catalog: "c"}}}}}}, "table a.s.t needs a catalog, a namespace and a table"},
		"duplicate table":      {[]Share{{Name: "a", Schemas: []Schema{{Name: "s", Tables: []TableRef{{Name: "t", Catalog: "c", Namespace: []string{"n"}, Table: "x"}, {Name: "T", Catalog: "c", Namespace: []string{"n"}, Table: "y"}}}}}}, `table a.s. "T" is configured twice (names are case-insensitive)`},
		"namespace no catalog": {[]Share{{Name: "a", Schemas: []Schema{{Name: "s", Namespaces: []NamespaceRef{{Namespace: []string{"n"}}}}}}}, "schema a.s: a shared namespace needs a catalog and a namespace"},
	}
	for name, c := range bad {
		assert.EqualError(t, Validate(c.shares), c.msg, name)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`{}`, `{"version":1}`, `{"predicateHints":["a=1"],"limitHint":3}`, `{"timestamp":"2022-01-01T00:00:00Z"}`, `{"startingVersion":1,"endingVersion":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		q, err := ParseQuery(strings.NewReader(body))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e == nil {
				t.Fatalf("%T %v for %q: not a Sharing error", err, err, body)
			}
			if e.Code != http.StatusBadRequest && e.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d for %q", e.Code, body)
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
		assert.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"md5", "parquet,delta", "json", "delta;x"} {
		_, err := ParseFileIDHash(bad)
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter,
			fmt.Sprintf("unsupported fileidhash %q (parquet or delta)", bad), bad)
	}
}

// Timestamps in every spelling the protocol (ISO 8601) and its OpenAPI
// seed (yyyy-[m]m-[d]d hh:mm:ss[.f...]) show: with T or a space, with Z,
// an offset or no zone (UTC, the protocol's zone); anything else is 400.
func TestParseTimestamp(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return tm
	}
	for in, want := range map[string]time.Time{
		"2026-12-01 20:56:20":                 utc("2026-12-01T20:56:20Z"), // the seed's own example format
		"2026-12-01T20:56:20":                 utc("2026-12-01T20:56:20Z"),
		"2026-12-01T20:56:20Z":                utc("2026-12-01T20:56:20Z"), // the protocol's
		"2026-12-01 20:56:20Z":                utc("2026-12-01T20:56:20Z"),
		"2026-12-01T20:56:20+02:00":           utc("2026-12-01T18:56:20Z"),
		"2026-12-01 20:56:20-05:30":           utc("2026-12-02T02:26:20Z"),
		"2026-12-01 20:56:20.5":               utc("2026-12-01T20:56:20.5Z"),
		"2026-12-01T20:56:20.123456789Z":      utc("2026-12-01T20:56:20.123456789Z"),
		"2026-1-2 03:04:05":                   utc("2026-01-02T03:04:05Z"), // yyyy-[m]m-[d]d
		"2024-02-29 00:00:00":                 utc("2024-02-29T00:00:00Z"),
		"2022-01-01T00:00:00.000000000+00:00": utc("2022-01-01T00:00:00Z"),
	} {
		got, err := ParseTimestamp(in)
		if assert.NoError(t, err, in) {
			assert.True(t, want.Equal(got), "%s: %s, want %s", in, got, want)
			assert.Equal(t, time.UTC, got.Location(), in)
		}
	}
	for _, bad := range []string{
		"", "yesterday", "2026-12-01", "20:56:20", "2026-12-01_20:56:20",
		"2026-13-01 00:00:00", "2026-02-30 00:00:00", "2025-02-29 00:00:00", "2026-12-01 24:00:00",
		"2026-12-01 20:60:00", "2026-12-01 20:56:61", "2026-12-01 20:56", "2026-12-01 20:56:20 Z",
		"2026-12-01 20:56:20+2", "2026-12-01 20:56:20.", "1670000000000",
		" 2026-12-01 20:56:20", "2026-12-01 20:56:20 ", "2026/12/01 20:56:20", "2026-12-01 20:56:20 UTC",
	} {
		_, err := ParseTimestamp(bad)
		requireError(t, err, http.StatusBadRequest, CodeInvalidParameter,
			fmt.Sprintf("timestamp %q is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)", bad), bad)
	}
}

// TestParseQueryStrict: a query body a Go decoder would read otherwise
// than lakegate checked it is a 400 MALFORMED_REQUEST naming the key;
// unknown keys pass.
func TestParseQueryStrict(t *testing.T) {
	for body, want := range map[string]string{
		`{"version":1,"Version":2}`:                       `at the top level: key "Version" is a case variant of the field "version"`,
		`{"limitHint":1,"LIMITHINT":1000000}`:             `key "LIMITHINT" is a case variant of the field "limitHint"`,
		`{"version":1,"version":2}`:                       `duplicate key "version"`,
		`{"predicateHints":["a"],"predicateHints":["b"]}`: `duplicate key "predicateHints"`,
		`{"jsonPredicateHints":{"op":"and","op":"or"}}`:   `at jsonPredicateHints: duplicate key "op"`,
		`{"versio\u006e":1,"version":2}`:                  `duplicate key "version"`,
		"\xef\xbb\xbf{\"version\":1}":                     "invalid character",
		`{"version":1} {}`:                                "trailing data",
		"{\"timestamp\":\"\xff\"}":                        "not valid UTF-8",
		`{"version":9223372036854775808}`:                 "does not fit int64",
	} {
		_, err := ParseQuery(strings.NewReader(body))
		requireErrorContains(t, err, http.StatusBadRequest, CodeMalformedRequest, []string{want}, body)
	}
	_, err := ParseQuery(strings.NewReader(`{"version":1,"x-vendor":{"A":1,"a":2}}`))
	require.NoError(t, err)
}
