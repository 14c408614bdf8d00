package unity

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lakegate/lakegate/apierror"
	"github.com/lakegate/lakegate/translate/delta"
)

// Error codes of UC's API (its server's ErrorCode names), with the status
// UC answers each with. UC answers "already exists" with 400, for
// backwards compatibility; lakegate answers as UC does.
const (
	InvalidArgument        = "INVALID_ARGUMENT"
	UnsupportedTableFormat = "UNSUPPORTED_TABLE_FORMAT"
	NotFound               = "NOT_FOUND"
	CatalogNotFound        = "CATALOG_NOT_FOUND"
	SchemaNotFound         = "SCHEMA_NOT_FOUND"
	TableNotFound          = "TABLE_NOT_FOUND"
	AlreadyExists          = "ALREADY_EXISTS"
	CatalogAlreadyExists   = "CATALOG_ALREADY_EXISTS"
	SchemaAlreadyExists    = "SCHEMA_ALREADY_EXISTS"
	TableAlreadyExists     = "TABLE_ALREADY_EXISTS"
	PermissionDenied       = "PERMISSION_DENIED"
	Unauthenticated        = "UNAUTHENTICATED"
	ResourceExhausted      = "RESOURCE_EXHAUSTED"
	FailedPrecondition     = "FAILED_PRECONDITION"
	Aborted                = "ABORTED"
	Unimplemented          = "UNIMPLEMENTED"
	Internal               = "INTERNAL"
)

// Error is an error in UC's model: {"error_code", "message", "details"}.
type Error struct {
	Status  int
	Code    string
	Message string
	// Allow lists the methods a 405 answer allows (sent as the Allow
	// header, as HTTP requires of a 405).
	Allow []string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Errorf builds an *Error with a formatted message.
func Errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError turns any error into a UC API error: a UC error, wrapped or
// not, is itself (as delta.AsError unwraps Delta errors). Errors of the
// Delta translator (which reaches the catalogs for this API too) keep
// their status and message; their type becomes UC's code.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	d := delta.AsError(err)
	return &Error{Status: ucStatus(d), Code: ucCode(d.Type), Message: d.Message}
}

// ucStatus keeps the translator's status, except for "already exists",
// which UC's API answers with 400.
func ucStatus(d *delta.Error) int {
	if d.Type == delta.AlreadyExists {
		return http.StatusBadRequest
	}
	return d.Code
}

var codeOfType = map[string]string{
	delta.BadRequest:                InvalidArgument,
	delta.InvalidParameterValue:     InvalidArgument,
	delta.UnsupportedTableFormat:    UnsupportedTableFormat,
	delta.NotAuthorized:             Unauthenticated,
	delta.PermissionDenied:          PermissionDenied,
	delta.NotFound:                  NotFound,
	delta.NoSuchCatalog:             CatalogNotFound,
	delta.NoSuchSchema:              SchemaNotFound,
	delta.NoSuchTable:               TableNotFound,
	delta.AlreadyExists:             AlreadyExists,
	delta.CommitVersionConflict:     Aborted,
	delta.UpdateRequirementConflict: FailedPrecondition,
	delta.ResourceExhausted:         ResourceExhausted,
	delta.TooManyRequests:           ResourceExhausted,
	delta.NotImplemented:            Unimplemented,
}

func ucCode(deltaType string) string {
	if c, ok := codeOfType[deltaType]; ok {
		return c
	}
	return Internal
}

// errorInfo is the google.rpc.ErrorInfo UC puts in details.
type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Metadata map[string]string `json:"metadata"`
}

// WriteError writes err in UC's error model.
func WriteError(w http.ResponseWriter, err error) {
	e := AsError(err)
	body := struct {
		ErrorCode string      `json:"error_code"`
		Message   string      `json:"message"`
		Details   []errorInfo `json:"details"`
	}{e.Code, e.Message, []errorInfo{{"type.googleapis.com/google.rpc.ErrorInfo", e.Code, map[string]string{}}}}
	if len(e.Allow) > 0 {
		w.Header().Set("Allow", strings.Join(e.Allow, ", "))
	}
	WriteJSON(w, e.Status, body)
}

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) { apierror.WriteJSON(w, status, v) }
