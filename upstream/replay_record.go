package upstream

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Replay records hold a whole response, and commit responses carry the
// table's whole metadata, so they are the bulk of the replay store. Bodies
// from compressAbove bytes are kept gzip-compressed (table metadata JSON
// shrinks about tenfold), and a body still larger than MaxRecordBytes is
// not kept at all: its record says only that the request was applied.

const (
	compressAbove          = 1 << 10
	defaultMaxRecordBytes  = 1 << 20
	defaultMaxErrorRecords = 10_000
	// maxErrorRecordBytes bounds a kept refusal's body (Iceberg error
	// bodies are a few hundred bytes).
	maxErrorRecordBytes = 4 << 10
	encodingGzip        = "gzip"
)

// finalRecord is the stored outcome of a finished request.
func (g *Replayer) finalRecord(fp string, rw *recorder) replay.Record {
	rec := replay.Record{Fingerprint: fp, Final: true, Status: rw.Status(), Header: keptHeaders(rw.Header()),
		Body: rw.body.Bytes(), Created: time.Now()}
	if len(rec.Body) >= compressAbove {
		if z, err := gzipped(rec.Body); err == nil && len(z) < len(rec.Body) {
			rec.Body, rec.Encoding = z, encodingGzip
		}
	}
	if len(rec.Body) > g.cfg.MaxRecordBytes {
		rec.Unkept, rec.Body, rec.Encoding = rw.body.Len(), nil, ""
	}
	return rec
}

// replay answers with a stored outcome.
func (g *Replayer) replay(w http.ResponseWriter, r *http.Request, rec replay.Record) {
	g.Replays.Add(1)
	g.outcome(r, "replayed")
	// Applied, but the response is not there to send again (running the
	// request again could apply it twice): CommitStateUnknown, saying why.
	if rec.Unkept > 0 {
		icerest.WriteError(w, r, icerest.Errorf(http.StatusInternalServerError, icerest.CommitStateUnknown,
			"the request with this Idempotency-Key was applied (status %d), but its %d-byte response was larger "+
				"than the replay store keeps (max_record_bytes %d): load the table to see the result",
			rec.Status, rec.Unkept, g.cfg.MaxRecordBytes))
		return
	}
	body, err := recordBody(rec)
	if err != nil {
		g.log.Error("stored replay record cannot be decoded", zap.String("encoding", rec.Encoding), zap.Error(err))
		icerest.WriteError(w, r, icerest.Errorf(http.StatusInternalServerError, icerest.CommitStateUnknown,
			"the request with this Idempotency-Key was applied (status %d), but its stored response cannot be "+
				"decoded: load the table to see the result", rec.Status))
		return
	}
	for k, v := range rec.Header {
		w.Header()[k] = v
	}
	w.Header().Set(ReplayedHeader, "true")
	w.WriteHeader(rec.Status)
	_, _ = w.Write(body)
}

func recordBody(rec replay.Record) ([]byte, error) {
	switch rec.Encoding {
	case "":
		return rec.Body, nil
	case encodingGzip:
		zr, err := gzip.NewReader(bytes.NewReader(rec.Body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}
	return nil, fmt.Errorf("unknown record encoding %q", rec.Encoding)
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errorBudget bounds the refusals (4xx) one replica keeps per window
// (the key lifetime): a client sending many unique keys with bad requests
// cannot fill the replay store. A refusal not kept is released, which is
// safe (it was not applied) but not the spec's promise: a retry of it
// runs again and may now succeed.
type errorBudget struct {
	max    int
	window time.Duration

	mu    sync.Mutex
	start time.Time
	used  int
}

// keep reports whether a refusal with a body of n bytes may be stored,
// counting it when so.
func (b *errorBudget) keep(n int) bool {
	if n > maxErrorRecordBytes {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now := time.Now(); now.Sub(b.start) >= b.window {
		b.start, b.used = now, 0
	}
	if b.used >= b.max {
		return false
	}
	b.used++
	return true
}
