package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/lakegate/lakegate/internal/jsonscan"
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
// It returns the body to pass on (a lenient but meaningful answer, a null
// list, is put in the spec's form) and, for a table answer, what the one
// pass that checked it read: the stages after the backend are handed it
// and never parse the body again.
func checkResponse(resp *http.Response, body []byte, op string) ([]byte, *icerest.TableAnswer, error) {
	status := resp.StatusCode
	if icerest.IsMutation(op) && (status == http.StatusBadGateway || status == http.StatusGatewayTimeout) {
		return nil, nil, icerest.Errorf(status, icerest.CommitStateUnknown,
			"the backend answered %d: the write may or may not have been applied", status)
	}
	if status >= 400 {
		return body, nil, checkErrorResponse(resp, body, op)
	}
	if status < 200 || status >= 300 {
		return body, nil, nil // 304 Not Modified and friends carry no body to vet
	}
	if op == icerest.OpUpdateProperties {
		body = nullListsAsEmpty(body, "updated", "removed", "missing")
	}
	if carriesTableMetadata[op] {
		table, err := checkTableAnswer(body, op, status)
		if err != nil {
			return nil, nil, err
		}
		return body, table, nil
	}
	if err := checkSuccess(body, op, status); err != nil {
		return nil, nil, err
	}
	return body, nil, nil
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

// checkTableAnswer checks a table answer in one pass (remembered per
// content: see readTableAnswer): JSON, the fields op must return, and
// table metadata lakegate and its clients can read.
func checkTableAnswer(body []byte, op string, status int) (*icerest.TableAnswer, error) {
	if len(body) == 0 {
		return nil, wrongAnswer(op, status, `no "`+requiredFields[op][0].name+`"`)
	}
	table, v := readTableAnswer(body)
	if v.syntax != nil {
		return nil, wrongAnswer(op, status, "a body that is not valid JSON ("+v.syntax.Error()+")")
	}
	for _, f := range requiredFields[op] {
		if (f.name == "metadata" && !table.HasMetadata) || (f.name == "metadata-location" && !table.HasMetadataLocation) {
			return nil, wrongAnswer(op, status, `no "`+f.name+`"`)
		}
	}
	if v.metadata != nil {
		return nil, wrongAnswer(op, status, "table metadata that does not parse ("+v.metadata.Error()+")")
	}
	return table, nil
}

// checkSuccess checks a success body is JSON with what op must return,
// in one pass.
func checkSuccess(body []byte, op string, status int) error {
	fields := requiredFields[op]
	var found uint64
	if len(body) > 0 {
		var ok bool
		if ok, found = scanTop(body, op, fields); !ok {
			return wrongAnswer(op, status, "a body that is not valid JSON")
		}
	}
	for i, f := range fields {
		if found&(1<<i) == 0 {
			return wrongAnswer(op, status, `no "`+f.name+`"`)
		}
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
var requiredFields = map[string][]requiredField{
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
	icerest.OpUnregisterTable:       {{"metadata-location", '"'}, {"metadata", '{'}},
	icerest.OpLoadCredentials:       {{"storage-credentials", '['}},
	icerest.OpPlanTableScan:         {{"status", '"'}},
	icerest.OpFetchPlanningResult:   {{"status", '"'}},
}

// requiredField is one of requiredFields.
type requiredField = struct {
	name string
	kind jsonscan.Kind
}

// scanTop checks body is one strict JSON document (see internal/jsonscan)
// and, for a read, an object or an array (HTML and text error pages,
// answers cut short and ambiguous JSON are refused); and it notes which of
// fields (a bit each) the body has as top-level members of their kind.
func scanTop(body []byte, op string, fields []requiredField) (valid bool, found uint64) {
	s := scanners.Get().(*jsonscan.Scanner)
	defer putScanner(s)
	s.Reset(body)
	kind := s.Peek()
	if !s.BeginObject() {
		s.Skip()
	}
	for s.More() {
		key := s.Key()
		next := s.Peek()
		for i, f := range fields {
			if string(key) == f.name && next == f.kind {
				found |= 1 << i
			}
		}
		s.Skip()
	}
	if s.Finish() != nil {
		return false, 0
	}
	return icerest.IsMutation(op) || kind == jsonscan.Object || kind == jsonscan.Array, found
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
