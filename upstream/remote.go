package upstream

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// maxResponse bounds a backend response lakegate will buffer.
const maxResponse = 256 << 20

// Remote is a backend reached over HTTP.
type Remote struct {
	name    string // the catalog's, for metrics and spans
	cfg     RemoteConfig
	base    *url.URL
	client  *http.Client
	auth    authenticator
	breaker *breaker
	log     *zap.Logger

	cfgMu     sync.RWMutex
	cached    *CatalogConfig
	cachedAt  time.Time
	configTTL time.Duration

	lastErr atomic.Pointer[BackendError]
	// answered is set once the backend has answered a call: until then a
	// closed breaker says nothing about it (no call has been tried).
	answered atomic.Bool
	prober   prober
}

// NewRemote prepares a remote backend; it does not contact it.
func NewRemote(name string, cfg RemoteConfig, log *zap.Logger) (*Remote, error) {
	if log == nil {
		log = zap.NewNop()
	}
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("remote backend: url must be http(s)://host[:port][/path], got %q", cfg.URL)
	}
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // a redirect could leak credentials to another host
	}}
	auth, err := newAuthenticator(cfg, base, client)
	if err != nil {
		return nil, err
	}
	ttl := cfg.ConfigTTL.D()
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	return &Remote{
		name: name, cfg: cfg, base: base, client: client, auth: auth, log: log,
		breaker: newBreaker(name, cfg.Breaker, log), configTTL: ttl,
	}, nil
}

