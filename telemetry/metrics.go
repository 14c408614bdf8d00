// Package telemetry is what lakegate tells an operator about the requests
// it serves: Prometheus metrics, one record per request for the access log,
// and trace spans per layer. It knows nothing of Caddy; the front doors
// register the metrics on Caddy's registry and put the record in the log.
package telemetry

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// durationBuckets span an L1 cache hit (well under a millisecond) to a
// slow backend commit.
var durationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// The collectors are made once per process and registered on each config's
// registry (Caddy makes a new one per config load), so counts run on
// across reloads instead of starting over.
var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "requests_total",
		Help: "Requests answered by lakegate's front doors, by catalog, API, operation and status code.",
	}, []string{"catalog", "api", "operation", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lakegate", Name: "request_duration_seconds",
		Help: "Time a front door took to answer a request (authentication, policy, cache, backend and translation included), " +
			"by catalog, API, operation and status code.",
		Buckets: durationBuckets,
	}, []string{"catalog", "api", "operation", "code"})
	backendDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lakegate", Name: "backend_request_duration_seconds",
		Help:    "Time for a backend catalog to answer one call (retries included), by catalog, operation and status code (0: no answer).",
		Buckets: durationBuckets,
	}, []string{"catalog", "operation", "code"})
	breakerState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "lakegate", Name: "breaker_state",
		Help: "State of a remote catalog's circuit breaker: 0 closed, 1 half-open, 2 open.",
	}, []string{"catalog"})
	breakerTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "breaker_transitions_total",
		Help: "Circuit breaker state changes, by catalog and the state entered.",
	}, []string{"catalog", "to"})
	cacheResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "cache_results_total",
		Help: "LoadTable cache results, by catalog and result (hit-l1, hit-l2, miss, revalidated, stale, bypass).",
	}, []string{"catalog", "result"})
	cacheNotModified = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "cache_not_modified_total",
		Help: "304 Not Modified answers the cache gave clients that held the current ETag.",
	}, []string{"catalog"})
	cacheInvalidations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "cache_invalidations_total",
		Help: "Cache invalidations (a table, namespace or catalog) caused by writes, by catalog.",
	}, []string{"catalog"})
	replays = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "replay_outcomes_total",
		Help: "Idempotency-Key outcomes, by catalog and outcome (executed, replayed, resolved-applied, resolved-rerun, key-reused, in-progress, unknown, store-unavailable, bad-key).",
	}, []string{"catalog", "outcome"})
	policyDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "policy_decisions_total",
		Help: "Policy decisions, by catalog, API, operation and result (allow, deny).",
	}, []string{"catalog", "api", "operation", "result"})
	policyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "lakegate", Name: "policy_decision_duration_seconds",
		Help:    "Time to decide one policy query, by API.",
		Buckets: []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .05},
	}, []string{"api"})
	tokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "tokens_issued_total",
		Help: "Access tokens lakegate's own issuer granted, by grant type.",
	}, []string{"grant_type"})
	sharingFiles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "sharing_files_total",
		Help: "Data files Delta Sharing queries answered with, by catalog and share.",
	}, []string{"catalog", "share"})
	sharingBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "sharing_bytes_total",
		Help: "Bytes of the data files Delta Sharing queries answered with, by catalog and share.",
	}, []string{"catalog", "share"})
	storageSigns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "storage_signs_total",
		Help: "S3 requests remote signing was asked for, by catalog, access (read, write, none when unreadable) and outcome (signed, denied, refused).",
	}, []string{"catalog", "access", "outcome"})
	storageVends = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lakegate", Name: "storage_vends_total",
		Help: "Storage credentials vended, by catalog, access (read, write, none when denied) and outcome (vended, reused, denied, refused, failed).",
	}, []string{"catalog", "access", "outcome"})
)

var collectors = []prometheus.Collector{
	requests, requestDuration, backendDuration, breakerState, breakerTransitions, cacheResults, cacheNotModified,
	cacheInvalidations, replays, policyDecisions, policyDuration, tokens, sharingFiles, sharingBytes, storageSigns, storageVends, buildInfo,
}

