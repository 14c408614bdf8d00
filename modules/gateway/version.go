package gateway

import (
	"runtime/debug"

	"github.com/caddyserver/caddy/v2"
)

// version is lakegate's release, set at build time:
//
//	go build -ldflags "-X github.com/lakegate/lakegate/modules/gateway.version=v0.3.0" ./caddy
//
// Without it, Version falls back on the build info.
var version string

// modulePath is lakegate's Go module.
const modulePath = "github.com/lakegate/lakegate"

// Version is lakegate's version: the one set at build time, else the
// module's from the build info (a tagged `go install`, or the version an
// xcaddy build required), else its VCS revision, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionFrom(bi)
}

// versionFrom reads lakegate's version from its build info.
func versionFrom(bi *debug.BuildInfo) string {
	for _, d := range bi.Deps { // lakegate is a dependency: an xcaddy build
		if d.Path != modulePath {
			continue
		}
		if d.Replace != nil {
			d = d.Replace
		}
		if d.Version == "" {
			return "devel" // replaced by a local directory
		}
		return d.Version
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// VersionLine is what `lakegate version` prints: lakegate's version and
// the Caddy it is built on.
func VersionLine() string {
	_, caddyFull := caddy.Version()
	return "lakegate " + Version() + " (Caddy " + caddyFull + ")"
}
