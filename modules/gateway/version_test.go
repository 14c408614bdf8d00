package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionSetAtBuildTime(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "v0.3.0"
	assert.Equal(t, "v0.3.0", Version())
	assert.Regexp(t, `^lakegate v0\.3\.0 \(Caddy \S+`, VersionLine()) // a test binary may not know Caddy's version
	version = ""
	assert.NotEmpty(t, Version(), "build info or devel")
}
