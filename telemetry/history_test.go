package telemetry

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sample's point is the interval's difference: rate, 5xx share, backend
// quantiles from the histogram's buckets and the cache hit ratio; an
// interval with nothing to measure has no ratio or latency.
func TestHistoryPoints(t *testing.T) {
	const cat = "history-test"
	h := &History{}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ObserveRequest(cat, "iceberg", "loadTable", 200, time.Millisecond) // before the first sample: not counted
	h.Sample(t0)
	assert.Empty(t, h.Recent(cat), "one sample is no interval")

	for range 18 {
		ObserveRequest(cat, "iceberg", "loadTable", 200, time.Millisecond)
	}
	ObserveRequest(cat, "iceberg", "updateTable", 502, time.Second)
	ObserveRequest(cat, "delta", "loadTable", 404, time.Millisecond)
	for range 98 {
		ObserveBackend(cat, "loadTable", 200, 3*time.Millisecond) // in (2.5ms, 5ms]
	}
	ObserveBackend(cat, "updateTable", 502, 7*time.Second) // in (5s, 10s]
	ObserveBackend(cat, "updateTable", 0, 40*time.Second)  // past every bound
	for _, r := range []string{"hit-l1", "hit-l1", "hit-l2", "revalidated", "miss", "miss", "miss", "stale", "bypass"} {
		CountCache(cat, r)
	}
	h.Sample(t0.Add(10 * time.Second))

	pts := h.Recent(cat)
	require.Len(t, pts, 1)
	p := pts[0]
	assert.Equal(t, t0.Add(10*time.Second), p.At)
	assert.InDelta(t, 2.0, p.RequestsPerSecond, 1e-9, "20 answers in 10 s")
	require.NotNil(t, p.ErrorRatio)
	assert.InDelta(t, 0.05, *p.ErrorRatio, 1e-9, "one 5xx in 20; a 404 is no error")
	require.NotNil(t, p.BackendP50)
	assert.Greater(t, *p.BackendP50, 0.0025)
	assert.LessOrEqual(t, *p.BackendP50, 0.005)
	require.NotNil(t, p.BackendP99)
	assert.Greater(t, *p.BackendP99, 5.0, "the 99th of 100 calls is the 7 s one")
	assert.LessOrEqual(t, *p.BackendP99, 10.0)
	require.NotNil(t, p.CacheHitRatio)
	assert.InDelta(t, 0.5, *p.CacheHitRatio, 1e-9, "4 of 8 cacheable lookups; bypass is not one")

	h.Sample(t0.Add(20 * time.Second))
	pts = h.Recent(cat)
	require.Len(t, pts, 2)
	assert.Zero(t, pts[1].RequestsPerSecond)
	assert.Nil(t, pts[1].ErrorRatio)
	assert.Nil(t, pts[1].BackendP50)
	assert.Nil(t, pts[1].CacheHitRatio)

	h.Sample(t0.Add(15 * time.Second))
	assert.Len(t, h.Recent(cat), 2, "a sample before the last is no interval")

	for i := range HistoryPoints + 5 {
		h.Sample(t0.Add(time.Duration(30+10*i) * time.Second))
	}
	assert.Len(t, h.Recent(cat), HistoryPoints, "the oldest points go")
}

// The +Inf bucket answers with the highest finite bound, as
// histogram_quantile does.
func TestQuantileBeyondTheLastBound(t *testing.T) {
	v := quantile(0.5, []bucket{{1, 0}, {2, 0}, {posInf, 4}})
	require.NotNil(t, v)
	assert.Equal(t, 2.0, *v)
	assert.Nil(t, quantile(0.5, []bucket{{1, 0}, {posInf, 0}}))
}

var posInf = math.Inf(1)
