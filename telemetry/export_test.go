package telemetry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/exporters/autoexport"
)

// Span export is off unless a variable asks for it, and then the
// exporter Caddy's `tracing` handler builds (autoexport) is the no-op one;
// any of the variables leaves the environment as the operator set it.
func TestDisableUnrequestedTraceExport(t *testing.T) {
	for _, k := range traceExportVars {
		t.Setenv(k, "") // empty is unset to autoexport and to the check
	}
	exporter := func() bool {
		exp, err := autoexport.NewSpanExporter(context.Background())
		require.NoError(t, err)
		t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
		return autoexport.IsNoneSpanExporter(exp)
	}
	require.False(t, exporter(), "autoexport's default is OTLP to localhost")

	set := map[string]string{}
	off := DisableUnrequestedTraceExport(func(k string) string { return set[k] },
		func(k, v string) error { set[k] = v; return nil })
	assert.True(t, off)
	assert.Equal(t, map[string]string{"OTEL_TRACES_EXPORTER": "none"}, set)
	t.Setenv("OTEL_TRACES_EXPORTER", set["OTEL_TRACES_EXPORTER"])
	assert.True(t, exporter(), "nothing asked: no exporter")

	for _, k := range traceExportVars {
		set := map[string]string{k: "http://collector:4318"}
		off := DisableUnrequestedTraceExport(func(k string) string { return set[k] },
			func(k, v string) error { set[k] = v; return nil })
		assert.False(t, off, k)
		assert.Equal(t, map[string]string{k: "http://collector:4318"}, set, k)
	}
}
