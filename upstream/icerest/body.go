package icerest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// heldBody is a request body read once and kept, so that r.Body reads
// from the start again for whoever is handed r (a member catalog's
// pipeline, the embedded catalog). It holds the bytes and nothing else:
// what was read of them is the Request's (ParseRequest), not the body's.
type heldBody struct {
	*bytes.Reader
	b []byte
}

func (heldBody) Close() error { return nil }

// HoldBody returns r's body, reading it only the first time, and leaves
// r.Body readable from the start again. A body over the request's
// http.MaxBytesReader limit is a 413, any other read failure a 400.
func HoldBody(r *http.Request) ([]byte, error) {
	if h, ok := r.Body.(*heldBody); ok {
		h.Reset(h.b)
		return h.b, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, Errorf(http.StatusRequestEntityTooLarge, RequestEntityTooLarge,
				"request body exceeds %d bytes", mbe.Limit)
		}
		return nil, Errorf(http.StatusBadRequest, BadRequest, "reading request body: %v", err)
	}
	r.Body = &heldBody{Reader: bytes.NewReader(b), b: b}
	return b, nil
}
