package telemetry

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The status page shows each catalog's last minutes without a Prometheus
// server: a sampler reads the process's own collectors every
// HistoryInterval and keeps the differences of the last HistoryPoints
// samples, per catalog.
const (
	HistoryInterval = 10 * time.Second
	HistoryPoints   = 60 // ten minutes
)

// Point is one interval of one catalog. A ratio or latency is nil when
// the interval had nothing to measure it on.
type Point struct {
	At time.Time `json:"at"`
	// RequestsPerSecond are the front doors' answers for the catalog.
	RequestsPerSecond float64 `json:"requests_per_second"`
	// ErrorRatio is the share of those answers that were 5xx.
	ErrorRatio *float64 `json:"error_ratio"`
	// BackendP50 and BackendP99 are backend call latencies in seconds,
	// estimated from the histogram's buckets as Prometheus'
	// histogram_quantile does.
	BackendP50 *float64 `json:"backend_p50_seconds"`
	BackendP99 *float64 `json:"backend_p99_seconds"`
	// CacheHitRatio is (L1 + L2 hits + revalidated) over the cacheable
	// LoadTable lookups.
	CacheHitRatio *float64 `json:"cache_hit_ratio"`
}

// totals are one catalog's cumulative counts at one sample.
type totals struct {
	requests, errors float64
	buckets          []bucket // cumulative, by upper bound
	hits, lookups    float64
}

type bucket struct{ upper, count float64 }

// History samples the collectors and keeps each catalog's recent points.
type History struct {
	mu     sync.Mutex
	last   map[string]totals
	lastAt time.Time
	points map[string][]Point
}

var history = &History{}

// startHistory makes the process's sampler run, once.
var startHistory = sync.OnceFunc(func() {
	go func() {
		for now := range time.Tick(HistoryInterval) {
			SampleHistory(now)
		}
	}()
})

// Recent is catalog's points, oldest first, sampled since the first call
// to Recent or StartHistory; empty until two samples were taken.
func Recent(catalog string) []Point {
	startHistory()
	return history.Recent(catalog)
}

// StartHistory starts the process's sampler (idempotent), so points exist
// by the time someone opens the status page.
func StartHistory() { startHistory() }

// SampleHistory takes the process's sample at now (the sampler's tick;
// tests call it to skip the wait).
func SampleHistory(now time.Time) { history.Sample(now) }

// Recent is catalog's points, oldest first.
func (h *History) Recent(catalog string) []Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Point(nil), h.points[catalog]...)
}

// Sample reads the collectors at now and appends each catalog's point for
// the interval since the previous sample.
func (h *History) Sample(now time.Time) {
	cur := readTotals()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !now.After(h.lastAt) {
		return // a clock step back (or a test's sample ahead of the clock): no interval
	}
	if h.last != nil {
		secs := now.Sub(h.lastAt).Seconds()
		if h.points == nil {
			h.points = map[string][]Point{}
		}
		for cat, t := range cur {
			p := point(now, secs, h.last[cat], t)
			pts := append(h.points[cat], p)
			if len(pts) > HistoryPoints {
				pts = pts[len(pts)-HistoryPoints:]
			}
			h.points[cat] = pts
		}
	}
	h.last, h.lastAt = cur, now
}

// point is the interval between two samples of one catalog.
func point(at time.Time, secs float64, prev, cur totals) Point {
	p := Point{At: at.UTC()}
	if secs <= 0 {
		return p
	}
	n := cur.requests - prev.requests
	p.RequestsPerSecond = n / secs
	p.ErrorRatio = ratio(cur.errors-prev.errors, n)
	p.CacheHitRatio = ratio(cur.hits-prev.hits, cur.lookups-prev.lookups)
	delta := make([]bucket, len(cur.buckets))
	for i, b := range cur.buckets {
		delta[i] = bucket{b.upper, b.count - countAt(prev.buckets, b.upper)}
	}
	p.BackendP50, p.BackendP99 = quantile(0.5, delta), quantile(0.99, delta)
	return p
}

func ratio(part, whole float64) *float64 {
	if whole <= 0 {
		return nil
	}
	r := part / whole
	return &r
}

func countAt(bs []bucket, upper float64) float64 {
	for _, b := range bs {
		if b.upper == upper {
			return b.count
		}
	}
	return 0
}

// quantile estimates the q-quantile of cumulative buckets by linear
// interpolation inside the bucket it falls in, as histogram_quantile
// does; the +Inf bucket answers with the highest finite bound.
func quantile(q float64, bs []bucket) *float64 {
	if len(bs) == 0 || bs[len(bs)-1].count <= 0 {
		return nil
	}
	rank := q * bs[len(bs)-1].count
	i := sort.Search(len(bs), func(i int) bool { return bs[i].count >= rank })
	if i >= len(bs) {
		i = len(bs) - 1
	}
	if math.IsInf(bs[i].upper, 1) {
		v := bs[max(i-1, 0)].upper
		return &v
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = bs[i-1].upper, bs[i-1].count
	}
	in := bs[i].count - below
	v := bs[i].upper
	if in > 0 {
		v = lower + (bs[i].upper-lower)*(rank-below)/in
	}
	return &v
}

// readTotals sums the collectors' series per catalog.
func readTotals() map[string]totals {
	out := map[string]totals{}
	each(requests, func(l map[string]string, m *dto.Metric) {
		t := out[l["catalog"]]
		v := m.GetCounter().GetValue()
		t.requests += v
		if c := l["code"]; len(c) == 3 && c[0] == '5' {
			t.errors += v
		}
		out[l["catalog"]] = t
	})
	each(backendDuration, func(l map[string]string, m *dto.Metric) {
		t := out[l["catalog"]]
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			t.buckets = addBucket(t.buckets, b.GetUpperBound(), float64(b.GetCumulativeCount()))
		}
		t.buckets = addBucket(t.buckets, math.Inf(1), float64(h.GetSampleCount()))
		out[l["catalog"]] = t
	})
	each(cacheResults, func(l map[string]string, m *dto.Metric) {
		t := out[l["catalog"]]
		v := m.GetCounter().GetValue()
		switch l["result"] {
		case "hit-l1", "hit-l2", "revalidated":
			t.hits += v
			t.lookups += v
		case "miss", "stale":
			t.lookups += v
		}
		out[l["catalog"]] = t
	})
	delete(out, "") // requests naming no catalog the gateway serves
	return out
}

// addBucket adds count to the bucket of bound upper, keeping the buckets
// sorted (series of one catalog with different codes share the bounds).
func addBucket(bs []bucket, upper, count float64) []bucket {
	for i := range bs {
		if bs[i].upper == upper {
			bs[i].count += count
			return bs
		}
	}
	bs = append(bs, bucket{upper, count})
	sort.Slice(bs, func(i, j int) bool { return bs[i].upper < bs[j].upper })
	return bs
}

// each calls fn with every series of c and its labels.
func each(c prometheus.Collector, fn func(map[string]string, *dto.Metric)) {
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil {
			continue
		}
		labels := make(map[string]string, len(d.GetLabel()))
		for _, lp := range d.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		fn(labels, &d)
	}
}
