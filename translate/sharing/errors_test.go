package sharing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/actions"
)

// requireError checks that err carries a Sharing error (through any
// wrapping) with exactly this status, errorCode and message.
func requireError(t *testing.T, err error, status int, code, message string, msgAndArgs ...any) {
	t.Helper()
	e := requireSharingError(t, err, status, code, msgAndArgs...)
	assert.Equal(t, message, e.Message, msgAndArgs...)
}

// requireErrorContains is requireError for messages that quote another
// library's text (encoding/json's): each part must be in the message.
func requireErrorContains(t *testing.T, err error, status int, code string, parts []string, msgAndArgs ...any) {
	t.Helper()
	e := requireSharingError(t, err, status, code, msgAndArgs...)
	for _, p := range parts {
		assert.Contains(t, e.Message, p, msgAndArgs...)
	}
}

func requireSharingError(t *testing.T, err error, status int, code string, msgAndArgs ...any) *Error {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, msgAndArgs...)
	require.NotNil(t, e, msgAndArgs...) // a typed nil *Error is no answer either
	assert.Equal(t, status, e.Code, msgAndArgs...)
	assert.Equal(t, code, e.Type, msgAndArgs...)
	return e
}

// WriteError unwraps with errors.As: a wrapped Sharing error is written
// with its own status, errorCode and message; anything else is a 500.
func TestWriteErrorUnwraps(t *testing.T) {
	inner := badParam("maxResults must be a non-negative 32-bit integer, not %q", "x")
	for name, tc := range map[string]struct {
		err    error
		status int
		body   string
	}{
		"bare":    {inner, 400, `{"errorCode":"INVALID_PARAMETER_VALUE","message":"maxResults must be a non-negative 32-bit integer, not \"x\""}`},
		"wrapped": {fmt.Errorf("listing: %w", inner), 400, `{"errorCode":"INVALID_PARAMETER_VALUE","message":"maxResults must be a non-negative 32-bit integer, not \"x\""}`},
		"joined":  {errors.Join(errors.New("context"), inner), 400, `{"errorCode":"INVALID_PARAMETER_VALUE","message":"maxResults must be a non-negative 32-bit integer, not \"x\""}`},
		"plain":   {errors.New("boom"), 500, `{"errorCode":"INTERNAL_ERROR","message":"boom"}`},
	} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, tc.err)
			assert.Equal(t, tc.status, rec.Code)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.JSONEq(t, tc.body, rec.Body.String())
		})
	}
}

