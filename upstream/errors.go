package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

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
// status must carry an Iceberg error body, a success must be valid JSON
// carrying what the operation must return, and a 502/504 on a write means
// its outcome is unknown.
//
// It returns the body to pass on: a lenient but meaningful answer (a null
// list) is put in the spec's form.
func checkResponse(resp *http.Response, body []byte, op string) ([]byte, error) {
	status := resp.StatusCode
	if icerest.IsMutation(op) && (status == http.StatusBadGateway || status == http.StatusGatewayTimeout) {
		return nil, icerest.Errorf(status, icerest.CommitStateUnknown,
			"the backend answered %d: the write may or may not have been applied", status)
	}
	if status >= 400 {
		return body, checkErrorResponse(resp, body, op)
	}
	if status < 200 || status >= 300 {
		return body, nil // 304 Not Modified and friends carry no body to vet
	}
	if op == icerest.OpUpdateProperties {
		body = nullListsAsEmpty(body, "updated", "removed", "missing")
	}
	if err := checkSuccess(body, op, status); err != nil {
		return nil, err
	}
	if carriesTableMetadata[op] {
		if err := checkTableMetadata(body); err != nil {
			return nil, wrongAnswer(op, status, "table metadata that does not parse ("+err.Error()+")")
		}
	}
	return body, nil
}

// wrongAnswer is the 502 for a success answer lakegate cannot trust. To a
// write it says the outcome is unknown: the backend may have applied it.
func wrongAnswer(op string, status int, what string) error {
	if icerest.IsMutation(op) {
		return icerest.Errorf(http.StatusBadGateway, icerest.CommitStateUnknown,
			"the backend answered %d to %s with %s: the write may or may not have been applied", status, op, what)
	}
	return icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
		"the backend answered %d to %s with %s", status, op, what)
}

// checkSuccess checks a success body is JSON with what op must return.
func checkSuccess(body []byte, op string, status int) error {
	if len(body) > 0 && !looksValid(body, op) {
		return wrongAnswer(op, status, "a body that is not valid JSON")
	}
	if missing := missingField(body, op); missing != "" {
		return wrongAnswer(op, status, "no "+missing)
	}
	return nil
}

// checkErrorResponse vets an error status. An Iceberg error body passes as
// is (a HEAD answer has none to pass). A 501 means the backend does not
// implement the operation, so nothing was applied. A write answered 5xx
// without an error body may have been applied.
func checkErrorResponse(resp *http.Response, body []byte, op string) error {
	status := resp.StatusCode
	if len(body) == 0 && resp.Request != nil && resp.Request.Method == http.MethodHead {
		return nil
	}
	if typ, msg, ok := parseErrorModel(body); ok && (typ != "" || status < 500) {
		if typ != "" {
			return nil
		}
		// Nessie sends "type": "" (a 409 for a non-empty namespace): the
		// message stays, the type is the one the operation's spec names.
		return icerest.Errorf(status, errorTypeForOp(op, status), "%s", msg)
	}
	switch {
	case status == http.StatusNotImplemented:
		return icerest.Errorf(status, icerest.UnsupportedOperation,
			"the backend does not implement %s: %s", op, snippet(body))
	case icerest.IsMutation(op) && status >= 500:
		return icerest.Errorf(status, icerest.CommitStateUnknown,
			"the backend answered %d without an Iceberg error: the write may or may not have been applied", status)
	case status >= 500:
		return icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
			"the backend answered %d without an Iceberg error: %s", status, snippet(body))
	}
	return icerest.Errorf(status, errorTypeFor(status), "the backend answered %d: %s", status, snippet(body))
}

