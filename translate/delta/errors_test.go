package delta

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/schema"
)

// requireError checks that err carries a Delta API error (through any
// wrapping) with exactly this status, type and message.
func requireError(t *testing.T, err error, code int, typ, message string, msgAndArgs ...any) {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, msgAndArgs...)
	require.NotNil(t, e, msgAndArgs...) // a typed nil *Error is no answer either
	assert.Equal(t, code, e.Code, msgAndArgs...)
	assert.Equal(t, typ, e.Type, msgAndArgs...)
	assert.Equal(t, message, e.Message, msgAndArgs...)
}

// writeError runs WriteError for a request with the given method.
func writeError(method string, err error) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest(method, "/api/2.1/unity-catalog/delta/v1/config", nil), err)
	return rec
}

// WriteError unwraps with errors.As: an error wrapped with %w (once or
// more) is written with its own status and type, and the message it was
// built with, not the wrapping's.
func TestWriteErrorUnwraps(t *testing.T) {
	inner := Errorf(http.StatusNotFound, NoSuchTable, "no table %q", "t")
	for name, err := range map[string]error{
		"bare":          inner,
		"wrapped":       fmt.Errorf("loading t: %w", inner),
		"wrapped twice": fmt.Errorf("update: %w", fmt.Errorf("loading t: %w", inner)),
		"joined":        errors.Join(errors.New("context"), inner),
	} {
		t.Run(name, func(t *testing.T) {
			rec := writeError(http.MethodGet, err)
			assert.Equal(t, http.StatusNotFound, rec.Code)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			assert.JSONEq(t, `{"error":{"message":"no table \"t\"","type":"NoSuchTableException","code":404}}`, rec.Body.String())
		})
	}
}

// A validation error keeps its 400 and type through a %w wrapping, as
// the front door and the service may wrap what the parsers return.
func TestWriteErrorWrappedValidation(t *testing.T) {
	_, perr := parseRename([]byte(`{}`))
	err := fmt.Errorf("renameTable: %w", perr)
	requireError(t, err, http.StatusBadRequest, InvalidParameterValue, "new-name is required")
	rec := writeError(http.MethodPost, err)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.JSONEq(t, `{"error":{"message":"new-name is required","type":"InvalidParameterValueException","code":400}}`, rec.Body.String())
}

// An error nobody shaped is the server's own problem: a 500
// InternalServerErrorException in the UC model, whose message is the
// error's text (the policy AsError has always had), wrapped or not.
func TestWriteErrorUnshaped(t *testing.T) {
	for name, tc := range map[string]struct {
		err     error
		message string
	}{
		"errors.New": {errors.New("boom"), "boom"},
		"wrapped":    {fmt.Errorf("decoding answer: %w", errors.New("boom")), "decoding answer: boom"},
		// %v flattens an *Error to text: nothing is left to unwrap.
		"wrapped %v": {fmt.Errorf("lost: %v", Errorf(http.StatusNotFound, NoSuchTable, "no table")), "lost: 404 NoSuchTableException: no table"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := writeError(http.MethodGet, tc.err)
			assert.Equal(t, http.StatusInternalServerError, rec.Code)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			assert.JSONEq(t, fmt.Sprintf(`{"error":{"message":%q,"type":"InternalServerErrorException","code":500}}`, tc.message), rec.Body.String())
			var e *Error
			assert.False(t, errors.As(tc.err, &e), "unshaped errors carry no *Error")
			assert.Equal(t, &Error{Code: http.StatusInternalServerError, Type: InternalServerError, Message: tc.message}, AsError(tc.err))
		})
	}
}

// HEAD answers (tableExists) carry the status and no body.
func TestWriteErrorHead(t *testing.T) {
	rec := writeError(http.MethodHead, fmt.Errorf("exists: %w", Errorf(http.StatusNotFound, NoSuchTable, "no table")))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Empty(t, rec.Body.String())
	rec = writeError(http.MethodHead, errors.New("boom"))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Empty(t, rec.Body.String())
}

// Every check that may fail answers a nil error interface on success,
// never a typed nil *Error (which would be a non-nil error, and write a
// 500 for a valid request).
func TestChecksReturnUntypedNil(t *testing.T) {
	for name, err := range map[string]error{
		"ParseCreate":         second(ParseCreate(createReq(func(map[string]any) {}))),
		"ParseStaging":        second(parseStaging([]byte(`{"name":"t"}`))),
		"ParseRename":         second(parseRename([]byte(`{"new-name":"t2"}`))),
		"ParseMetrics":        second(parseMetrics([]byte(`{"table-id":"123e4567-e89b-12d3-a456-426614174000"}`))),
		"ParseUpdate":         second(parseUpdate([]byte(`{"requirements":[` + okUUID + `],"updates":[{"action":"set-table-comment","comment":"c"}]}`))),
		"ParseRoute":          second(ParseRoute(http.MethodGet, "catalogs/c/schemas/s/tables/t")),
		"ParseRoute config":   second(ParseRoute(http.MethodGet, "config")),
		"ParseSchema":         second(ParseSchema("a.b")),
		"supportsV1":          second(supportsV1("1.0")),
		"CheckLocationSyntax": CheckLocationSyntax("s3://b/t"),
		"checkWritableKey":    checkWritableKey("k"),
		"domainProps":         second(domainProps(nil)),
		"checkKnownDomain":    checkKnownDomain("app.x", []byte(`{}`)),
		"checkUpgrade":        checkUpgrade(defaultProtocol, defaultProtocol),
		"checkState":          checkState(defaultProtocol, nil, nil, schema.StructType{}),
		"checkUpdateState":    checkUpdateState(nil, nil, nil),
	} {
		assert.True(t, err == nil, "%s: %#v", name, err)
	}
}

func second[T any](_ T, err error) error { return err }

// A 405 names the methods the resource allows in the Allow header, as
// HTTP requires of one.
func TestWriteErrorMethodNotAllowed(t *testing.T) {
	for path, allow := range map[string]string{
		"config":                               "GET",
		"catalogs/c/schemas/s/tables/t":        "DELETE, GET, HEAD, POST",
		"catalogs/c/schemas/s/staging-tables":  "POST",
		"catalogs/c/schemas/s/tables/t/rename": "POST",
	} {
		_, err := ParseRoute(http.MethodPut, path)
		rec := writeError(http.MethodPut, err)
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, path)
		assert.Equal(t, allow, rec.Header().Get("Allow"), path)
	}
}
