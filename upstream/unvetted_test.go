package upstream_test

import (
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// unvetted is r read as icerest.ParseRequest reads it (query, held body)
// but not validated: for tests that hand a stage (a Replayer, a Remote)
// bodies the pipeline's validation would refuse before it, as the stage
// tests always have.
func unvetted(r *http.Request, rt icerest.Route) icerest.Request {
	q := icerest.Request{Route: rt}
	if r.URL.RawQuery != "" {
		q.Query, _ = url.ParseQuery(r.URL.RawQuery)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		q.Body, _ = icerest.HoldBody(r)
	}
	return q
}
