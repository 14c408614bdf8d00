package gateway

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/lakegate/lakegate/translate/sharing"
)

// recipientsPath, under the Delta Sharing door's prefix, lists who may
// read each share, from the door's configuration: for the catalog
// browser's admins. Delta Sharing itself has no such call.
const recipientsPath = "/lakegate/recipients"

// opListRecipients is the operation the policy is asked about (api
// "lakegate", no resource): roles.rego grants it to admins only.
const opListRecipients = "listShareRecipients"

// recipientsAnswer is {prefix}/lakegate/recipients' answer: every
// configured share, in configuration order, with its recipients' names
// and expiry. Never a token or its hash.
type recipientsAnswer struct {
	Shares []shareRecipients `json:"shares"`
}

type shareRecipients struct {
	Share      string          `json:"share"`
	Recipients []recipientInfo `json:"recipients"`
}

type recipientInfo struct {
	Name string `json:"name"`
	// Expires is when the recipient's token stops working (absent: never).
	Expires *time.Time `json:"expires,omitempty"`
	// Expired: Expires has passed.
	Expired bool `json:"expired"`
}

// serveRecipients answers GET {prefix}/lakegate/recipients in the Delta
// Sharing error model: a recipient's token is refused (403: it may know
// its own share only), any other caller is asked of the policy.
func (h *SharingHandler) serveRecipients(x *exchange, r *http.Request) {
	x.rec.SetOperation(opListRecipients)
	if r.Method != http.MethodGet {
		x.Header().Set("Allow", http.MethodGet)
		sharing.WriteError(x, sharing.Errorf(http.StatusMethodNotAllowed, sharing.CodeMethodNotAllowed,
			"method %s not allowed on %s (allowed: GET)", r.Method, h.Prefix+recipientsPath))
		return
	}
	who, err := h.authenticate(r)
	if err != nil {
		sharingDoor.refuse(x, r, err)
		return
	}
	x.authenticated(r, who.ID)
	if who.share != "" {
		sharing.WriteError(x, sharing.Errorf(http.StatusForbidden, sharing.CodePermissionDenied,
			"a recipient may not list a share's recipients"))
		return
	}
	if d := h.app.guard.decide(r, policyRequest{api: "lakegate", op: opListRecipients, principal: who.Principal}); !d.Allow {
		sharing.WriteError(x, sharing.Errorf(http.StatusForbidden, sharing.CodePermissionDenied, "%s", denial(opListRecipients, d)))
		return
	}
	x.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(x).Encode(h.recipientList(time.Now()))
}

// recipientList is the configured recipients, as of now.
func (h *SharingHandler) recipientList(now time.Time) recipientsAnswer {
	out := recipientsAnswer{Shares: []shareRecipients{}}
	for _, sh := range h.Shares {
		one := shareRecipients{Share: sh.Name, Recipients: []recipientInfo{}}
		for _, rc := range h.recipients {
			if rc.share != sh.Name {
				continue
			}
			info := recipientInfo{Name: rc.name}
			if !rc.expires.IsZero() {
				exp := rc.expires
				info.Expires, info.Expired = &exp, now.After(exp)
			}
			one.Recipients = append(one.Recipients, info)
		}
		out.Shares = append(out.Shares, one)
	}
	return out
}
