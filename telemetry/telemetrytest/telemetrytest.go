// Package telemetrytest reads lakegate's metrics in tests, as a scrape
// would: through a registry of its own, or from a scrape's families.
package telemetrytest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/telemetry"
)

// Sample is the value of the series of metric name with exactly these
// labels (see Value). The collectors are the process's: tests compare
// values before and after what they do.
func Sample(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, telemetry.Register(reg))
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return Value(f, labels)
		}
	}
	return 0
}

// Value is the value of f's series with exactly these labels (a
// histogram's count), or 0 when f is nil or has no such series.
func Value(f *dto.MetricFamily, labels map[string]string) float64 {
	for _, m := range f.GetMetric() {
		if !sameLabels(m.GetLabel(), labels) {
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
	return 0
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}
