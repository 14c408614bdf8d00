package upstream

import "net/http"

// StatusWriter passes a response through, noting the status it was
// answered with.
type StatusWriter struct {
	http.ResponseWriter
	status int // 0 until the first WriteHeader or Write
}

// Status is the answer's status: 200 when the handler wrote a body
// without WriteHeader, or wrote nothing at all.
func (w *StatusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
