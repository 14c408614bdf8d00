package upstream

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// delivery tells the replay stage whether a keyed request may have reached
// the backend. Only then can a failure leave it applied, so only then must
// its claim be kept as "outcome unknown" rather than released for a retry.
//
// It starts as "may have been sent": a backend that does not report (a
// handler in process, the embedded catalog) is taken to have received the
// request. The remote backend says "not sent" as it starts and "sent" once
// a connection is handed the request, so a call refused by the breaker,
// one that failed to get the backend's config or credentials, and a
// connection refused before any byte was written all count as not sent.
type delivery struct{ notSent atomic.Bool }

type deliveryKey struct{}

// withDelivery returns ctx carrying a fresh tracker.
func withDelivery(ctx context.Context) (context.Context, *delivery) {
	d := &delivery{}
	return context.WithValue(ctx, deliveryKey{}, d), d
}

func deliveryFrom(ctx context.Context) *delivery {
	d, _ := ctx.Value(deliveryKey{}).(*delivery)
	return d
}

// maySent reports whether the request may have reached the backend.
func (d *delivery) maySent() bool { return !d.notSent.Load() }

// notYetSent marks the request ctx belongs to as not sent: the remote
// backend calls it first thing, before its config fetch and the breaker.
func notYetSent(ctx context.Context) {
	if d := deliveryFrom(ctx); d != nil {
		d.notSent.Store(true)
	}
}

// withoutDelivery is ctx for a call made on the request's behalf that is
// not the request (the backend's /v1/config): it marks nothing sent.
func withoutDelivery(ctx context.Context) context.Context {
	if deliveryFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, deliveryKey{}, (*delivery)(nil))
}

// traceSent returns out with a trace that marks its request sent once a
// connection takes it (a failed dial never gets one). It is applied last,
// after credentials were fetched, so a token request does not count.
func traceSent(out *http.Request) *http.Request {
	d := deliveryFrom(out.Context())
	if d == nil {
		return out
	}
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { d.notSent.Store(false) }}
	return out.WithContext(httptrace.WithClientTrace(out.Context(), trace))
}
