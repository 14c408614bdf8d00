package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/translate/delta"
	"github.com/lakegate/lakegate/translate/logsync"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
)

// Transport opens catalog name's Iceberg pipeline to a translator
// (translate.Pipelines). Policy is not decided here: the Delta front
// doors authorize the operation their client asked for before they
// translate it.
func (a *App) Transport(name string) (http.RoundTripper, bool) {
	cat, ok := a.catalog(name)
	if !ok {
		return nil, false
	}
	return pipelineTransport{cat}, true
}

// Serve runs a translator's typed call through catalog name's pipeline
// in process (translate.Pipelines): the route is the translator's, so no
// URL is built for it to be parsed again, and the answer is the captured
// bytes themselves.
func (a *App) Serve(ctx context.Context, name string, call translate.Call) (*translate.Response, error) {
	return a.serveCall(ctx, name, call, (*upstream.Pipeline).Serve)
}

// serveCall runs call through catalog name's pipeline, entered by enter
// (Serve for the doors' calls, ServeBeneathRefresher for the log sync's).
func (a *App) serveCall(ctx context.Context, name string, call translate.Call,
	enter func(*upstream.Pipeline, http.ResponseWriter, *http.Request, icerest.Route, string)) (*translate.Response, error) {
	cat, ok := a.catalog(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q", translate.ErrNoCatalog, name)
	}
	rt := call.Route
	rt.Prefix, rt.HasPrefix = name, true
	method := icerest.MethodOf(rt.Operation)
	if method == "" {
		return nil, fmt.Errorf("translate: %q is no Iceberg REST operation", rt.Operation)
	}
	header := call.Header
	if header == nil {
		header = http.Header{}
	}
	if cat.cfg.Storage != nil {
		// The storage keys are the gateway's: a translator is given none
		// either (docs/storage.md), and a backend is not asked to vend.
		header = header.Clone()
		header.Del("X-Iceberg-Access-Delegation")
	}
	req := (&http.Request{
		Method: method, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: header,
		URL:           &url.URL{Path: "/v1/" + name, RawQuery: call.Query.Encode()},
		Body:          io.NopCloser(bytes.NewReader(call.Body)),
		ContentLength: int64(len(call.Body)), Host: "lakegate.pipeline",
	}).WithContext(ctx)
	var h upstream.Handler
	err := checkNames(rt)
	if err == nil && cat.cfg.Storage != nil && rt.Operation == icerest.OpLoadCredentials {
		err = icerest.Errorf(http.StatusForbidden, icerest.Forbidden,
			"catalog %q vends no storage credentials: its storage keys are the gateway's", name)
	}
	if err != nil {
		h = func(w http.ResponseWriter, r *http.Request, _ icerest.Request) { icerest.WriteError(w, r, err) }
	} else {
		principal := caller.From(ctx).Principal
		h = func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
			enter(cat.pipeline, w, r, q.Route, principal) // unread: the pipeline reads it, once
		}
	}
	rec := upstream.Capture(h, req, icerest.Request{Route: rt})
	body := rec.Bytes()
	if cat.cfg.Storage != nil && rec.Status == http.StatusOK && returnsTable[rt.Operation] {
		body = stripCredentials(body, true) // a backend that vends unasked, or signs
	}
	return &translate.Response{Status: rec.Status, Header: rec.Header, Body: body}, nil
}

// syncDeltaLogs has every catalog's pipeline keep the tables whose truth
// is a Delta log in step with their logs: the log sync stage
// (translate/logsync) over the Delta translator d, which reaches the
// catalogs beneath the stage (BeneathSync). Only a Delta door creates
// such tables, so a gateway without one pays nothing for it; with several
// doors the first one's stage does it.
func (a *App) syncDeltaLogs(d *delta.Service) {
	var stage *logsync.Stage
	for _, cat := range a.backends {
		if cat.pipeline.Refresher == nil {
			if stage == nil {
				stage = logsync.New(d)
			}
			cat.pipeline.Refresher = stage
		}
	}
}

// BeneathSync is the catalogs' pipelines as the log sync stage's own calls
// take them: below the stage, so a sync's loads and commits are neither
// synced again nor refused as Iceberg writes to a Delta log's table.
func (a *App) BeneathSync() translate.Pipelines { return beneathSync{a} }

type beneathSync struct{ *App }

func (b beneathSync) Serve(ctx context.Context, name string, call translate.Call) (*translate.Response, error) {
	return b.serveCall(ctx, name, call, (*upstream.Pipeline).ServeBeneathRefresher)
}

// Locations is where catalog name's files may be read from (nil: not
// confined by lakegate).
func (a *App) Locations(name string) *locations.Rule {
	if cat, ok := a.catalog(name); ok {
		return cat.locations
	}
	return nil
}

// StorageProperties are catalog name's storage keys as FileIO properties
// (translate.Pipelines), the same an embedded catalog on them uses
// (withStorageProperties); nil without a storage block.
func (a *App) StorageProperties(name string) map[string]string {
	cat, ok := a.catalog(name)
	if !ok || cat.cfg.Storage == nil {
		return nil
	}
	return withStorageProperties(nil, cat.cfg.Storage)
}

// pipelineTransport runs an Iceberg REST request through one catalog's
// pipeline in process, as the Iceberg front door would, and hands back the
// captured answer.
type pipelineTransport struct{ cat *catalogState }

func (t pipelineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	path := req.URL.EscapedPath()
	if path == "/v1/config" {
		return t.config(req)
	}
	rt, rerr := icerest.ParseRoute(req.Method, path, t.cat.separator)
	if rerr == nil {
		rerr = checkNames(rt)
	}
	if rerr != nil {
		return t.respond(req, func(w http.ResponseWriter, r *http.Request, _ icerest.Request) {
			icerest.WriteError(w, r, rerr)
		}, rt), nil
	}
	if t.cat.cfg.Storage != nil && req.Header.Get("X-Iceberg-Access-Delegation") != "" {
		// As in serveCall: the backend of a catalog with storage keys of
		// the gateway's is not asked to vend (scan planning asks).
		req = req.Clone(req.Context())
		req.Header.Del("X-Iceberg-Access-Delegation")
	}
	principal := caller.From(req.Context()).Principal
	return t.respond(req, func(w http.ResponseWriter, r *http.Request, q icerest.Request) {
		t.cat.pipeline.Serve(w, r, q.Route, principal) // unread: the pipeline reads it, once
	}, rt), nil
}

// config answers /v1/config as the Iceberg door would.
func (t pipelineTransport) config(req *http.Request) (*http.Response, error) {
	cc, err := t.cat.pipeline.Config(req.Context())
	if err != nil {
		return t.respond(req, func(w http.ResponseWriter, r *http.Request, _ icerest.Request) {
			upstream.WriteError(w, r, err, icerest.OpGetConfig)
		}, icerest.Route{}), nil
	}
	body, err := json.Marshal(gatewayConfig(t.cat, cc, req))
	if err != nil {
		return nil, err
	}
	return response(req, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, body), nil
}

func (t pipelineTransport) respond(req *http.Request, h upstream.Handler, rt icerest.Route) *http.Response {
	rec := upstream.Capture(h, req, icerest.Request{Route: rt})
	return response(req, rec.Status, rec.Header, rec.Bytes())
}

func response(req *http.Request, status int, h http.Header, body []byte) *http.Response {
	return &http.Response{
		Status: http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}
}

var _ translate.Pipelines = (*App)(nil)
