package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const tracerName = "github.com/lakegate/lakegate"

// noSpan is a span that records nothing; ending it ends nothing.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts a span for one layer under the request's span, from the
// tracer provider of the span already in ctx (Caddy's `tracing` handler
// puts its own there). Without a recording span in ctx, as when tracing
// is off, it returns ctx itself and a span that records nothing, so the
// untraced path allocates nothing: attrs (may be nil) is called only for
// a span that records, and attributes set later belong behind
// span.IsRecording().
func Start(ctx context.Context, name string, attrs func() []attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, noSpan
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(spanKind(name))}
	if attrs != nil {
		opts = append(opts, trace.WithAttributes(attrs()...))
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, name, opts...)
}

// StartRequest starts a layer's span and returns r carrying it (r itself
// when nothing is traced).
func StartRequest(r *http.Request, name string, attrs func() []attribute.KeyValue) (*http.Request, trace.Span) {
	ctx, span := Start(r.Context(), name, attrs)
	if span == noSpan {
		return r, span
	}
	return r.WithContext(ctx), span
}

// SpanBackend is the backend call's span name: a client span, the one
// whose context goes to the backend.
const SpanBackend = "lakegate.backend"

func spanKind(name string) trace.SpanKind {
	if name == SpanBackend {
		return trace.SpanKindClient
	}
	return trace.SpanKindInternal
}

// EndStatus ends span, marking it failed for a 5xx.
func EndStatus(span trace.Span, status int) {
	if span == noSpan {
		return
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// traceContext is W3C Trace Context: `traceparent` (and `tracestate`).
var traceContext = propagation.TraceContext{}

// Inject writes the span context of ctx into h as `traceparent`, so a
// backend that traces continues the gateway's trace. Nothing is written
// when nothing is traced.
func Inject(ctx context.Context, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		traceContext.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// Attribute keys the spans carry.
var (
	AttrCatalog   = attribute.Key("lakegate.catalog")
	AttrOperation = attribute.Key("lakegate.operation")
	AttrAPI       = attribute.Key("lakegate.api")
	AttrCache     = attribute.Key("lakegate.cache")
	AttrBreaker   = attribute.Key("lakegate.breaker")
	AttrDecision  = attribute.Key("lakegate.decision")
	AttrReplay    = attribute.Key("lakegate.replay")
	// AttrMember is the member catalog a unified catalog sent a request to.
	AttrMember = attribute.Key("lakegate.member")
)

// Present drops the attributes whose value is an empty string: an
// unknown catalog, operation or cache result is left off the span, not
// recorded as "" (a query for lakegate.catalog="" would match it).
func Present(kvs ...attribute.KeyValue) []attribute.KeyValue {
	out := kvs[:0:0]
	for _, kv := range kvs {
		if kv.Value.Type() != attribute.STRING || kv.Value.AsString() != "" {
			out = append(out, kv)
		}
	}
	return out
}
