package telemetry

import (
	"context"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap/zapcore"
)

func TestRegisterTwice(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, Register(reg))
	require.NoError(t, Register(reg), "a second provision on the same registry")
	require.NoError(t, Register(prometheus.NewPedanticRegistry()), "the next config's registry")
}

func TestDecision(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []bool
		refused bool
		want    string
	}{
		{"no policy asked", nil, false, ""},
		{"allowed", []bool{true}, false, "allow"},
		{"denied", []bool{false}, false, "deny"},
		{"a listing lost items", []bool{true, false, true}, false, "partial"},
		{"one table of a commit denied", []bool{true, false}, true, "deny"},
	} {
		var r Record
		for _, a := range tc.answers {
			r.CountDecision(a)
		}
		if tc.refused {
			r.Refused()
		}
		assert.Equal(t, tc.want, r.Decision(), tc.name)
	}
}

func TestRecordLeavesOutWhatWasNotReached(t *testing.T) {
	enc := zapcore.NewMapObjectEncoder()
	r := &Record{API: "iceberg", Catalog: "lake", Operation: "loadTable"}
	r.SetCache("hit-l1")
	require.NoError(t, r.MarshalLogObject(enc))
	assert.Equal(t, map[string]any{"api": "iceberg", "catalog": "lake", "operation": "loadTable", "cache": "hit-l1"}, enc.Fields)

	// A unified catalog's request names its member and the namespace there.
	enc = zapcore.NewMapObjectEncoder()
	r = &Record{API: "iceberg", Catalog: "all", Operation: "loadTable"}
	r.SetMember("first", []string{"a", "x"})
	require.NoError(t, r.MarshalLogObject(enc))
	assert.Equal(t, "first", enc.Fields["member"])
	assert.Equal(t, []any{"a", "x"}, enc.Fields["member_namespace"])

	var none *Record // a request no front door made
	none.SetMember("first", nil)
	none.SetCache("miss")
	none.SetBackend(200, "")
	none.CountDecision(true)
	none.Refused()
	assert.Nil(t, From(context.Background()))
}

func TestUntracedPathAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	req, err := http.NewRequest(http.MethodGet, "http://x/", nil)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		c, span := Start(ctx, "lakegate.cache", func() []attribute.KeyValue {
			return []attribute.KeyValue{AttrCatalog.String("lake")}
		})
		span.End()
		r, span := StartRequest(req, "lakegate.replay", nil)
		EndStatus(span, 200)
		Inject(c, req.Header)
		_ = r
	})
	assert.Zero(t, allocs)
	assert.Empty(t, req.Header.Get("traceparent"), "nothing traced, nothing sent")
}

func TestSpansUnderTheContextsProvider(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, root := tp.Tracer("caddy").Start(context.Background(), "server")
	ctx, span := Start(ctx, SpanBackend, func() []attribute.KeyValue {
		return []attribute.KeyValue{AttrCatalog.String("lake")}
	})
	h := http.Header{}
	Inject(ctx, h)
	EndStatus(span, http.StatusServiceUnavailable)
	root.End()

	ended := rec.Ended()
	require.Len(t, ended, 2)
	call := ended[0]
	assert.Equal(t, SpanBackend, call.Name())
	assert.Equal(t, root.SpanContext().SpanID(), call.Parent().SpanID())
	assert.Equal(t, "Error", call.Status().Code.String())
	assert.Equal(t, []attribute.KeyValue{AttrCatalog.String("lake"), attribute.Int("http.response.status_code", 503)},
		call.Attributes())
	assert.Equal(t, "00-"+call.SpanContext().TraceID().String()+"-"+call.SpanContext().SpanID().String()+"-01",
		h.Get("traceparent"))
}

func TestPresentDropsEmptyStrings(t *testing.T) {
	got := Present(AttrCatalog.String("lake"), AttrOperation.String(""), attribute.Int("n", 0), AttrCache.String(""))
	assert.Equal(t, []attribute.KeyValue{AttrCatalog.String("lake"), attribute.Int("n", 0)}, got)
	assert.Empty(t, Present(AttrCatalog.String("")))
}
