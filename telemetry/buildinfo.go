package telemetry

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfo is lakegate_build_info: always 1, with the build's version,
// VCS revision and Go version as labels, so a dashboard can tell which
// build each replica runs (and a rollout's mix of them).
var buildInfo = newBuildInfo(debug.ReadBuildInfo)

func newBuildInfo(read func() (*debug.BuildInfo, bool)) prometheus.Collector {
	version, revision := "unknown", "unknown"
	if bi, ok := read(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				revision = s.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "lakegate", Name: "build_info",
		Help: "Always 1; the labels name the running build: its module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{
			"version": version, "revision": revision, "goversion": runtime.Version(),
		},
	}, func() float64 { return 1 })
}
