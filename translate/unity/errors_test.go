package unity

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/delta"
)

// Every error type of the Delta translator (which reaches the catalogs
// for this API too) becomes UC's code; the status is kept, except for
// "already exists", which UC answers with 400.
func TestAsErrorMapsDeltaTypes(t *testing.T) {
	for _, tc := range []struct {
		status int
		typ    string
		want   int
		code   string
	}{
		{400, delta.BadRequest, 400, InvalidArgument},
		{400, delta.InvalidParameterValue, 400, InvalidArgument},
		{400, delta.UnsupportedTableFormat, 400, UnsupportedTableFormat},
		{401, delta.NotAuthorized, 401, Unauthenticated},
		{403, delta.PermissionDenied, 403, PermissionDenied},
		{404, delta.NotFound, 404, NotFound},
		{404, delta.NoSuchCatalog, 404, CatalogNotFound},
		{404, delta.NoSuchSchema, 404, SchemaNotFound},
		{404, delta.NoSuchTable, 404, TableNotFound},
		{409, delta.AlreadyExists, 400, AlreadyExists},
		{409, delta.CommitVersionConflict, 409, Aborted},
		{409, delta.UpdateRequirementConflict, 409, FailedPrecondition},
		{429, delta.ResourceExhausted, 429, ResourceExhausted},
		{429, delta.TooManyRequests, 429, ResourceExhausted},
		{500, delta.CommitStateUnknown, 500, Internal},
		{500, delta.InternalServerError, 500, Internal},
		{501, delta.NotImplemented, 501, Unimplemented},
		{502, "SomethingElseException", 502, Internal},
	} {
		got := AsError(delta.Errorf(tc.status, tc.typ, "message of %s", tc.typ))
		assert.Equal(t, &Error{Status: tc.want, Code: tc.code, Message: "message of " + tc.typ}, got, tc.typ)
	}
}

// Iceberg answers reach this API through delta.FromIceberg: a
// namespace that exists is 400 ALREADY_EXISTS, a missing one 404
// SCHEMA_NOT_FOUND, keeping the catalog's message.
func TestAsErrorFromIceberg(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   *Error
	}{
		{409, `{"error":{"message":"Namespace already exists: sales","type":"AlreadyExistsException","code":409}}`,
			&Error{Status: 400, Code: AlreadyExists, Message: "Namespace already exists: sales"}},
		{404, `{"error":{"message":"Namespace does not exist: sales","type":"NoSuchNamespaceException","code":404}}`,
			&Error{Status: 404, Code: SchemaNotFound, Message: "Namespace does not exist: sales"}},
		{404, `{"error":{"message":"Table does not exist: sales.t","type":"NoSuchTableException","code":404}}`,
			&Error{Status: 404, Code: TableNotFound, Message: "Table does not exist: sales.t"}},
		{403, `{"error":{"message":"no","type":"ForbiddenException","code":403}}`,
			&Error{Status: 403, Code: PermissionDenied, Message: "no"}},
		{503, ``, &Error{Status: 503, Code: Internal, Message: "catalog answered 503 Service Unavailable"}},
	} {
		assert.Equal(t, tc.want, AsError(delta.FromIceberg(tc.status, []byte(tc.body))), "%d %s", tc.status, tc.body)
	}
}

// A UC error is itself; an error nobody shaped is a 500 INTERNAL whose
// message is its text.
func TestAsErrorOwnAndUnshaped(t *testing.T) {
	own := Errorf(http.StatusNotFound, CatalogNotFound, "Catalog not found: %s", "x")
	assert.Same(t, own, AsError(own))
	assert.Equal(t, &Error{Status: 500, Code: Internal, Message: "boom"}, AsError(errors.New("boom")))
	assert.Equal(t, &Error{Status: 500, Code: Internal, Message: "loading: boom"},
		AsError(fmt.Errorf("loading: %w", errors.New("boom"))))
	assert.Equal(t, "404 CATALOG_NOT_FOUND: Catalog not found: x", own.Error())
}

// A UC error keeps its status, code and message through a %w wrapping,
// as a Delta error does through delta.AsError; a typed nil *Error is no
// answer (it is the error nobody shaped).
func TestAsErrorUnwraps(t *testing.T) {
	own := Errorf(http.StatusNotFound, CatalogNotFound, "Catalog not found: x")
	for name, err := range map[string]error{
		"wrapped":       fmt.Errorf("listing: %w", own),
		"wrapped twice": fmt.Errorf("a: %w", fmt.Errorf("b: %w", own)),
		"joined":        errors.Join(errors.New("context"), own),
	} {
		assert.Same(t, own, AsError(err), name)
	}
	var typedNil *Error
	for _, err := range []error{typedNil, fmt.Errorf("odd: %w", typedNil)} {
		got := AsError(err)
		require.NotNil(t, got)
		assert.Equal(t, http.StatusInternalServerError, got.Status)
		assert.Equal(t, Internal, got.Code)
	}
}

// WriteError answers in UC's error model: error_code, message, and a
// google.rpc.ErrorInfo whose reason is the code.
func TestWriteError(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		body   string
	}{
		{Errorf(http.StatusNotFound, SchemaNotFound, "Schema not found: lake.s"), 404,
			`{"error_code":"SCHEMA_NOT_FOUND","message":"Schema not found: lake.s","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SCHEMA_NOT_FOUND","metadata":{}}]}`},
		{delta.Errorf(http.StatusConflict, delta.AlreadyExists, "exists"), 400,
			`{"error_code":"ALREADY_EXISTS","message":"exists","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ALREADY_EXISTS","metadata":{}}]}`},
		{errors.New("boom"), 500,
			`{"error_code":"INTERNAL","message":"boom","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL","metadata":{}}]}`},
	} {
		rec := httptest.NewRecorder()
		WriteError(rec, tc.err)
		assert.Equal(t, tc.status, rec.Code, "%v", tc.err)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		assert.JSONEq(t, tc.body, rec.Body.String())
	}
}

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteJSON(rec, http.StatusOK, &CatalogInfo{Name: "lake", Properties: map[string]string{}})
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"name":"lake","properties":{}}`, rec.Body.String())
}

// A 405 carries its Allow header; other answers none.
func TestWriteErrorAllow(t *testing.T) {
	_, err := ParseRoute(http.MethodPut, "schemas/lake.sales", nil)
	rec := httptest.NewRecorder()
	WriteError(rec, err)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "DELETE, GET, PATCH", rec.Header().Get("Allow"))
	assert.JSONEq(t, `{"error_code":"UNIMPLEMENTED","message":"PUT /schemas/{name} is not served by lakegate",
		"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNIMPLEMENTED","metadata":{}}]}`, rec.Body.String())
	rec = httptest.NewRecorder()
	WriteError(rec, Errorf(http.StatusNotFound, NotFound, "no"))
	assert.Empty(t, rec.Header().Values("Allow"))
}
