package sharing

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// Error is a Delta Sharing error: {"errorCode","message"} with a status.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"errorCode"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an Error.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func badParam(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, CodeInvalidParameter, format, args...)
}

func notFound(format string, args ...any) *Error {
	return Errorf(http.StatusNotFound, CodeNotFound, format, args...)
}

// WriteError answers with e in the protocol's error model.
func WriteError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}
