package icerest

import (
	"net/http"
	"net/url"
)

// Request is one Iceberg request as the gateway read it, once, before
// any stage acts on it: every stage (the policy, confinement, replay, the
// refresher, the table cache, the backend) reads this value and parses
// neither the query nor the body again. Make it with ParseRequest.
//
// It is passed by value: a stage reads it and never changes it, and a
// bodiless load (the hot path) allocates nothing for it.
type Request struct {
	Route Route
	// Query is the URL's query, parsed once and checked against the
	// operation's parameters (CheckQuery); nil when the URL has none.
	// Stages read it and do not change it (translate a copy).
	Query url.Values
	// Body is the request body, read once (HoldBody); nil for a GET or
	// HEAD, whose bodies are neither read nor forwarded.
	Body []byte
	// Touched is what a write body names (ValidateBody): the policy
	// decides on it, the cache evicts it, the refresher checks it.
	Touched Touched
	// Locations are the storage locations the body names (BodyLocations),
	// read from the same parse, for confinement.
	Locations []string
	// Commits are the table commits of an updateTable or a
	// commitTransaction, read from the same parse, for replay to find
	// them in their tables when their outcome is unknown.
	Commits []Commit
}

// ParseRequest reads r for route rt once: it checks the query (a 400 for
// one that does not parse or breaks the spec's parameter types), holds
// the body (a 413 past the request's limit) and validates it against the
// operation's schema (ValidateBody), and reads from that one parse what
// the body names: the tables it touches and the locations it writes.
func ParseRequest(r *http.Request, rt Route) (Request, error) {
	q := Request{Route: rt}
	if raw := r.URL.RawQuery; raw != "" {
		v, err := parseQuery(rt.Operation, raw)
		if err != nil {
			return Request{}, err
		}
		q.Query = v
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return q, nil // a body here is neither read nor forwarded
	}
	body, err := HoldBody(r)
	if err != nil {
		return Request{}, err
	}
	q.Body = body
	if !VetsBody(rt.Operation) {
		return q, nil
	}
	touched, parsed, err := validateBody(rt.Operation, body)
	if err != nil {
		return Request{}, err
	}
	q.Touched = touched
	q.Commits = commitsOf(rt.Operation, parsed, touched.Identifiers)
	if NamesLocations(rt.Operation) {
		locs, err := objectLocations(rt.Operation, parsed)
		if err != nil {
			return Request{}, Errorf(http.StatusBadRequest, BadRequest, "%v", err)
		}
		q.Locations = locs
	}
	return q, nil
}