// Register puts lakegate's collectors on reg. Registering them again on
// the same registry is not an error.
func Register(reg prometheus.Registerer) error {
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			var dup prometheus.AlreadyRegisteredError
			if !errors.As(err, &dup) {
				return err
			}
		}
	}
	return nil
}

// CountSign counts one signRequest: catalog is a configured one, access
// "read", "write" or "none", outcome "signed", "denied" (the policy) or
// "refused" (outside the table, or not a request this signs).
func CountSign(catalog, access, outcome string) {
	storageSigns.WithLabelValues(catalog, access, outcome).Inc()
}

// CountVend counts one vending of storage credentials: catalog is a
// configured one, access "read", "write" or "none" (denied), outcome
// "vended" (from STS), "reused" (vended earlier for the same principal,
// table and access), "denied" (the policy), "refused" (locations no
// session policy can scope) or "failed" (STS).
func CountVend(catalog, access, outcome string) {
	storageVends.WithLabelValues(catalog, access, outcome).Inc()
}

// ObserveRequest counts one answered request and records how long the
// front door took to answer it. catalog is "" when the client named none
// the gateway serves, op "" for a path that is no operation: a client
// cannot grow the label set.
func ObserveRequest(catalog, api, op string, code int, d time.Duration) {
	k := requestKey{catalog, api, op, code}
	requestSeries.get(k).Inc()
	requestDurationSeries.get(k).Observe(d.Seconds())
}

// ObserveBackend records one backend call; code 0 means no answer.
func ObserveBackend(catalog, op string, code int, d time.Duration) {
	backendSeries.get(backendKey{catalog, op, code}).Observe(d.Seconds())
}

// Breaker states as the breaker_state gauge gives them.
var breakerValues = map[string]float64{"closed": 0, "half-open": 1, "open": 2}

// SetBreaker records a breaker's state (closed, half-open, open); moved
// says it changed, rather than being set at start.
func SetBreaker(catalog, state string, moved bool) {
	breakerState.WithLabelValues(catalog).Set(breakerValues[state])
	if moved {
		breakerTransitions.WithLabelValues(catalog, state).Inc()
	}
}

// CountCache counts one LoadTable cache result.
func CountCache(catalog, result string) { cacheSeries.get(pair{catalog, result}).Inc() }

// CountNotModified counts a 304 the cache answered.
func CountNotModified(catalog string) { cacheNotModified.WithLabelValues(catalog).Inc() }

// CountInvalidation counts one invalidation a write caused.
func CountInvalidation(catalog string) { cacheInvalidations.WithLabelValues(catalog).Inc() }

// CountReplay counts one Idempotency-Key outcome.
func CountReplay(catalog, outcome string) { replays.WithLabelValues(catalog, outcome).Inc() }

// ObservePolicy records one decision and how long it took.
func ObservePolicy(catalog, api, op string, allow bool, d time.Duration) {
	result := "deny"
	if allow {
		result = "allow"
	}
	policyDecisions.WithLabelValues(catalog, api, op, result).Inc()
	policyDuration.WithLabelValues(api).Observe(d.Seconds())
}

// CountToken counts one token issued.
func CountToken(grantType string) { tokens.WithLabelValues(grantType).Inc() }

// CountSharing counts the files (and their bytes) one Delta Sharing
// answer listed.
func CountSharing(catalog, share string, files int, bytes int64) {
	sharingFiles.WithLabelValues(catalog, share).Add(float64(files))
	sharingBytes.WithLabelValues(catalog, share).Add(float64(bytes))
}

// codeLabels are the status codes' label strings, made once.
var codeLabels = func() (m [600]string) {
	for i := range m {
		m[i] = strconv.Itoa(i)
	}
	return m
}()

func codeLabel(code int) string {
	if code >= 0 && code < len(codeLabels) {
		return codeLabels[code]
	}
	return strconv.Itoa(code)
}