func newTransport(cfg RemoteConfig) (*http.Transport, error) {
	connect := cfg.ConnectTimeout.D()
	if connect <= 0 {
		connect = 5 * time.Second
	}
	headers := cfg.ResponseHeaderTimeout.D()
	if headers <= 0 {
		headers = 60 * time.Second
	}
	tlsCfg := &tls.Config{InsecureSkipVerify: cfg.TLS.InsecureSkipVerify} //nolint:gosec // operator's explicit choice
	if cfg.TLS.CAFile != "" {
		pem, err := os.ReadFile(cfg.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("remote backend: ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("remote backend: ca_file %s holds no PEM certificates", cfg.TLS.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: headers,
		// A LoadTable answer is tens of KB: read and write it in few
		// syscalls rather than 4 KiB at a time.
		ReadBufferSize:      64 << 10,
		WriteBufferSize:     64 << 10,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}, nil
}

// Config fetches the backend's /v1/config, cached for the config TTL.
func (b *Remote) Config(ctx context.Context) (*CatalogConfig, error) {
	authz := ""
	if b.cfg.Auth.Mode == AuthPassthrough {
		authz = caller.From(ctx).Authorization // the backend knows only the clients
	}
	return b.config(ctx, authz)
}

func (b *Remote) config(ctx context.Context, authz string) (*CatalogConfig, error) {
	b.cfgMu.RLock()
	cached, fresh := b.cached, time.Since(b.cachedAt) < b.configTTL
	b.cfgMu.RUnlock()
	if cached != nil && fresh {
		return cached, nil
	}
	b.cfgMu.Lock()
	defer b.cfgMu.Unlock()
	if b.cached != nil && time.Since(b.cachedAt) < b.configTTL {
		return b.cached, nil
	}
	req, err := http.NewRequestWithContext(withoutDelivery(ctx), http.MethodGet, b.configURL(), nil)
	if err != nil {
		return nil, err
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, body, _, err := b.roundTrip(req, icerest.OpGetConfig, nil, readOwned)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body = b.scrub(resp.Request, body)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		// The backend refused the credentials: say so, not "unavailable".
		return nil, icerest.Errorf(resp.StatusCode, errorTypeFor(resp.StatusCode),
			"backend /v1/config answered %d: %s", resp.StatusCode, snippet(body))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
			"backend /v1/config answered %d: %s", resp.StatusCode, snippet(body))
	}
	var cc CatalogConfig
	if err := json.Unmarshal(body, &cc); err != nil {
		return nil, icerest.Errorf(http.StatusBadGateway, icerest.ServiceUnavailable,
			"backend /v1/config is not valid JSON: %v", err)
	}
	if cc.Overrides == nil {
		cc.Overrides = map[string]string{}
	}
	if b.cfg.Prefix != "" {
		cc.Overrides["prefix"] = b.cfg.Prefix
	}
	b.cached, b.cachedAt = &cc, time.Now()
	return &cc, nil
}

// configURL is the backend's /v1/config, for the configured warehouse.
func (b *Remote) configURL() string {
	u := b.base.JoinPath("v1", "config")
	if b.cfg.Warehouse != "" {
		u.RawQuery = url.Values{"warehouse": {b.cfg.Warehouse}}.Encode()
	}
	return u.String()
}

// Serve proxies one request to the backend.
func (b *Remote) Serve(w http.ResponseWriter, r *http.Request, q icerest.Request) {
	rt := q.Route
	ctx, cancel := context.WithTimeout(r.Context(), b.timeout(rt.Operation))
	defer cancel()
	r = r.WithContext(ctx)
	notYetSent(ctx)
	authz := ""
	if b.cfg.Auth.Mode == AuthPassthrough {
		authz = r.Header.Get("Authorization") // the backend knows only the clients
	}
	cc, err := b.config(ctx, authz)
	if err != nil {
		// The request itself never left: a failed write is definite.
		WriteError(w, r, err, icerest.OpGetConfig)
		return
	}
	if cc.Unlisted(rt.Operation) {
		// Nothing was sent, so nothing was applied: a definite 501.
		icerest.WriteError(w, r, icerest.Errorf(http.StatusNotImplemented, icerest.UnsupportedOperation,
			"catalog %q does not serve %s: its backend's /v1/config does not list %q", b.name, rt.Operation,
			icerest.Endpoints[rt.Operation]))
		return
	}
	out, body, rerr := b.outbound(r, q, cc)
	if rerr != nil {
		icerest.WriteError(w, r, rerr)
		return
	}
	// A capture that keeps the answer is handed the answer's own buffer;
	// an answer written out to a client is read into a pooled one.
	holder, holds := w.(answerHolder)
	mode := readPooled
	if holds {
		mode = readOwned
	}
	resp, respBody, pooled, err := b.roundTrip(out, rt.Operation, body, mode)
	defer pooled.release() // after the last write of respBody
	if err != nil {
		WriteError(w, r, err, rt.Operation)
		return
	}
	if resp.StatusCode >= 400 {
		respBody = b.scrub(resp.Request, respBody)
	}
	respBody, table, err := checkResponse(resp, respBody, rt.Operation)
	if err != nil {
		icerest.WriteError(w, r, err)
		return
	}
	copyResponseHeaders(w.Header(), resp.Header)
	if r.Method != http.MethodHead && bodyAllowed(resp.StatusCode) {
		// The whole body is at hand: a length lets the server send it in
		// one write instead of chunks.
		w.Header().Set("Content-Length", strconv.Itoa(len(respBody)))
	}
	w.WriteHeader(resp.StatusCode)
	switch {
	case r.Method == http.MethodHead:
	case holds:
		holder.HoldAnswer(respBody, table)
	default:
		_, _ = w.Write(respBody)
	}
}

// bodyAllowed tells whether an answer with status may carry a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// Default timeouts of a whole backend call.
const (
	defaultReadTimeout  = 10 * time.Second
	defaultWriteTimeout = 60 * time.Second
)

// timeout bounds one call for op: reads fail fast; writes, and scan
// planning, which may take long on a large table, get longer.
func (b *Remote) timeout(op string) time.Duration {
	switch {
	case icerest.IsMutation(op), op == icerest.OpPlanTableScan, op == icerest.OpFetchScanTasks:
		return cmp.Or(b.cfg.WriteTimeout.D(), defaultWriteTimeout)
	}
	return cmp.Or(b.cfg.ReadTimeout.D(), defaultReadTimeout)
}

// outbound builds the backend request: path rewritten onto the backend's
// base URL, prefix and separator; allowed headers copied; the body the
// request holds (it is small, and SigV4 and retries need it whole).
func (b *Remote) outbound(r *http.Request, q icerest.Request, cc *CatalogConfig) (*http.Request, []byte, error) {
	u := *b.base
	u.RawPath = b.base.EscapedPath() + q.Route.Path(cc.Prefix(), cc.Separator())
	u.Path, _ = url.PathUnescape(u.RawPath)
	query, qerr := translateQuery(q.Query, cc.Separator())
	if qerr != nil {
		return nil, nil, qerr
	}
	u.RawQuery = query
	body := q.Body // nil for a GET or HEAD
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, icerest.Errorf(http.StatusBadRequest, icerest.BadRequest, "%v", err)
	}
	if body == nil {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	copyRequestHeaders(out.Header, r.Header)
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		if _, ok := cc.KeyLifetime(); ok {
			out.Header.Set("Idempotency-Key", b.forwardedKey(r.Context(), key))
		}
	}
	if b.cfg.Auth.Mode == AuthPassthrough {
		if a := r.Header.Get("Authorization"); a != "" {
			out.Header.Set("Authorization", a)
		}
	}
	return out, body, nil
}

