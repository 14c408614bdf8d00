package gateway

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionSetAtBuildTime(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "v0.3.0"
	assert.Equal(t, "v0.3.0", Version())
	assert.Regexp(t, `^lakegate v0\.3\.0 \(Caddy \S+`, VersionLine()) // a test binary may not know Caddy's version
}

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for want, bi := range map[string]*debug.BuildInfo{
		"v1.2.3":                   {Main: debug.Module{Version: "v1.2.3"}, Settings: vcs("vcs.revision", "0123456789abcdef")},
		"devel-0123456789ab":       {Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123456789abcdef", "vcs.modified", "false")},
		"devel-0123456789ab-dirty": {Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123456789abcdef", "vcs.modified", "true")},
		"devel-abc":                {Main: debug.Module{}, Settings: vcs("vcs.revision", "abc")},
		"devel":                    {Main: debug.Module{Version: "(devel)"}},
	} {
		assert.Equal(t, want, versionFrom(bi))
	}
	// Built with xcaddy, lakegate is a dependency of xcaddy's main module.
	xcaddy := func(lakegate debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "github.com/caddyserver/caddy/v2", Version: "v2.11.9"}, &lakegate}}
	}
	for want, bi := range map[string]*debug.BuildInfo{
		"v0.3.0": xcaddy(debug.Module{Path: modulePath, Version: "v0.3.0"}),
		"v0.3.1": xcaddy(debug.Module{Path: modulePath, Version: "v0.3.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.3.1"}}),
		"devel": xcaddy(debug.Module{Path: modulePath, Version: "v0.0.0-00010101000000-000000000000",
			Replace: &debug.Module{Path: "/src/lakegate"}}),
	} {
		assert.Equal(t, want, versionFrom(bi))
	}
}
