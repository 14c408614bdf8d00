package apierror

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAs(t *testing.T) {
	e := Errorf(http.StatusNotFound, "NoSuchTableException", "table %s does not exist", "t")
	assert.Equal(t, "404 NoSuchTableException: table t does not exist", e.Error())
	fallback := func(err error) *Error { return Errorf(500, "Internal", "%v", err) }
	assert.Same(t, e, As(fmt.Errorf("loading: %w", e), fallback), "unwrapped through wrapping")
	assert.Equal(t, &Error{Code: 500, Type: "Internal", Message: "boom"}, As(errors.New("boom"), fallback))
}