// Every check that may fail answers a nil error interface on success,
// never a typed nil *Error (which would be a non-nil error, and answer a
// valid request with an error).
func TestChecksReturnUntypedNil(t *testing.T) {
	ctx := context.Background()
	zero, one := int64(0), int64(1)
	h := history{{Loc: loc("00000"), Ts: 1000}, {Loc: loc("00001"), Ts: 2000}}
	h.number()
	now := time.UnixMilli(5000)

	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	meta, err := table.NewMetadata(sch, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "/wh/t", nil)
	require.NoError(t, err)
	resolved := history{{V: 0, Loc: "/wh/t/metadata/v1.json", Meta: meta}}

	shares := []Share{{Name: "s", Schemas: []Schema{{Name: "c", Tables: []TableRef{{Name: "t", Catalog: "cat", Namespace: []string{"n"}, Table: "t"}}}}}}
	allow := func(context.Context, string, Target) bool { return true }
	srv := &Server{Shares: shares, Now: func() time.Time { return now }}
	req := func(rt Route, target string) (Request, *http.Request) {
		return Request{Route: rt, Access: allow}, httptest.NewRequest(http.MethodGet, target, nil)
	}
	shareReq, shareHTTP := req(Route{Op: OpGetShare, Share: "s"}, "/shares/s")
	tablesReq, tablesHTTP := req(Route{Op: OpListTables, Share: "s", Schema: "c"}, "/shares/s/schemas/c/tables?maxResults=1")
	tableReq, _ := req(Route{Op: OpQueryTable, Share: "s", Schema: "c", Table: "T"}, "/")
	sharesReq, sharesHTTP := req(Route{Op: OpListShares}, "/shares")
	schemasReq, schemasHTTP := req(Route{Op: OpListSchemas, Share: "s"}, "/shares/s/schemas")
	allReq, allHTTP := req(Route{Op: OpListAllTables, Share: "s"}, "/shares/s/all-tables")
	rs := &response{}
	lines := linesResponse(t, actions.Parquet)

	for name, err := range map[string]error{
		"ParseRoute":            second(ParseRoute(http.MethodGet, "/shares/s/schemas/c/tables/t/version")),
		"ParseRoute file":       second(ParseRoute(http.MethodHead, "/files/abc")),
		"segments":              second(segments("/shares/s")),
		"segments empty":        second(segments("")),
		"ParseCapabilities":     second(ParseCapabilities("responseformat=delta;readerfeatures=columnmapping")),
		"ParseCapabilities nil": second(ParseCapabilities("")),
		"ParseFileIDHash":       second(ParseFileIDHash("Delta")),
		"ParseQuery":            second(ParseQuery(strings.NewReader(`{"startingVersion":1,"endingVersion":2}`))),
		"ParseQuery empty":      second(ParseQuery(strings.NewReader(""))),
		"check":                 QueryRequest{Timestamp: ref("2022-01-01T00:00:00Z")}.check(),
		"ParseTimestamp":        second(ParseTimestamp("2022-01-01T00:00:00Z")),
		"ParseChanges":          second(ParseChanges(url.Values{"startingTimestamp": {"2022-01-01T00:00:00Z"}, "endingVersion": {"3"}, "includeHistoricalMetadata": {"false"}})),
		"bound":                 second(bound(url.Values{"v": {"1"}}, "v", "t")),
		"ParsePage":             second(ParsePage(url.Values{"maxResults": {"10"}})),
		"metadataParams":        second(metadataParams(httptest.NewRequest(http.MethodGet, "/m?version=1", nil))),
		"index":                 second(h.index(1)),
		"at":                    second(h.at(0)),
		"asOf":                  second(h.asOf(time.UnixMilli(1500))),
		"since":                 second(h.since(time.UnixMilli(1500))),
		"notFuture":             notFuture(now, now),
		"pick":                  second(pick(h, QueryRequest{Version: &one}, now)),
		"pick timestamp":        second(pick(h, QueryRequest{Timestamp: ref("1970-01-01T00:00:01.5Z")}, now)),
		"changeRange":           third(changeRange(h, ChangesRequest{Start: Bound{Version: &zero}}, now)),
		"changeRange timestamp": third(changeRange(h, ChangesRequest{Start: Bound{Timestamp: ref(time.UnixMilli(1500))}, End: Bound{Timestamp: ref(now)}}, now)),
		"snapshotsBetween":      second(snapshotsBetween(version{}, false, version{}, "t")),
		"resolve":               srv.resolve(ctx, nil, &resolved[0]),
		"resolveAll":            srv.resolveAll(ctx, nil, resolved, 0, 0),
		"chooseFormat":          third(chooseFormat(Capabilities{}, meta, sch, "t")),
		"chooseFormat delta":    third(chooseFormat(Capabilities{Formats: []actions.Format{actions.Delta}, ReaderFeatures: map[string]bool{}}, meta, sch, "t")),
		"missingFeatures":       missingFeatures(Capabilities{ReaderFeatures: map[string]bool{}}, sch, false),
		"noDeletes":             noDeletes(nil, "t"),
		"add":                   rs.add([]byte("{}"), nil),
		"writeJSON":             writeJSON(httptest.NewRecorder(), map[string]int{}),
		"pageStart":             second(srv.pageStart(Route{Op: OpListShares}, "", nil)),
		"share":                 second(srv.share(ctx, shareReq)),
		"schema":                third(srv.schema(ctx, tablesReq)),
		"listedSchemas":         third(srv.listedSchemas(ctx, allReq)),
		"schemaTables":          second(srv.schemaTables(ctx, &shares[0], &shares[0].Schemas[0])),
		"resolveTable":          second(srv.resolveTable(ctx, tableReq)),
		"authorized":            second(srv.authorized(ctx, tableReq, Target{Table: "t"})),
		"getShare":              srv.getShare(ctx, httptest.NewRecorder(), shareReq),
		"listShares":            srv.listShares(ctx, httptest.NewRecorder(), sharesHTTP, sharesReq),
		"listSchemas":           srv.listSchemas(ctx, httptest.NewRecorder(), schemasHTTP, schemasReq),
		"listTables":            srv.listTables(ctx, httptest.NewRecorder(), tablesHTTP, tablesReq),
		"listAllTables":         srv.listTables(ctx, httptest.NewRecorder(), allHTTP, allReq),
		"page":                  page(srv, httptest.NewRecorder(), shareHTTP, shareReq.Route, []string{"a"}, func(k string) string { return k }),
		"fileLines":             lines.fileLines(ctx, linesTasks(t, 3), lines.l.tbl.Metadata().CurrentSchema(), version{}, false),
		"versionFiles":          third(rs.versionFiles(nil, resolved[0], nil)),
		"noEarlierDeletes":      rs.noEarlierDeletes(nil, resolved[0], table.Snapshot{}),
		"fileChanges":           lines.fileChanges(ctx, nil, resolved[0], nil),
		"header":                (&response{s: srv, l: &loaded{tbl: table.New(table.Identifier{"n", "t"}, meta, "/wh/t/metadata/v1.json", nil, nil)}, fileWriter: fileWriter{}}).header(resolved[0], resolved[0]),
	} {
		assert.True(t, err == nil, "%s: %#v", name, err)
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

func ref[T any](v T) *T { return &v }
