package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// series remembers the child of a vector for each label tuple seen, so
// the per-request path finds its counter with one map read: a vector's
// WithLabelValues hashes the values and allocates their slice on every
// call. Label values are bounded (catalogs, operations, status codes), so
// the map is too.
type series[K comparable, M any] struct {
	mu   sync.RWMutex
	m    map[K]M
	make func(K) M
}

func (s *series[K, M]) get(k K) M {
	s.mu.RLock()
	m, ok := s.m[k]
	s.mu.RUnlock()
	if ok {
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok = s.m[k]; !ok {
		if s.m == nil {
			s.m = map[K]M{}
		}
		m = s.make(k)
		s.m[k] = m
	}
	return m
}

type requestKey struct {
	catalog, api, op string
	code             int
}

type backendKey struct {
	catalog, op string
	code        int
}

type pair struct{ a, b string }

var (
	requestSeries = &series[requestKey, prometheus.Counter]{make: func(k requestKey) prometheus.Counter {
		return requests.WithLabelValues(k.catalog, k.api, k.op, codeLabel(k.code))
	}}
	requestDurationSeries = &series[requestKey, prometheus.Observer]{make: func(k requestKey) prometheus.Observer {
		return requestDuration.WithLabelValues(k.catalog, k.api, k.op, codeLabel(k.code))
	}}
	backendSeries = &series[backendKey, prometheus.Observer]{make: func(k backendKey) prometheus.Observer {
		return backendDuration.WithLabelValues(k.catalog, k.op, codeLabel(k.code))
	}}
	cacheSeries = &series[pair, prometheus.Counter]{make: func(k pair) prometheus.Counter {
		return cacheResults.WithLabelValues(k.a, k.b)
	}}
)
