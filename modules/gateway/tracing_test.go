package gateway_test

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: what a collector would get.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// trace is the spans of one trace ID, by span ID.
func (o *otlpReceiver) trace(traceID string) map[string]*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, s := range o.spans {
		if hex.EncodeToString(s.TraceId) == traceID {
			out[hex.EncodeToString(s.SpanId)] = s
		}
	}
	return out
}

// traceparents records the traceparent of each request a backend gets.
type traceparents struct {
	mu   sync.Mutex
	seen map[string]string // "METHOD path" -> traceparent
	next http.Handler
}

func (b *traceparents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.seen[r.Method+" "+r.URL.Path] = r.Header.Get("traceparent")
	b.mu.Unlock()
	b.next.ServeHTTP(w, r)
}

func (b *traceparents) of(key string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[key]
}

// spanNamed finds the one span of name whose parent is parent.
func spanNamed(t *testing.T, spans map[string]*tracepb.Span, name string, parent *tracepb.Span) *tracepb.Span {
	t.Helper()
	for _, s := range spans {
		if s.Name == name && string(s.ParentSpanId) == string(parent.SpanId) {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name+"<-"+hex.EncodeToString(s.ParentSpanId))
	}
	require.Failf(t, "span missing", "no %s under %s (%s); spans: %v", name, parent.Name, hex.EncodeToString(parent.SpanId), names)
	return nil
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if v := kv.Value.GetStringValue(); v != "" {
				return v
			}
			if kv.Value.GetBoolValue() {
				return "true"
			}
		}
	}
	return ""
}

// With Caddy's `tracing` handler in front, every layer a request passes
// has its own span under the server's (front door, policy, replay, cache,
// backend call), taken from the provider Caddy put in the context and
// exported with Caddy's exporter; the backend gets a traceparent that
// makes its own work part of the same trace.
func TestTracingSpanPerLayer(t *testing.T) {
	collector := &otlpReceiver{}
	collectorURL := newLoopbackServer(t, collector)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collectorURL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")

	cfg := embeddedtest.Config(t, embedded.SQLite)
	cat, err := embedded.Open(t.Context(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	seen := &traceparents{seen: map[string]string{}, next: cat}
	backend := httptest.NewServer(seen)
	t.Cleanup(backend.Close)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.rego"), []byte(telemetryPolicy), 0o600))
	name := uniqueName("traced")
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{
		"catalogs": []any{map[string]any{"name": name, "remote": map[string]any{"url": backend.URL},
			"cache": map[string]any{"max_age": "1m"}, "idempotency": map[string]any{}}},
		"policy": map[string]any{"dir": dir, "package": "lakegate.telemetry_test", "reload_interval": "-1s"},
	}, map[string]any{"handler": "tracing", "span": "gateway"}, map[string]any{"handler": "lakegate_delta"},
		map[string]any{"handler": "lakegate_iceberg"}))
	p := base + "/v1/" + name
	seedTables(t, p, "ns", "t")

	traced := func(method, url, body string, hdr ...string) string {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		traceID := strings.ReplaceAll(uuid.NewString(), "-", "")
		req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01") // the client's trace
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Less(t, resp.StatusCode, 300, "%s %s", method, url)
		return traceID
	}
	// server span, its child span of the named layer, and so on down.
	chain := func(traceID string, names ...string) []*tracepb.Span {
		var spans map[string]*tracepb.Span
		require.Eventually(t, func() bool {
			spans = collector.trace(traceID)
			return len(spans) >= len(names)+1
		}, 10*time.Second, 20*time.Millisecond, "spans of trace %s", traceID)
		var server *tracepb.Span
		for _, s := range spans {
			if s.Kind == tracepb.Span_SPAN_KIND_SERVER {
				server = s
			}
		}
		require.NotNil(t, server, "Caddy's server span")
		out := []*tracepb.Span{server}
		for _, n := range names {
			parent := out[len(out)-1]
			if n == "lakegate.policy" { // a sibling of the layers below the door
				spanNamed(t, spans, n, parent)
				continue
			}
			out = append(out, spanNamed(t, spans, n, parent))
		}
		return out
	}

	loadID := traced(http.MethodGet, p+"/namespaces/ns/tables/t", "")
	load := chain(loadID, "lakegate.iceberg", "lakegate.policy", "lakegate.cache", "lakegate.backend")
	door, cacheSpan, backendCall := load[1], load[2], load[3]
	assert.Equal(t, name, attr(door, "lakegate.catalog"))
	assert.Equal(t, "loadTable", attr(door, "lakegate.operation"))
	assert.Equal(t, "miss", attr(cacheSpan, "lakegate.cache"))
	assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, backendCall.Kind)
	assert.Equal(t, "closed", attr(backendCall, "lakegate.breaker"))
	assert.Equal(t, "00-"+loadID+"-"+hex.EncodeToString(backendCall.SpanId)+"-01",
		seen.of("GET /v1/"+cat.Name()+"/namespaces/ns/tables/t"), "the backend continues the backend call's span")

	commitID := traced(http.MethodPost, p+"/namespaces/ns/tables/t",
		`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`,
		"Idempotency-Key", uuid.Must(uuid.NewV7()).String())
	commit := chain(commitID, "lakegate.iceberg", "lakegate.replay", "lakegate.cache", "lakegate.backend")
	assert.Equal(t, "executed", attr(commit[2], "lakegate.replay"))
	assert.Equal(t, "invalidated", attr(commit[3], "lakegate.cache"))

	// The Delta door: its translator's calls run through the same pipeline.
	// (tableExists answers for Delta tables only, so it loads the table.)
	tables := base + "/api/2.1/unity-catalog/delta/v1/catalogs/" + name + "/schemas/ns/tables"
	code, created := call(t, http.MethodPost, tables, json.RawMessage(`{"name":"dt","location":"file://`+filepath.Join(cfg.Warehouse, "dt")+`","table-type":"EXTERNAL",`+
		`"columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]},"protocol":{"min-reader-version":1,"min-writer-version":2},"properties":{},"last-commit-timestamp-ms":1}`))
	require.Equal(t, http.StatusOK, code, "%v", created)
	// The create read the (absent) log through the log sync stage, which
	// left dt in the cache; a Delta update evicts it, so tableExists's
	// load goes down to the backend.
	code, out := updateTable(t, tables+"/dt", meta(created)["table-uuid"].(string),
		map[string]any{"action": "set-properties", "updates": map[string]string{"k": "v"}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	existsID := traced(http.MethodHead, tables+"/dt", "")
	exists := chain(existsID, "lakegate.delta", "lakegate.policy", "lakegate.translate", "lakegate.cache", "lakegate.backend")
	assert.Equal(t, "tableExists", attr(exists[1], "lakegate.operation"))
	assert.Equal(t, "delta", attr(exists[1], "lakegate.api"))
	assert.Equal(t, "loadTable", attr(exists[4], "lakegate.operation"), "the Iceberg operation it became")
}
