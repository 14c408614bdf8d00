package telemetry

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// lakegate_build_info is 1 with the build's version, revision and Go
// version; a binary without build information says "unknown", not "".
func TestBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name              string
		info              *debug.BuildInfo
		version, revision string
	}{
		{"stamped", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}, "v1.2.3", "abc123"},
		{"no vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)", "unknown"},
		{"no build info", nil, "unknown", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			require.NoError(t, reg.Register(newBuildInfo(func() (*debug.BuildInfo, bool) { return tc.info, tc.info != nil })))
			families, err := reg.Gather()
			require.NoError(t, err)
			require.Len(t, families, 1)
			m := families[0].GetMetric()[0]
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			require.Equal(t, "lakegate_build_info", families[0].GetName())
			require.Equal(t, 1.0, m.GetGauge().GetValue())
			require.Equal(t, map[string]string{"version": tc.version, "revision": tc.revision, "goversion": runtime.Version()}, labels)
		})
	}
}
