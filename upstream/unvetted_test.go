package upstream_test

import (
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// unvetted is r read by icerest.ParseRequest, as the pipeline reads it;
// a request the parse refuses is still read (query, held body), but not
// validated: for tests that hand a stage (a Replayer, a Remote) bodies
// the pipeline's validation would refuse before it, as the stage tests
// always have.
func unvetted(r *http.Request, rt icerest.Route) icerest.Request {
	if q, err := icerest.ParseRequest(r, rt); err == nil {
		return q
	}
	q := icerest.Request{Route: rt}
	if r.URL.RawQuery != "" {
		q.Query, _ = url.ParseQuery(r.URL.RawQuery)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		q.Body, _ = icerest.HoldBody(r)
	}
	return q
}
