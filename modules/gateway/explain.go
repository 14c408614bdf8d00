package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// explainPath is the policy's explanation endpoint on the Iceberg door:
// what the policy decides for a principal, an operation and an object,
// and why. It sits next to discovery, outside /v1/.
const explainPath = "/lakegate/explain"

// opExplain is the operation the policy is asked about before it explains
// anything: policies/roles.rego grants it to admins only, and a policy
// that does not know it denies it (fail closed).
const opExplain = "explainDecision"

// maxExplainBody bounds an explain request's body.
const maxExplainBody = 64 << 10

// explainRequest is POST /lakegate/explain's body: the policy input to
// evaluate, less what the gateway fills in (the time; the client IP,
// method and path of this request unless given).
type explainRequest struct {
	Principal    policies.Principal `json:"principal"`
	Operation    string             `json:"operation"`
	API          string             `json:"api"`           // default "iceberg"
	APIOperation string             `json:"api_operation"` // default operation
	Resource     policies.Resource  `json:"resource"`
	Request      *policies.Request  `json:"request"`
	ClientIP     string             `json:"client_ip"`
}

// explainAnswer is POST /lakegate/explain's answer: the decision, and the
// input the policy saw.
type explainAnswer struct {
	Decision policies.Decision `json:"decision"`
	Input    policies.Input    `json:"input"`
}

// serveExplain answers POST /lakegate/explain: authenticated as every
// Iceberg request, allowed only when the policy lets the caller
// explainDecision, then the policy's decision on the input the body
// describes. Errors are in the Iceberg error model.
func (h *IcebergHandler) serveExplain(w http.ResponseWriter, r *http.Request) {
	x, r := begin(h.app, w, r, "iceberg")
	defer x.end()
	x.rec.SetOperation(opExplain)
	p, r, ok := icebergDoor.admit(h.app.guard, x, r)
	if !ok {
		return
	}
	if r.Method != http.MethodPost {
		e := icerest.Errorf(http.StatusMethodNotAllowed, icerest.UnsupportedOperation,
			"method %s not allowed on %s (allowed: POST)", r.Method, explainPath)
		e.Allow = []string{http.MethodPost}
		icerest.WriteError(x, r, e)
		return
	}
	if d := h.app.guard.decide(r, policyRequest{api: "lakegate", op: opExplain, principal: p}); !d.Allow {
		icerest.WriteError(x, r, forbidden(opExplain, d))
		return
	}
	in, err := h.explainInput(r)
	if err != nil {
		icerest.WriteError(x, r, err)
		return
	}
	icerest.WriteJSON(x, http.StatusOK, explainAnswer{Decision: h.app.guard.explain(r, in), Input: in})
}

// explainInput reads and checks the body: a principal, an operation and,
// when it names one, a catalog of this gateway.
func (h *IcebergHandler) explainInput(r *http.Request) (policies.Input, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxExplainBody))
	if err != nil {
		return policies.Input{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "reading request body: %v", err)
	}
	var req explainRequest
	if err := decodeExplain(body, &req); err != nil {
		return policies.Input{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "malformed explain request: %v", err)
	}
	switch {
	case req.Principal.ID == "":
		return policies.Input{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "principal.id is required")
	case req.Operation == "":
		return policies.Input{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "operation is required")
	}
	var cat *catalogState
	if name := req.Resource.Catalog; name != "" {
		c, ok := h.app.catalog(name)
		if !ok {
			return policies.Input{}, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "resource.catalog: no catalog named %q", name)
		}
		cat = c
	}
	in := policyRequest{api: req.API, apiOp: req.APIOperation, op: req.Operation,
		principal: &identity.Principal{ID: req.Principal.ID, Groups: req.Principal.Groups, Claims: req.Principal.Claims},
		catalog:   cat, resource: req.Resource}.input(r)
	// The request and client are the explained one's, not this POST's.
	in.Request = policies.Request{}
	if req.Request != nil {
		in.Request = *req.Request
	}
	in.Context = policies.Context{Time: time.Now().UTC().Format(time.RFC3339), ClientIP: cmp.Or(req.ClientIP, clientIP(r))}
	return in, nil
}

// explain is the policy's decision on in, as authorize would reach it but
// outside the metrics: an explanation is not a request the gateway served.
func (g *guard) explain(r *http.Request, in policies.Input) policies.Decision {
	if g.policy == nil {
		return policies.Decision{Allow: true, Reason: "no policy is configured: every authenticated request is allowed"}
	}
	d, _ := g.policy.Decide(r.Context(), in) // on failure the engine denies, with a reason safe to show
	return d
}

// decodeExplain reads body into req: strict JSON (no repeated key, valid
// text), and no key the request does not know, so a misspelled field is
// an error rather than a question about something else.
func decodeExplain(body []byte, req *explainRequest) error {
	if err := strictjson.Unmarshal(body, req); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(req)
}
