package gateway

import (
	"net/http"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/identity"
)

// door is what sets one front door's answers apart: its API's error
// model. Every door admits a caller the same way (admit, refuse); only
// the shape of the 401 differs.
type door struct {
	// unauthorized is the door's 401 error saying why.
	unauthorized func(why error) error
	// write answers err in the door's error model.
	write func(w http.ResponseWriter, r *http.Request, err error)
}

// admit authenticates r for the door: a caller g cannot name is refused
// (false). An admitted one is noted on x and rides in the returned
// request's context for what the door's layers cannot be handed: a
// backend's forwarded keys, a passthrough backend's /v1/config, the
// translators' calls.
func (d door) admit(g *guard, x *exchange, r *http.Request) (*identity.Principal, *http.Request, bool) {
	p, err := g.authenticate(r)
	if err != nil {
		d.refuse(x, r, err)
		return nil, r, false
	}
	x.authenticated(r, p.ID)
	ctx := caller.With(r.Context(), caller.Caller{Principal: p.ID, Authorization: r.Header.Get("Authorization")})
	return p, r.WithContext(ctx), true
}

// refuse answers a caller the door cannot authenticate: 401 with a Bearer
// challenge, in the door's error model, saying why.
func (d door) refuse(w http.ResponseWriter, r *http.Request, why error) {
	w.Header().Set("WWW-Authenticate", "Bearer")
	d.write(w, r, d.unauthorized(why))
}
