package sharing

import (
	"encoding/json"
	"net/http"

	"go.uber.org/zap"

	"github.com/lakegate/lakegate/apierror"
)

// Error codes of the reference Delta Sharing server.
const (
	CodeInvalidParameter  = "INVALID_PARAMETER_VALUE"
	CodeMalformedRequest  = "MALFORMED_REQUEST"
	CodeNotFound          = "RESOURCE_DOES_NOT_EXIST"
	CodePermissionDenied  = "PERMISSION_DENIED"
	CodeUnauthenticated   = "UNAUTHENTICATED"
	CodeInternal          = "INTERNAL_ERROR"
	CodeUnavailable       = "TEMPORARILY_UNAVAILABLE"
	CodeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	CodeFeatureNotAllowed = "FEATURE_NOT_SUPPORTED"
)

// Error is a Delta Sharing error (the shared skeleton): Code is the HTTP
// status and Type the protocol's errorCode; it is written as
// {"errorCode","message"}.
type Error = apierror.Error

// Errorf builds an Error with status and errorCode code.
func Errorf(status int, code, format string, args ...any) *Error {
	return apierror.Errorf(status, code, format, args...)
}

// AsError is the Sharing error err wraps; any other error is a 500.
func AsError(err error) *Error {
	return apierror.As(err, func(err error) *Error {
		return Errorf(http.StatusInternalServerError, CodeInternal, "%v", err)
	})
}

// storageError answers a failure to read a table's storage (metadata
// files, manifests, data files). Its cause names server paths (those of a
// local warehouse's files), so the cause goes to the server's log only and
// the recipient is told what failed.
func (s *Server) storageError(cause error, format string, args ...any) *Error {
	e := Errorf(http.StatusBadGateway, CodeInternal, format+" (the cause is in the server's log)", args...)
	s.log().Error(e.Message, zap.Error(cause))
	return e
}

func badParam(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, CodeInvalidParameter, format, args...)
}

func notFound(format string, args ...any) *Error {
	return Errorf(http.StatusNotFound, CodeNotFound, format, args...)
}

// WriteError answers with err in the protocol's error model.
func WriteError(w http.ResponseWriter, err error) {
	e := AsError(err)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(struct {
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	}{e.Type, e.Message})
}