// requiredFields are the top-level fields, with their JSON kind ('{'
// object, '[' array, '"' string), that the spec requires of an
// operation's success answer. A backend that answers success without
// them (a 204 to createView, "updated": null) has not told the client
// what it did.
var requiredFields = map[string][]struct {
	name string
	kind byte
}{
	icerest.OpCreateNamespace:       {{"namespace", '['}},
	icerest.OpLoadNamespaceMetadata: {{"namespace", '['}},
	icerest.OpUpdateProperties:      {{"updated", '['}, {"removed", '['}},
	icerest.OpCreateTable:           {{"metadata", '{'}},
	icerest.OpRegisterTable:         {{"metadata", '{'}},
	icerest.OpLoadTable:             {{"metadata", '{'}},
	icerest.OpUpdateTable:           {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpCreateView:            {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpReplaceView:           {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpLoadView:              {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpRegisterView:          {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpLoadCredentials:       {{"storage-credentials", '['}},
	icerest.OpPlanTableScan:         {{"status", '"'}},
	icerest.OpFetchPlanningResult:   {{"status", '"'}},
}

// missingField names the first required field the answer lacks, or "".
// Writes are decoded; reads (loadTable is the hot path) are scanned for
// the key, which a top-level field of that kind implies.
func missingField(body []byte, op string) string {
	fields := requiredFields[op]
	if len(fields) == 0 {
		return ""
	}
	if !icerest.IsMutation(op) {
		for _, f := range fields {
			if !hasKeyOfKind(body, f.name, f.kind) {
				return `"` + f.name + `"`
			}
		}
		return ""
	}
	// An empty or non-object body leaves top nil: every field is missing.
	var top map[string]json.RawMessage
	_ = json.Unmarshal(body, &top)
	for _, f := range fields {
		if v := bytes.TrimSpace(top[f.name]); len(v) == 0 || v[0] != f.kind {
			return `"` + f.name + `"`
		}
	}
	return ""
}

// hasKeyOfKind reports whether body has "name": followed by a value that
// starts with kind.
func hasKeyOfKind(body []byte, name string, kind byte) bool {
	key := []byte(`"` + name + `"`)
	for rest := body; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return false
		}
		rest = rest[i+len(key):]
		after := bytes.TrimLeft(rest, " \t\r\n")
		if len(after) > 0 && after[0] == ':' {
			v := bytes.TrimLeft(after[1:], " \t\r\n")
			if len(v) > 0 && v[0] == kind {
				return true
			}
		}
	}
}

// parseErrorModel reads an Iceberg error body; ok when it has an error
// object with a type or a message.
func parseErrorModel(body []byte) (typ, msg string, ok bool) {
	var m struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.Error == nil || (m.Error.Type == "" && m.Error.Message == "") {
		return "", "", false
	}
	return m.Error.Type, m.Error.Message, true
}

// errorTypeForOp names the spec's exception for an error status of an
// operation, for backends that send none.
func errorTypeForOp(op string, status int) string {
	switch {
	case status == http.StatusNotFound && isViewOp(op):
		return icerest.NoSuchView
	case status == http.StatusNotFound && isTableOp(op):
		return icerest.NoSuchTable
	case status == http.StatusNotFound:
		return icerest.NoSuchNamespace
	case status == http.StatusConflict && op == icerest.OpDropNamespace:
		return icerest.NamespaceNotEmpty
	case status == http.StatusConflict && (op == icerest.OpUpdateTable || op == icerest.OpCommitTransaction ||
		op == icerest.OpReplaceView):
		return icerest.CommitFailed
	}
	return errorTypeFor(status)
}

// isViewOp and isTableOp tell the operations that address one view or
// table: those whose path names it, and its rename.
func isViewOp(op string) bool {
	return op == icerest.OpRenameView || strings.Contains(icerest.Endpoints[op], "{view}")
}

func isTableOp(op string) bool {
	return op == icerest.OpRenameTable || strings.Contains(icerest.Endpoints[op], "{table}")
}

// errorTypeFor names the spec's exception for a bare status.
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
	case http.StatusRequestEntityTooLarge:
		return icerest.RequestEntityTooLarge
	case 419:
		return "AuthenticationTimeoutException"
	case http.StatusUnprocessableEntity:
		return icerest.UnprocessableEntity
	case http.StatusTooManyRequests:
		return "SlowDownException"
	case http.StatusInternalServerError:
		return icerest.InternalServerError
	case http.StatusServiceUnavailable:
		return icerest.ServiceUnavailable
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
