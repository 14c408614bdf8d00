package gateway

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestRedactQuery(t *testing.T) {
	for raw, want := range map[string]struct {
		out    string
		values []string
	}{
		"maxResults=5&pageToken=abc": {"maxResults=5&pageToken=abc", nil},
		"":                           {"", nil},
		"access_token=t1":            {"access_token=REDACTED", []string{"t1"}},
		"a=1&TOKEN=t2&b":             {"a=1&TOKEN=REDACTED&b", []string{"t2"}},
		"X-Amz-Credential=AKIA%2F&X-Amz-Signature=ab&x=y": {"X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&x=y", []string{"AKIA%2F", "ab"}},
		"sv=2024&sp=r&se=2030&sig=s1":                     {"sv=2024&sp=r&se=2030&sig=REDACTED", []string{"s1"}},
		"access%5Ftoken=t3&client_secret":                 {"access%5Ftoken=REDACTED&client_secret=REDACTED", []string{"t3"}},
		"password=p&password=q":                           {"password=REDACTED&password=REDACTED", []string{"p", "q"}},
	} {
		out, values, ok := redactQuery(raw)
		assert.Equal(t, want.out, out, raw)
		assert.Equal(t, want.values, values, raw)
		assert.Equal(t, want.values != nil || out != raw, ok, raw)
	}
}

// A span Caddy's tracing handler started for a file URL carries the
// blanked path, and a name a placeholder made of the URI loses the token.
func TestHideInSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, span := tp.Tracer("caddy").Start(t.Context(), "GET /delta-sharing/files/tok123?sp=r",
		trace.WithAttributes(attribute.String("url.path", "/delta-sharing/files/tok123")))
	r := httptest.NewRequest("GET", "/delta-sharing/files/tok123?sp=r", nil).WithContext(ctx)
	hideInSpan(r, "/delta-sharing/files/REDACTED?sp=r", []string{"tok123"})
	span.End()
	ended := rec.Ended()
	assert.Len(t, ended, 1)
	assert.Equal(t, "GET /delta-sharing/files/REDACTED?sp=r", ended[0].Name())
	for _, kv := range ended[0].Attributes() {
		assert.NotContains(t, kv.Value.Emit(), "tok123", string(kv.Key))
	}
}

// A request without a credential in its URI (nearly every one) costs a
// scan of its query and no allocation.
func TestQueryWithoutCredentialsAllocatesNothing(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/lake/namespaces?pageToken=abc&pageSize=100&parent=a%1Fb", nil)
	x := &exchange{in: r}
	assert.Zero(t, testing.AllocsPerRun(100, func() { x.hideQueryCredentials(nil, r) }))
	assert.Nil(t, x.own)
}
