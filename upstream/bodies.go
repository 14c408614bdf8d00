package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Backend answers are read whole (they are checked before a byte is
// served), so a gateway holds one buffer per answer in flight. How that
// buffer is got depends on where the answer goes:
//
//   - to a client: the buffer is only written out, then reused for the
//     next answer (a pooled buffer), so a 10 MB LoadTable does not leave
//     10 MB of garbage per request behind;
//   - to a stage that keeps it (the table cache, a capture handed the
//     body: see sharedWriter): the buffer is the answer's own, sized to
//     it exactly when its length is known, and is never reused.
type readMode int

const (
	readOwned  readMode = iota // the caller keeps the body
	readPooled                 // the caller writes the body out, then releases it
)

// pooledBody is a buffer from bodyPools; release it once it was written.
type pooledBody struct {
	buf   []byte
	class int
}

// Body pools by size class: a class holds buffers of classSize(class)
// bytes; four classes per doubling keep a buffer at most a fifth larger
// than the answer it holds.
const (
	minClassSize = 16 << 10
	classesPer2x = 4
)

var bodyPools [128]sync.Pool

// classSize is the capacity of a class's buffers.
func classSize(class int) int {
	return minClassSize << (class / classesPer2x) * (classesPer2x + class%classesPer2x) / classesPer2x
}

// classFor is the smallest class whose buffers hold n bytes.
func classFor(n int) int {
	c := 0
	for classSize(c) < n {
		c++
	}
	return c
}

// getBody is a pooled buffer of capacity at least n, of length 0.
func getBody(n int) *pooledBody {
	c := classFor(n)
	if c >= len(bodyPools) {
		return &pooledBody{buf: make([]byte, 0, n), class: -1}
	}
	if pb, ok := bodyPools[c].Get().(*pooledBody); ok {
		pb.buf = pb.buf[:0]
		return pb
	}
	return &pooledBody{buf: make([]byte, 0, classSize(c)), class: c}
}

// release puts the buffer back; nothing may use its bytes afterwards.
func (pb *pooledBody) release() {
	if pb == nil || pb.class < 0 {
		return
	}
	pb.buf = pb.buf[:0]
	bodyPools[pb.class].Put(pb)
}

// errTooLarge is an answer past maxResponse.
var errTooLarge = fmt.Errorf("backend response exceeds %d bytes", maxResponse)

// readBody reads a whole response as mode says; pb is the pooled buffer
// holding it (nil for readOwned), to be released once it was written.
func readBody(resp *http.Response, mode readMode) (data []byte, pb *pooledBody, err error) {
	n := resp.ContentLength
	if !bodyExpected(resp) {
		n = 0 // the length a HEAD or 304 declares is not there to read
	}
	if n > maxResponse {
		return nil, nil, errTooLarge
	}
	if mode == readOwned {
		if n >= 0 {
			data, err = readExactly(resp.Body, int(n))
			return data, nil, err
		}
		var buf bytes.Buffer
		buf.Grow(32 << 10)
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxResponse+1))
		if err == nil && buf.Len() > maxResponse {
			err = errTooLarge
		}
		return buf.Bytes(), nil, err
	}
	if n < 0 {
		n = 32 << 10 // a guess; the buffer grows by classes
	}
	pb = getBody(int(n) + 1) // one byte more: a read that fills the buffer is not yet the end
	err = pb.fill(resp.Body)
	return pb.buf, pb, err
}

// readExactly reads a body of a declared length into a buffer of that
// length: a cache can keep it without the spare capacity a growing buffer
// leaves. net/http ends the body at its declared length and reports one
// cut short as an error of its own (io.ErrUnexpectedEOF), so an io.EOF is
// the body's end, as for any other read.
func readExactly(r io.Reader, n int) ([]byte, error) {
	data := make([]byte, n)
	read := 0
	for read < n {
		m, err := r.Read(data[read:])
		read += m
		if errors.Is(err, io.EOF) {
			return data[:read], nil
		}
		if err != nil {
			return nil, err
		}
	}
	return data, nil
}

// bodyExpected tells whether a response may carry the body its length
// declares: not the answer to a HEAD, nor a 1xx, 204 or 304.
func bodyExpected(resp *http.Response) bool {
	if resp.Request != nil && resp.Request.Method == http.MethodHead {
		return false
	}
	s := resp.StatusCode
	return s >= 200 && s != http.StatusNoContent && s != http.StatusNotModified
}

// fill reads r to its end into pb, moving to a larger class when full.
func (pb *pooledBody) fill(r io.Reader) error {
	for {
		if len(pb.buf) == cap(pb.buf) {
			if len(pb.buf) > maxResponse {
				return errTooLarge
			}
			old := *pb
			bigger := getBody(2 * cap(pb.buf))
			bigger.buf = append(bigger.buf, old.buf...)
			*pb = *bigger
			// bigger's holder now takes the old buffer back to its pool
			bigger.buf, bigger.class = old.buf, old.class
			bigger.release()
		}
		m, err := r.Read(pb.buf[len(pb.buf):cap(pb.buf)])
		pb.buf = pb.buf[:len(pb.buf)+m]
		if err == io.EOF {
			if len(pb.buf) > maxResponse {
				return errTooLarge
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}
