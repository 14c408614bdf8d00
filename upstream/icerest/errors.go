// Package icerest holds the Iceberg REST Catalog wire vocabulary that both
// sides of lakegate share: the error model, route parsing (operation +
// resource), and namespace encoding.
package icerest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Exception type names from the Iceberg REST spec's error model.
const (
	BadRequest            = "BadRequestException"
	NotAuthorized         = "NotAuthorizedException"
	Forbidden             = "ForbiddenException"
	NoSuchNamespace       = "NoSuchNamespaceException"
	NoSuchTable           = "NoSuchTableException"
	NoSuchView            = "NoSuchViewException"
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
)

// Error is an error in the Iceberg REST error model:
// {"error":{"message":..,"type":..,"code":..}}.
type Error struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
	// Allow lists the methods a 405 answer allows; WriteError sends it as
	// the Allow header, as HTTP requires of a 405.
	Allow []string `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message) }

// Errorf builds an *Error with a formatted message.
func Errorf(code int, typ, format string, args ...any) *Error {
	return &Error{Code: code, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// WriteError writes e in the Iceberg error model. HEAD responses carry no
// body, as HTTP requires.
func WriteError(w http.ResponseWriter, r *http.Request, e *Error) {
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
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
