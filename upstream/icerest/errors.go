// Package icerest holds the Iceberg REST Catalog wire vocabulary that both
// sides of lakegate share: the error model, route parsing (operation +
// resource), and namespace encoding.
package icerest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/lakegate/lakegate/apierror"
)

// Exception type names from the Iceberg REST spec's error model.
const (
	BadRequest            = "BadRequestException"
	NotAuthorized         = "NotAuthorizedException"
	Forbidden             = "ForbiddenException"
	NoSuchNamespace       = "NoSuchNamespaceException"
	NoSuchTable           = "NoSuchTableException"
	NoSuchView            = "NoSuchViewException"
	NoSuchFunction        = "NoSuchFunctionException"
	NoSuchPlanID          = "NoSuchPlanIdException"
	NoSuchPlanTask        = "NoSuchPlanTaskException"
	NoSuchWarehouse       = "NoSuchWarehouseException"
	AlreadyExists         = "AlreadyExistsException"
	NamespaceNotEmpty     = "NamespaceNotEmptyException"
	CommitFailed          = "CommitFailedException"
	CommitStateUnknown    = "CommitStateUnknownException"
	UnsupportedOperation  = "UnsupportedOperationException"
	UnprocessableEntity   = "UnprocessableEntityException"
	NotFound              = "NotFoundException"
	ServiceUnavailable    = "ServiceUnavailableException"
	InternalServerError   = "InternalServerError"
	RequestEntityTooLarge = "RequestEntityTooLargeException"
	// Validation is Java's ValidationException (400): a request whose
	// table shape is invalid (a partition field of a missing column).
	Validation = "ValidationException"
)

// Error is an error in the Iceberg REST error model:
// {"error":{"message":..,"type":..,"code":..}} (the shared skeleton).
type Error = apierror.Error

// Errorf builds an *Error with a formatted message.
func Errorf(code int, typ, format string, args ...any) *Error {
	return apierror.Errorf(code, typ, format, args...)
}

// AsError is the Iceberg error err wraps; any other error is a 500.
func AsError(err error) *Error {
	return apierror.As(err, func(err error) *Error {
		return Errorf(http.StatusInternalServerError, InternalServerError, "%v", err)
	})
}

// WriteError writes err in the Iceberg error model. HEAD responses carry
// no body, as HTTP requires.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := AsError(err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if len(e.Allow) > 0 {
		h.Set("Allow", strings.Join(e.Allow, ", "))
	}
	w.WriteHeader(e.Code)
	if r != nil && r.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(struct {
		Error *Error `json:"error"`
	}{e})
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) { apierror.WriteJSON(w, status, v) }
