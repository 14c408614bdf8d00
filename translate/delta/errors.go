// Package delta translates Unity Catalog's Delta REST API
// (/api/2.1/unity-catalog/delta/v1/...) into Iceberg REST operations run
// through a catalog's Iceberg pipeline, so Delta clients manage tables in
// any Iceberg catalog lakegate fronts under the same policy, cache, replay
// and breakers as Iceberg clients.
package delta

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/lakegate/lakegate/apierror"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Error types of the UC Delta API (DeltaErrorType in uc-delta-api.yaml).
const (
	BadRequest                = "BadRequestException"
	InvalidParameterValue     = "InvalidParameterValueException"
	UnsupportedTableFormat    = "UnsupportedTableFormatException"
	NotAuthorized             = "NotAuthorizedException"
	PermissionDenied          = "PermissionDeniedException"
	NotFound                  = "NotFoundException"
	NoSuchCatalog             = "NoSuchCatalogException"
	NoSuchSchema              = "NoSuchSchemaException"
	NoSuchTable               = "NoSuchTableException"
	AlreadyExists             = "AlreadyExistsException"
	CommitVersionConflict     = "CommitVersionConflictException"
	UpdateRequirementConflict = "UpdateRequirementConflictException"
	ResourceExhausted         = "ResourceExhaustedException"
	TooManyRequests           = "TooManyRequestsException"
	CommitStateUnknown        = "CommitStateUnknownException"
	InternalServerError       = "InternalServerErrorException"
	NotImplemented            = "NotImplementedException"
)

// Error is an error in the Delta API model: {"error":{"message","type","code"}}
// (the shared skeleton).
type Error = apierror.Error

// Errorf builds an *Error with a formatted message.
func Errorf(code int, typ, format string, args ...any) *Error {
	return apierror.Errorf(code, typ, format, args...)
}

func badRequest(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, BadRequest, format, args...)
}

func invalidParam(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, InvalidParameterValue, format, args...)
}

func notImplemented(format string, args ...any) *Error {
	return Errorf(http.StatusNotImplemented, NotImplemented, format, args...)
}

// AsError turns any error into a Delta API error; an error that is not
// one already is a server-side problem.
func AsError(err error) *Error {
	return apierror.As(err, func(err error) *Error {
		return Errorf(http.StatusInternalServerError, InternalServerError, "%v", err)
	})
}

// WriteError writes err in the Delta error model; HEAD answers carry no body.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	// The same model as the Iceberg door's (a 405 carries Allow there too);
	// only the fallback for errors no API shaped is this package's.
	icerest.WriteError(w, r, AsError(err))
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) { icerest.WriteJSON(w, status, v) }

// icebergError is the Iceberg REST error model a pipeline answers with.
type icebergError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// FromIceberg maps an Iceberg pipeline error answer onto the Delta model,
// for translators of UC's other APIs that reach the catalogs directly.
func FromIceberg(status int, body []byte) *Error { return fromIceberg(status, body, AlreadyExists) }

// fromIceberg maps an Iceberg pipeline error answer onto the Delta model,
// keeping the upstream message: the client learns what the catalog said.
// conflict is the Delta type a 409 CommitFailedException stands for in the
// operation at hand.
func fromIceberg(status int, body []byte, conflict string) *Error {
	var ie icebergError
	_ = json.Unmarshal(body, &ie)
	msg, typ := ie.Error.Message, ie.Error.Type
	if msg == "" {
		msg = fmt.Sprintf("catalog answered %d %s", status, http.StatusText(status))
	}
	return &Error{Code: deltaCode(status), Type: deltaType(status, typ, conflict), Message: msg}
}

// deltaCode keeps the status, except codes the Delta API has no use for.
func deltaCode(status int) int {
	if status < 400 || status > 599 {
		return http.StatusInternalServerError
	}
	return status
}

func deltaType(status int, icebergType, conflict string) string {
	switch icebergType {
	case "NoSuchTableException":
		return NoSuchTable
	case "NoSuchNamespaceException":
		return NoSuchSchema
	case "NoSuchWarehouseException":
		return NoSuchCatalog
	case "AlreadyExistsException":
		return AlreadyExists
	case "CommitFailedException":
		return conflict
	case "CommitStateUnknownException":
		return CommitStateUnknown
	case "UnsupportedOperationException":
		return NotImplemented
	}
	switch {
	case status == http.StatusUnauthorized:
		return NotAuthorized
	case status == http.StatusForbidden:
		return PermissionDenied
	case status == http.StatusNotFound:
		return NotFound
	case status == http.StatusConflict:
		return conflict
	case status == http.StatusTooManyRequests:
		return TooManyRequests
	case status == http.StatusNotImplemented:
		return NotImplemented
	case status >= 400 && status < 500:
		return BadRequest
	}
	return InternalServerError
}