// translateQuery re-encodes `parent` (a namespace) with the backend's
// separator; every other parameter passes as is. q is the request's
// parsed query, which other stages read too: it is not changed (a copy
// is, when there is a parent to translate).
func translateQuery(q url.Values, sepEscaped string) (string, error) {
	if p := q.Get("parent"); p != "" {
		sep, _ := url.PathUnescape(sepEscaped)
		levels, err := icerest.DecodeNamespace(p, sep)
		if err != nil {
			return "", err
		}
		q = maps.Clone(q)
		q["parent"] = []string{strings.Join(levels, sep)}
	}
	return q.Encode(), nil
}

// forwardedKey is the Idempotency-Key a backend that dedupes keys is
// sent: a UUID derived from the caller's principal, the catalog and the
// client's key. The backend sees every caller as lakegate's one
// credential, so the client's own key would let one principal be replayed
// another's answer; a retry of the same principal's key gets the same
// derived key, so both layers dedupe it.
func (b *Remote) forwardedKey(ctx context.Context, key string) string {
	sum, _ := hex.DecodeString(hashOf(caller.From(ctx).Principal, b.name, key)) // SHA-256, as replay keys are
	u, _ := uuid.FromBytes(sum[:16])
	u[6] = u[6]&0x0f | 0x70 // version 7, as the spec asks of keys
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// forwardedRequestHeaders are the client headers a backend may see.
// Everything else (cookies, the client's Authorization, hop-by-hop
// headers, an Idempotency-Key: see forwardedKey) stays at the gateway.
var forwardedRequestHeaders = []string{
	"Content-Type", "Accept", "User-Agent",
	"X-Iceberg-Access-Delegation", "If-None-Match", "If-Match",
	"Traceparent", "Tracestate", "X-Client-Version", "X-Client-Git-Commit",
}

func copyRequestHeaders(dst, src http.Header) {
	for _, k := range forwardedRequestHeaders {
		if v := src.Values(k); len(v) > 0 {
			dst[k] = v
		}
	}
}

// hopByHop headers belong to one connection and are never forwarded.
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, "Set-Cookie": true,
}

func copyResponseHeaders(dst, src http.Header) {
	named := map[string]bool{} // headers the Connection header makes hop-by-hop
	for _, v := range src.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			named[http.CanonicalHeaderKey(strings.TrimSpace(f))] = true
		}
	}
	for k, v := range src {
		if !hopByHop[k] && !named[k] {
			dst[k] = v
		}
	}
}

// roundTrip sends req through the breaker, retrying safe requests on
// connection errors, and reads the whole response. It is one backend call
// as an operator sees it: one span, one latency observation, and the
// backend's last error when it failed.
func (b *Remote) roundTrip(req *http.Request, op string, body []byte, mode readMode) (*http.Response, []byte, *pooledBody, error) {
	req, span := telemetry.StartRequest(req, telemetry.SpanBackend, func() []attribute.KeyValue {
		return []attribute.KeyValue{telemetry.AttrCatalog.String(b.name), telemetry.AttrOperation.String(op),
			telemetry.AttrBreaker.String(b.breaker.State())}
	})
	start := time.Now()
	resp, data, pooled, err := b.breakerCall(req, op, body, mode)
	status := 0
	if resp != nil {
		status = resp.StatusCode
		b.answered.Store(true)
	}
	why := ""
	if err != nil {
		why = err.Error() // net/http leaves passwords out of URLs in its errors
		span.RecordError(err)
	}
	// A call the open breaker failed fast never reached the backend: it
	// is neither a latency nor the backend's error.
	if open := (*breakerOpenError)(nil); !errors.As(err, &open) {
		telemetry.ObserveBackend(b.name, op, status, time.Since(start))
		b.noteFailure(op, status, why)
	}
	telemetry.From(req.Context()).SetBackend(status, why)
	telemetry.EndStatus(span, status)
	return resp, data, pooled, err
}

