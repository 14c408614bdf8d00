// Package apierror is the one error skeleton lakegate's three APIs share:
// an HTTP status, the API's own name for the kind of error, a message.
// Each API writes it in its own model: Iceberg REST and the UC Delta API
// as {"error":{"message","type","code"}}, Delta Sharing as
// {"errorCode","message"}; each has one WriteError that takes any error
// and unwraps it with As.
package apierror

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is an API error.
type Error struct {
	Code    int    `json:"code"` // the HTTP status
	Type    string `json:"type"` // the API's error type (Iceberg, UC) or errorCode (Sharing)
	Message string `json:"message"`
	// Allow lists the methods a 405 answer allows (sent as the Allow
	// header, as HTTP requires of a 405).
	Allow []string `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message) }

// Errorf builds an *Error with a formatted message.
func Errorf(code int, typ, format string, args ...any) *Error {
	return &Error{Code: code, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// As is the *Error err wraps, or fallback(err) when it wraps none (an
// error no API shaped is the server's own problem).
func As(err error, fallback func(error) *Error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return fallback(err)
}

// WriteJSON writes v as a JSON answer with status: the one JSON writer of
// the Iceberg, UC Delta and UC APIs, and of the admin endpoints (which add
// their own headers first).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
