package icerest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// heldBody is a request body read once and kept: every stage that needs
// the bytes (validation, confinement, the replay fingerprint, cache
// invalidation, the backend call) shares this one copy.
type heldBody struct {
	*bytes.Reader
	b []byte
	// vetted is ValidateBody's answer for op vettedOp, kept so the door
	// and the pipeline check the same bytes once (VetBody).
	vettedOp string
	vetted   Touched
	vetErr   error
	parsed   object // the body as ValidateBody parsed it, for BodyLocations
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

// VetBody holds r's body and checks it against op's request schema
// (ValidateBody), once per request: the Iceberg door vets a body for its
// policy, the pipeline for every door, and the second asks for free.
func VetBody(r *http.Request, op string) (Touched, error) {
	if !VetsBody(op) {
		return Touched{}, nil
	}
	body, err := HoldBody(r)
	if err != nil {
		return Touched{}, err
	}
	h, held := r.Body.(*heldBody)
	if held && h.vettedOp == op {
		return h.vetted, h.vetErr
	}
	t, parsed, err := validateBody(op, body)
	if held {
		h.vettedOp, h.vetted, h.vetErr, h.parsed = op, t, err, parsed
	}
	return t, err
}

// VetLocations is BodyLocations of r's body (an error a 400), read from the parse VetBody
// made when it vetted the body for op, so confinement reads the very value
// validation checked, and the body is parsed once.
func VetLocations(r *http.Request, op string) ([]string, error) {
	if !NamesLocations(op) {
		return nil, nil
	}
	if _, err := VetBody(r, op); err != nil {
		return nil, err
	}
	var locs []string
	var err error
	if h, ok := r.Body.(*heldBody); ok && h.vettedOp == op && h.parsed != nil {
		locs, err = objectLocations(op, h.parsed)
	} else {
		body, herr := HoldBody(r)
		if herr != nil {
			return nil, herr
		}
		locs, err = BodyLocations(op, body)
	}
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, BadRequest, "%v", err)
	}
	return locs, nil
}
