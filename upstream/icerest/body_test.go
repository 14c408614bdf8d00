package icerest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHoldBodyReadsOnce(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/v1/ns/tables", strings.NewReader(`{"name":"t"}`))
	first, err := HoldBody(r)
	require.NoError(t, err)
	_, _ = io.ReadAll(r.Body) // a stage consumes it
	again, err := HoldBody(r)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"t"}`, string(again))
	assert.Same(t, &first[0], &again[0], "the same bytes, not a second copy")
	rest, _ := io.ReadAll(r.Body)
	assert.Equal(t, `{"name":"t"}`, string(rest), "the body reads from the start again")

	empty := httptest.NewRequest(http.MethodGet, "/v1/config", nil)
	b, err := HoldBody(empty)
	assert.NoError(t, err)
	assert.Empty(t, b)
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestHoldBodyBad(t *testing.T) {
	w := httptest.NewRecorder()
	big := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", 11)))
	big.Body = http.MaxBytesReader(w, big.Body, 10)
	_, err := HoldBody(big)
	assert.Equal(t, Errorf(http.StatusRequestEntityTooLarge, RequestEntityTooLarge, "request body exceeds 10 bytes"), err)

	cut := httptest.NewRequest(http.MethodPost, "/", failingReader{})
	_, err = HoldBody(cut)
	assert.Equal(t, Errorf(http.StatusBadRequest, BadRequest, "reading request body: connection reset"), err)
}
