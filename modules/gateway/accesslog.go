package gateway

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/certmagic"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/lakegate/lakegate/telemetry"
)

// A request's URI can be a credential: a Delta Sharing file URL
// ({prefix}/files/<sealed token>) downloads the file with no other
// authentication, and a client may put a token in the query
// (?access_token=, a presigned URL's X-Amz-Signature). Caddy's access
// log writes the URI as the client sent it, from a copy of the request
// it takes before any handler runs, so no handler can change what that
// line says, and its `query` log filter needs each operator to configure
// it. So for such a request lakegate tells Caddy to skip its line (the
// log_skip variable, as Caddy's `log_skip` directive does) and writes the
// line itself, with the same loggers, level, message and fields, the
// credential blanked to REDACTED. Requests without one (nearly all) are
// left to Caddy: they cost one scan of the query.

// hiddenValue replaces a credential in a logged URI, as Caddy's log
// replaces an Authorization header's value.
const hiddenValue = "REDACTED"

// credentialParams are query parameters whose value is a credential,
// lower case: OAuth tokens (RFC 6750 §2.3), passwords and keys, and the
// signatures of presigned URLs (S3 SigV4 and V2, GCS, Azure SAS's sig).
// Azure SAS's se, sp and sv are not secrets (the URL is nothing without
// sig), so lakegate's own file URLs keep their sp=r.
var credentialParams = []string{
	"token", "access_token", "id_token", "refresh_token", "client_secret", "password", "secret",
	"api_key", "apikey", "signature", "sig", "x-amz-signature", "x-amz-credential",
	"x-amz-security-token", "x-goog-signature", "x-goog-credential",
}

func isCredentialParam(name string) bool {
	if strings.IndexByte(name, '%') >= 0 || strings.IndexByte(name, '+') >= 0 {
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
	}
	for _, p := range credentialParams {
		if strings.EqualFold(name, p) {
			return true
		}
	}
	return false
}

// redactQuery is rawQuery with each credential parameter's value
// blanked, and those values (their raw form, as the URI has them); ok
// reports whether it had such a parameter. Parameters are split as
// net/url splits them, on '&'.
func redactQuery(rawQuery string) (out string, values []string, ok bool) {
	rest := rawQuery
	for rest != "" && !ok {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		name, _, _ := strings.Cut(pair, "=")
		ok = isCredentialParam(name)
	}
	if !ok {
		return rawQuery, nil, false
	}
	var b strings.Builder
	for i, pair := range strings.Split(rawQuery, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, value, hasValue := strings.Cut(pair, "=")
		switch {
		case isCredentialParam(name):
			b.WriteString(name + "=" + hiddenValue)
			if value != "" {
				values = append(values, value)
			}
		case hasValue:
			b.WriteString(pair)
		default:
			b.WriteString(name)
		}
	}
	return b.String(), values, true
}

// hideQueryCredentials hides r's URI in the access log when its query
// holds a credential.
func (x *exchange) hideQueryCredentials(a *App, r *http.Request) {
	uri := loggedURI(r)
	i := strings.IndexByte(uri, '?')
	if i < 0 {
		return
	}
	if q, values, ok := redactQuery(uri[i+1:]); ok {
		x.hideURI(a, r, uri[:i+1]+q, values...)
	}
}

// loggedURI is the URI Caddy's access log shows for r: the one the
// client sent, before any rewrite.
func loggedURI(r *http.Request) string {
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		return orig.RequestURI
	}
	return r.RequestURI
}

// ownLine is the access log line lakegate writes itself for a request
// whose URI holds a credential.
type ownLine struct {
	srv   *caddyhttp.Server
	base  *zap.Logger // Caddy's http.log.access
	r     *http.Request
	rec   caddyhttp.ResponseRecorder
	body  *countingBody
	uri   string
	start time.Time
}

// hideURI makes the access log show uri (the logged URI with its
// credential blanked) for the request r of the exchange: lakegate writes
// the line itself when the exchange ends. The trace's span gets the
// blanked path too.
func (x *exchange) hideURI(a *App, r *http.Request, uri string, secrets ...string) {
	hideInSpan(x.in, uri, secrets)
	if x.own != nil {
		x.own.uri = uri
		return
	}
	srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || srv.Logs == nil || a == nil || a.accessLog == nil {
		return // no access log
	}
	if skip, _ := caddyhttp.GetVar(r.Context(), caddyhttp.LogSkipVar).(bool); skip {
		return // log_skip: no line at all
	}
	caddyhttp.SetVar(r.Context(), caddyhttp.LogSkipVar, true)
	rec := caddyhttp.NewResponseRecorder(x.ResponseWriter, nil, nil)
	x.ResponseWriter = rec
	x.own = &ownLine{srv: srv, base: a.accessLog, r: x.in, rec: rec, uri: uri, start: x.start}
	if r.Body != nil && r.Body != http.NoBody {
		x.own.body = &countingBody{ReadCloser: r.Body}
		r.Body = x.own.body
	}
}

// hideInSpan blanks secrets in the server span Caddy's `tracing` handler
// started: its url.path attribute (OpenTelemetry's HTTP semantic
// conventions) and its name, should a placeholder have put the URI there.
func hideInSpan(r *http.Request, uri string, secrets []string) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return
	}
	path, _, _ := strings.Cut(uri, "?")
	span.SetAttributes(attribute.String("url.path", path))
	if named, ok := span.(interface{ Name() string }); ok {
		name := named.Name()
		for _, s := range secrets {
			name = strings.ReplaceAll(name, s, hiddenValue)
		}
		if name != named.Name() {
			span.SetName(name)
		}
	}
}

