package gateway

import "go.opentelemetry.io/otel"

// OpenTelemetry reports what it could not do (a batch of spans that no
// collector took) to its global error handler, which by default prints
// with the standard library's logger: Caddy turns that into a line at
// info level, once per failed batch. Those errors go to Caddy's log as
// warnings of the logger "lakegate.otel" instead, at most one per
// sampledLogEvery (with the count left out): a collector that is down is
// worth a warning, not a line every few seconds.
func init() { otel.SetErrorHandler(otelLog{newSampledLog("lakegate.otel")}) }

type otelLog struct{ *sampledLog }

// Handle writes err. Every error is one kind: each failed export has a
// message of its own (the attempt's details), and one a while is enough.
func (l otelLog) Handle(err error) { l.warn("export", err.Error()) }
