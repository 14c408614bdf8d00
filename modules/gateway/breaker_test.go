package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// restartable serves an embedded catalog on a fixed loopback address that
// can be stopped and started again.
type restartable struct {
	t    *testing.T
	addr string
	h    http.Handler
	srv  *http.Server
}

func (b *restartable) start() {
	l, err := net.Listen("tcp", b.addr)
	require.NoError(b.t, err)
	b.addr = l.Addr().String()
	b.srv = &http.Server{Handler: b.h}
	go func() { _ = b.srv.Serve(l) }()
}

func (b *restartable) stop() { _ = b.srv.Close() }

type outcome struct {
	status     int
	retryAfter string
	errType    string
	message    string
	took       time.Duration
}

func hit(url string) outcome {
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		return outcome{status: -1, took: time.Since(start)}
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return outcome{resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Type, body.Error.Message, time.Since(start)}
}

// A backend that goes away under load gets fast 503s with Retry-After
// once its breaker opens; when it comes back, traffic resumes without a
// gateway restart; another catalog is unaffected throughout.
func TestBreakerBackendDownAndBack(t *testing.T) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	flaky := &restartable{t: t, addr: "127.0.0.1:0", h: cat}
	flaky.start()
	t.Cleanup(flaky.stop)
	steady := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))

	base := gateway(t, map[string]any{"catalogs": []any{
		remote("flaky", "http://"+flaky.addr, map[string]any{
			"breaker": map[string]any{"failures": 3, "timeout": int64(time.Second)}}),
		remote("steady", steady.URL, nil),
	}})
	flakyURL, steadyURL := base+"/v1/flaky/namespaces", base+"/v1/steady/namespaces"
	require.Equal(t, http.StatusOK, hit(flakyURL).status)

	// the steady catalog is hammered for the whole test
	var steadyBad, steadyOK atomic.Int64
	stopSteady := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stopSteady:
				return
			default:
			}
			if hit(steadyURL).status == http.StatusOK {
				steadyOK.Add(1)
			} else {
				steadyBad.Add(1)
			}
		}
	}()

	flaky.stop()
	var open []outcome
	deadline := time.Now().Add(10 * time.Second)
	for len(open) < 50 && time.Now().Before(deadline) {
		o := hit(flakyURL)
		require.NotEqual(t, http.StatusOK, o.status, "the backend is down")
		require.Equal(t, http.StatusServiceUnavailable, o.status)
		require.Equal(t, "ServiceUnavailableException", o.errType)
		require.NotEmpty(t, o.retryAfter)
		if strings.Contains(o.message, "circuit breaker open") {
			open = append(open, o)
		}
	}
	require.Len(t, open, 50, "the breaker opens and answers 503 with Retry-After")
	took := make([]time.Duration, len(open))
	for i, o := range open {
		took[i] = o.took
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("breaker-open 503s, round trip through the gateway: p50 %v, p99 %v", took[len(took)/2], took[len(took)*99/100])

	flaky.start()
	recovered := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if hit(flakyURL).status == http.StatusOK {
			recovered = true
			break
		}
	}
	assert.True(t, recovered, "traffic resumes once the backend is back")

	close(stopSteady)
	wg.Wait()
	assert.Zero(t, steadyBad.Load(), "the other catalog never failed")
	assert.Positive(t, steadyOK.Load())
}
