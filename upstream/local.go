package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Local is a backend served in-process by an http.Handler (the embedded
// catalog): no network, no breaker, the same request rewriting.
type Local struct {
	name string // the catalog's, for metrics and spans
	h    http.Handler

	once sync.Once
	cc   *CatalogConfig
	err  error
}

// NewLocal wraps catalog name's in-process Iceberg REST handler as a
// Backend.
func NewLocal(name string, h http.Handler) *Local { return &Local{name: name, h: h} }

// Config asks the handler for its /v1/config once; it never changes.
func (l *Local) Config(ctx context.Context) (*CatalogConfig, error) {
	l.once.Do(func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/v1/config", nil)
		if err != nil {
			l.err = err
			return
		}
		rec := Capture(func(w http.ResponseWriter, r *http.Request, _ icerest.Request) { l.h.ServeHTTP(w, r) }, req, icerest.Request{})
		if rec.Status != http.StatusOK {
			l.err = icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
				"embedded catalog /v1/config answered %d", rec.Status)
			return
		}
		var cc CatalogConfig
		if l.err = json.Unmarshal(rec.Bytes(), &cc); l.err == nil {
			l.cc = &cc
		}
	})
	return l.cc, l.err
}

// Serve hands the request, rewritten onto the handler's own prefix and
// separator, to the handler. The client's Authorization stays out.
func (l *Local) Serve(w http.ResponseWriter, r *http.Request, q icerest.Request) {
	rt := q.Route
	cc, err := l.Config(r.Context())
	if err != nil {
		WriteError(w, r, err, rt.Operation)
		return
	}
	out := r.Clone(r.Context())
	out.URL.RawPath = rt.Path(cc.Prefix(), cc.Separator())
	query, qerr := translateQuery(q.Query, cc.Separator())
	if qerr != nil {
		icerest.WriteError(w, r, qerr)
		return
	}
	out.URL.RawQuery = query
	if q.Body != nil { // the bytes the pipeline read and vetted, from the start
		out.Body, out.ContentLength, out.GetBody = io.NopCloser(bytes.NewReader(q.Body)), int64(len(q.Body)), nil
	}
	out.URL.Path = ""
	if p, perr := url.PathUnescape(out.URL.RawPath); perr == nil {
		out.URL.Path = p
	}
	out.RequestURI = ""
	out.Header.Del("Authorization")
	out, span := telemetry.StartRequest(out, telemetry.SpanBackend, func() []attribute.KeyValue {
		return []attribute.KeyValue{telemetry.AttrCatalog.String(l.name), telemetry.AttrOperation.String(rt.Operation)}
	})
	sw := &StatusWriter{ResponseWriter: w}
	start := time.Now()
	l.h.ServeHTTP(sw, out)
	telemetry.ObserveBackend(l.name, rt.Operation, sw.Status(), time.Since(start))
	telemetry.From(r.Context()).SetBackend(sw.Status(), "")
	telemetry.EndStatus(span, sw.Status())
}
