package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// asRESTError turns a failure to get an answer from the backend into the
// Iceberg error the client sees. A write that may have reached the
// backend is CommitStateUnknownException (502/504): the client must not
// take it as a definite failure.
func asRESTError(err error, op string) *icerest.Error {
	var re *icerest.Error
	if errors.As(err, &re) {
		return re
	}
	var open *breakerOpenError
	if errors.As(err, &open) {
		e := icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
			"backend unavailable: circuit breaker open (retry after %ds)", open.retryAfter)
		return e
	}
	sent := !isConnError(err) // a failed dial never delivered the request
	timeout := isTimeout(err)
	code, typ := http.StatusServiceUnavailable, icerest.ServiceUnavailable
	switch {
	case timeout:
		code = http.StatusGatewayTimeout
	case sent:
		code = http.StatusBadGateway
	}
	if icerest.IsMutation(op) && sent {
		typ = icerest.CommitStateUnknown
		return icerest.Errorf(code, typ, "the write may or may not have been applied: %v", err)
	}
	return icerest.Errorf(code, typ, "backend unreachable: %v", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// checkResponse vets a backend answer before it is passed on: an error
// status must carry an Iceberg error body, a JSON success must be valid
// JSON, and a 502/504 on a write means its outcome is unknown.
func checkResponse(resp *http.Response, body []byte, op string) *icerest.Error {
	status := resp.StatusCode
	if icerest.IsMutation(op) && (status == http.StatusBadGateway || status == http.StatusGatewayTimeout) {
		return icerest.Errorf(status, icerest.CommitStateUnknown,
			"the backend answered %d: the write may or may not have been applied", status)
	}
	if status >= 400 {
		if len(body) == 0 || isErrorModel(body) {
			return nil
		}
		if icerest.IsMutation(op) && status >= 500 {
			return icerest.Errorf(status, icerest.CommitStateUnknown,
				"the backend answered %d with a malformed error: the write may or may not have been applied", status)
		}
		if status >= 500 {
			return icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
				"the backend answered %d with a malformed error: %s", status, snippet(body))
		}
		return icerest.Errorf(status, errorTypeFor(status), "the backend answered %d: %s", status, snippet(body))
	}
	if len(body) > 0 && !looksValid(body, op) {
		if icerest.IsMutation(op) {
			return icerest.Errorf(http.StatusBadGateway, icerest.CommitStateUnknown,
				"the backend's answer is not valid JSON: the write may or may not have been applied")
		}
		return icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
			"the backend's answer is not valid JSON (status %d)", status)
	}
	return nil
}

func isErrorModel(body []byte) bool {
	var m struct {
		Error *struct {
			Type string `json:"type"`
			Code int    `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &m) == nil && m.Error != nil && m.Error.Type != ""
}

// errorTypeFor names the spec's exception for a bare 4xx status.
func errorTypeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return icerest.BadRequest
	case http.StatusUnauthorized:
		return icerest.NotAuthorized
	case http.StatusForbidden:
		return icerest.Forbidden
	case http.StatusNotFound:
		return icerest.NotFound
	case http.StatusConflict:
		return icerest.AlreadyExists
	case http.StatusNotAcceptable:
		return icerest.UnsupportedOperation
	}
	return "HTTP" + strconv.Itoa(status)
}

// looksValid checks a success body. Writes are parsed in full: their
// answer decides what the client believes was committed. Reads (the hot
// path; a full parse cost a fifth of the gateway's CPU) are checked for a
// JSON document's first and last byte, which catches HTML and text error
// pages and answers cut short.
func looksValid(body []byte, op string) bool {
	if icerest.IsMutation(op) {
		return json.Valid(body)
	}
	b := bytes.TrimSpace(body)
	if len(b) < 2 {
		return false
	}
	first, last := b[0], b[len(b)-1]
	return (first == '{' && last == '}') || (first == '[' && last == ']')
}
