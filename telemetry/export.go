package telemetry

// traceExportVars are the environment variables by which an operator asks
// for span export: an exporter by name, or an OTLP endpoint (the traces'
// own, or the one all signals share).
var traceExportVars = []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// DisableUnrequestedTraceExport turns span export off
// (OTEL_TRACES_EXPORTER=none) unless the environment asks for it, and
// reports whether it did. Otherwise Caddy's `tracing` handler exports to
// OTLP's default endpoint, localhost:4318, where there is seldom a
// collector: every batch would fail and be logged. With export off, spans
// are still made (the access log's traceID, the traceparent sent to
// backends); they just go nowhere. The lakegate binary calls it before
// anything reads the environment.
func DisableUnrequestedTraceExport(getenv func(string) string, setenv func(string, string) error) bool {
	for _, k := range traceExportVars {
		if getenv(k) != "" {
			return false
		}
	}
	return setenv("OTEL_TRACES_EXPORTER", "none") == nil
}
