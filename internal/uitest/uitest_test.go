package uitest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The write-control check finds what a write control would look like,
// and lets the browser's read-only controls pass.
func TestWriteControls(t *testing.T) {
	for _, dom := range []string{
		`<button type="button">Drop table</button>`,
		`<a href="#x" class="x"> Delete</a>`,
		`<form method="post" action="/v1/x">`,
		`<button data-write="true">Go</button>`,
	} {
		assert.NotEmpty(t, WriteControls(dom), dom)
	}
	readOnly := `<button type="button" class="sign-out">Forget token</button><a href="#page=explain">Explain a decision</a>` +
		`<form id="token-form"><input type="password" name="token"><button type="submit">Use token</button></form>` +
		`<select><option value="dropTable">dropTable</option></select>`
	assert.Empty(t, WriteControls(readOnly))
}
