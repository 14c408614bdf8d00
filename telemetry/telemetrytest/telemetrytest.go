// Package telemetrytest reads lakegate's metrics in tests, as a scrape
// would: through a registry of its own.
package telemetrytest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/telemetry"
)

// Sample is the value of the series of metric name with exactly these
// labels (a histogram's count), or 0 when there is none. The collectors
// are the process's: tests compare values before and after what they do.
func Sample(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, telemetry.Register(reg))
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			same := true
			for _, l := range m.GetLabel() {
				same = same && labels[l.GetName()] == l.GetValue()
			}
			if !same {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}