// write writes the line Caddy would have (caddyhttp.Server's logRequest),
// with the blanked URI. The duration runs from the front door's start.
func (l *ownLine) write(record *telemetry.Record) {
	ctx := l.r.Context()
	if !shouldLog(l.srv, l.r) {
		return
	}
	status := l.rec.Status()
	level := zapcore.InfoLevel
	if status >= 500 {
		level = zapcore.ErrorLevel
	}
	if name, ok := caddyhttp.GetVar(ctx, caddyhttp.LogLevelVar).(string); ok {
		if lv, err := zapcore.ParseLevel(name); err == nil && lv >= zapcore.DebugLevel && lv <= zapcore.ErrorLevel {
			level = lv
		}
	}
	var fields []zap.Field
	for _, logger := range accessLoggers(l.srv, l.base, l.r) {
		c := logger.Check(level, "handled request")
		if c == nil {
			continue
		}
		if fields == nil {
			fields = l.fields(record, status)
		}
		c.Write(fields...)
	}
}

func (l *ownLine) fields(record *telemetry.Record, status int) []zap.Field {
	ctx := l.r.Context()
	req := l.r.Clone(ctx)
	req.RequestURI = l.uri
	if orig, ok := ctx.Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		req.Method, req.RemoteAddr = orig.Method, orig.RemoteAddr
	}
	creds := l.srv.Logs.ShouldLogCredentials
	userID := ""
	if repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		userID, _ = repl.GetString("http.auth.user.id")
	}
	read := 0
	if l.body != nil {
		read = l.body.n
	}
	fields := []zap.Field{
		zap.Object("request", caddyhttp.LoggableHTTPRequest{Request: req, ShouldLogCredentials: creds}),
		zap.Int("bytes_read", read),
		zap.String("user_id", userID),
		zap.Duration("duration", time.Since(l.start)),
		zap.Int("size", l.rec.Size()),
		zap.Int("status", status),
		zap.Object("resp_headers", caddyhttp.LoggableHTTPHeader{Header: l.rec.Header(), ShouldLogCredentials: creds}),
	}
	// What Caddy's `tracing` handler adds to the line it would write.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		fields = append(fields, zap.String("traceID", sc.TraceID().String()), zap.String("spanID", sc.SpanID().String()))
	}
	return append(fields, zap.Object("lakegate", record))
}

// shouldLog is caddyhttp.Server's shouldLogRequest: whether the server
// logs requests to r's host.
func shouldLog(srv *caddyhttp.Server, r *http.Request) bool {
	host := hostOnly(r.Host)
	for name := range srv.Logs.LoggerNames {
		if certmagic.MatchWildcard(host, name) {
			return true
		}
	}
	for _, skip := range srv.Logs.SkipHosts {
		if certmagic.MatchWildcard(host, skip) {
			return false
		}
	}
	return !srv.Logs.SkipUnmappedHosts
}

// accessLoggers are the loggers Caddy writes r's line to
// (ServerLogConfig's wrapLogger): those the access_logger_names variable
// names (Caddy's `log_name`), else those the server maps r's host to.
func accessLoggers(srv *caddyhttp.Server, base *zap.Logger, r *http.Request) []*zap.Logger {
	var names []string
	if vs, ok := caddyhttp.GetVar(r.Context(), caddyhttp.AccessLoggerNameVarKey).([]any); ok {
		for _, v := range vs {
			if s, ok := v.(string); ok {
				names = append(names, s)
			}
		}
	} else {
		names = loggerNamesFor(srv.Logs, strings.ToLower(hostOnly(r.Host)))
	}
	out := make([]*zap.Logger, 0, len(names))
	for _, n := range names {
		if n == "" {
			out = append(out, base)
		} else {
			out = append(out, base.Named(n))
		}
	}
	return out
}

// loggerNamesFor is ServerLogConfig's getLoggerHosts: the host's names,
// else those of the first wildcard that matches, else the default.
func loggerNamesFor(cfg *caddyhttp.ServerLogConfig, host string) []string {
	if names, ok := cfg.LoggerNames[host]; ok {
		return names
	}
	labels := strings.Split(host, ".")
	for i := range labels {
		if labels[i] == "" {
			continue
		}
		labels[i] = "*"
		if names, ok := cfg.LoggerNames[strings.Join(labels, ".")]; ok {
			return names
		}
	}
	return []string{cfg.DefaultLoggerName}
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// countingBody counts the request body's bytes read (bytes_read).
type countingBody struct {
	io.ReadCloser
	n int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += n
	return n, err
}

// hideFileToken hides the sealed token of a Delta Sharing file URL
// ({prefix}/files/<token>) in the access log and the trace: the URL is
// the download's only credential.
func (x *exchange) hideFileToken(a *App, r *http.Request) {
	uri := loggedURI(r)
	if x.own != nil {
		uri = x.own.uri
	}
	path, query, hasQuery := strings.Cut(uri, "?")
	token := path
	if i := strings.LastIndex(path, "/"+sharingFiles+"/"); i >= 0 {
		cut := i + len(sharingFiles) + 2
		path, token = path[:cut]+hiddenValue, path[cut:]
	} else {
		path = hiddenValue // rewritten from a path that does not say: all of it
	}
	if hasQuery {
		path += "?" + query
	}
	x.hideURI(a, r, path, token)
}

// sharingFiles is the path segment of Delta Sharing file URLs.
const sharingFiles = "files"