func (b *Remote) breakerCall(req *http.Request, op string, body []byte, mode readMode) (*http.Response, []byte, *pooledBody, error) {
	type result struct {
		resp   *http.Response
		body   []byte
		pooled *pooledBody
	}
	res, err := execute(b.breaker, func() (result, error) {
		resp, err := b.sendWithRetry(req, body)
		if err != nil {
			return result{}, b.blame(err)
		}
		defer resp.Body.Close()
		data, pooled, err := readBody(resp, mode)
		if err != nil {
			pooled.release()
			return result{}, b.blame(&responseCutError{err})
		}
		switch {
		case resp.StatusCode == http.StatusInternalServerError && b.cfg.Breaker.unhealthy(resp.StatusCode, op):
			return result{resp, data, pooled}, errBackend5xx // count_read_500: the operator's choice, not probed
		case b.cfg.Breaker.unhealthy(resp.StatusCode, op):
			return result{resp, data, pooled}, b.blame(errBackend5xx)
		case resp.StatusCode >= 500:
			return result{resp, data, pooled}, errNotCounted
		}
		return result{resp, data, pooled}, nil
	})
	var own *notCountedError
	if errors.As(err, &own) {
		err = own.err
	}
	if errors.Is(err, errBackend5xx) || errors.Is(err, errNotCounted) {
		return res.resp, res.body, res.pooled, nil // the answer still goes back
	}
	return res.resp, res.body, res.pooled, err
}

// blame decides whether a failed call counts against the backend's health
// in the breaker. One client must not be able to open the breaker for
// everyone with requests that crash or fail only themselves, so:
//   - a refused connection and a timeout count: the backend is not there,
//     or hangs (probing a hung backend would only lengthen the outage);
//   - a connection broken after the request was sent, or a 502/503/504
//     answer, counts only if a probe of /v1/config fails as well; if the
//     backend answers the probe, the failure was this request's own.
func (b *Remote) blame(err error) error {
	var auth *authError
	if isConnError(err) || isTimeout(err) || errors.Is(err, context.Canceled) || errors.As(err, &auth) {
		return err
	}
	if b.prober.healthy(b.Probe) {
		return &notCountedError{err}
	}
	return err
}

// noteFailure keeps a call's failure (no answer, why; or a 5xx) for the
// status page.
func (b *Remote) noteFailure(op string, status int, why string) {
	switch {
	case why != "":
	case status >= 500:
		why = fmt.Sprintf("answered %d %s", status, http.StatusText(status))
	default:
		return
	}
	b.lastErr.Store(&BackendError{At: time.Now().UTC(), Operation: op, Status: status, Message: why})
}

// sendWithRetry sends the request, re-authenticating once on 401 for
// reads, and retrying GET/HEAD on connection errors.
func (b *Remote) sendWithRetry(req *http.Request, body []byte) (*http.Response, error) {
	safe := req.Method == http.MethodGet || req.Method == http.MethodHead
	for attempt := 0; ; attempt++ {
		resp, err := b.send(req, body, false)
		if err == nil && resp.StatusCode == http.StatusUnauthorized && safe && b.auth.canRefresh() {
			resp.Body.Close()
			resp, err = b.send(req, body, true)
		}
		if err == nil || !safe || attempt == 2 || !isConnError(err) || req.Context().Err() != nil {
			return resp, err
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
}

func (b *Remote) send(req *http.Request, body []byte, refresh bool) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	if body == nil {
		out.Body = http.NoBody
	}
	telemetry.Inject(out.Context(), out.Header)
	if err := b.auth.authorize(out, body, refresh); err != nil {
		return nil, &authError{err}
	}
	return b.client.Do(traceSent(out))
}

var errBackend5xx = errors.New("backend answered 5xx")

// authError is a failure to get lakegate's own credentials for the
// backend (a token endpoint refusing them): the request was not sent.
type authError struct{ err error }

func (e *authError) Error() string { return e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// responseCutError marks a response whose body broke off: the request
// reached the backend, so a write's outcome is unknown.
type responseCutError struct{ err error }

func (e *responseCutError) Error() string { return "backend response cut off: " + e.err.Error() }
func (e *responseCutError) Unwrap() error { return e.err }

func isConnError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func snippet(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.TrimSpace(string(b))
}

// WriteError answers with the Iceberg error for a failure to reach the
// backend during op; a 503 tells the client when to retry (the breaker's
// remaining open time, else 1s).
func WriteError(w http.ResponseWriter, r *http.Request, err error, op string) {
	e := asRESTError(err, op)
	if e.Code == http.StatusServiceUnavailable {
		after := 1
		var open *breakerOpenError
		if errors.As(err, &open) {
			after = open.retryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(after))
	}
	icerest.WriteError(w, r, e)
}
