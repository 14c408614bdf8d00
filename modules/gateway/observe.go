package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
)

// exchange is one request through a front door as an operator sees it:
// its record (carried in the context for the layers to fill in, and
// written into Caddy's access log as the `lakegate` object), the door's
// span, and the status it was answered with. It is the ResponseWriter the
// door writes to, so the status is known without another wrapper.
type exchange struct {
	upstream.StatusWriter
	rec   telemetry.Record
	span  trace.Span
	start time.Time
	own   *ownLine // the access log line lakegate writes (accesslog.go), or nil
	// in is the request as it reached the door: its context holds
	// Caddy's span, not the door's.
	in *http.Request
}

// doorSpans are the front doors' span names, made once.
var doorSpans = map[string]string{"iceberg": "lakegate.iceberg", "delta": "lakegate.delta", "unity": "lakegate.unity", "sharing": "lakegate.sharing"}

// begin starts the exchange of a request to api's front door of a's
// gateway.
func begin(a *App, w http.ResponseWriter, r *http.Request, api string) (*exchange, *http.Request) {
	x := &exchange{StatusWriter: upstream.StatusWriter{ResponseWriter: w}, rec: telemetry.Record{API: api}, start: time.Now(), in: r}
	x.hideQueryCredentials(a, r)
	ctx, span := telemetry.Start(r.Context(), doorSpans[api], nil)
	x.span = span
	if logsRequests(ctx) {
		if extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
			extra.Add(zap.Object("lakegate", &x.rec)) // marshalled when the log is written: the final record
		}
	}
	return x, r.WithContext(telemetry.WithRecord(ctx, &x.rec))
}

// logsRequests tells whether the server writes access logs: without them
// the record is not added to a log line that is never written.
func logsRequests(ctx context.Context) bool {
	srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return !ok || srv.Logs != nil
}

// authenticated notes the principal, also as Caddy's `user_id` (the
// access log's field, and {http.auth.user.id} in placeholders).
func (x *exchange) authenticated(r *http.Request, id string) {
	x.rec.Principal = id
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set("http.auth.user.id", id)
	}
}

// noteCatalog notes the catalog a request addresses, when the gateway
// serves it.
func noteCatalog(r *http.Request, cat *catalogState) {
	if cat != nil {
		telemetry.From(r.Context()).SetCatalog(cat.cfg.Name)
	}
}

// translated runs a translator's part of a request under its own span.
func translated(r *http.Request, run func(r *http.Request)) {
	r, span := telemetry.StartRequest(r, "lakegate.translate", nil)
	run(r)
	span.End()
}

// end counts the request, records its duration and closes the door's span.
func (x *exchange) end() {
	r := &x.rec
	telemetry.ObserveRequest(r.Catalog, r.API, r.Operation, x.Status(), time.Since(x.start))
	if x.span.IsRecording() {
		x.span.SetAttributes(telemetry.Present(telemetry.AttrAPI.String(r.API),
			telemetry.AttrCatalog.String(r.Catalog), telemetry.AttrOperation.String(r.Operation),
			telemetry.AttrCache.String(r.Cache), telemetry.AttrDecision.String(r.Decision()),
			telemetry.AttrMember.String(r.Member))...)
	}
	telemetry.EndStatus(x.span, x.Status())
	if x.own != nil {
		x.own.write(r)
	}
}
