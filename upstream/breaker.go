package upstream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// breaker wraps a gobreaker circuit breaker: it trips on backend ill
// health (connection errors, timeouts, 502/503/504; 500s to reads when
// configured), never on answers to a client's own request (4xx, a 500 to
// a write), and while open fails calls at once, without touching the
// backend.
type breaker struct {
	timeout  time.Duration
	openedAt atomic.Int64 // unix nanos of the last transition to open
	cbs      *gobreaker.CircuitBreaker[any]
}

// breakerOpenError is returned while the breaker is open.
type breakerOpenError struct{ retryAfter int }

func (e *breakerOpenError) Error() string {
	return fmt.Sprintf("circuit breaker open; retry after %ds", e.retryAfter)
}

func newBreaker(name string, cfg Breaker, log *zap.Logger) *breaker {
	failures := cfg.Failures
	if failures == 0 {
		failures = 5
	}
	b := &breaker{timeout: cfg.Timeout.D()}
	if b.timeout <= 0 {
		b.timeout = 10 * time.Second
	}
	b.cbs = gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1, // one probe while half-open
		Timeout:     b.timeout,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		// A client that went away says nothing about the backend.
		// Neither does an answer that is the backend's own verdict on one
		// request (errNotCounted).
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled) || errors.Is(err, errNotCounted)
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.openedAt.Store(time.Now().UnixNano())
			}
			telemetry.SetBreaker(name, to.String(), true)
			// An operator sees the backend go and come back; half-open is
			// the breaker's own probing and stays quiet.
			switch to {
			case gobreaker.StateOpen:
				log.Warn("backend circuit breaker opened: requests fail fast until a probe succeeds",
					zap.String("from", from.String()), zap.Duration("retry_after", b.timeout))
			case gobreaker.StateClosed:
				log.Warn("backend circuit breaker closed: the backend answers again", zap.String("from", from.String()))
			}
		},
	})
	telemetry.SetBreaker(name, b.cbs.State().String(), false)
	return b
}

// errNotCounted marks a result the breaker counts neither way.
var errNotCounted = errors.New("not counted by the breaker")

// notCountedError is a failure the breaker does not count, because a
// probe showed the backend healthy: it was the request's own.
type notCountedError struct{ err error }

func (e *notCountedError) Error() string        { return e.err.Error() }
func (e *notCountedError) Unwrap() error        { return e.err }
func (e *notCountedError) Is(target error) bool { return target == errNotCounted }

// unhealthy tells whether a backend's answer to op counts as a failure.
func (cfg Breaker) unhealthy(status int, op string) bool {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusInternalServerError:
		return cfg.CountRead500 && !icerest.IsMutation(op)
	}
	return false
}

// execute runs fn through the breaker. fn's error marks a failure.
func execute[T any](b *breaker, fn func() (T, error)) (T, error) {
	var res T
	_, err := b.cbs.Execute(func() (any, error) {
		var err error
		res, err = fn()
		return nil, err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return res, &breakerOpenError{retryAfter: b.retryAfter()}
	}
	return res, err
}

// retryAfter is the whole seconds until the breaker lets a probe through.
func (b *breaker) retryAfter() int {
	left := b.timeout - time.Since(time.Unix(0, b.openedAt.Load()))
	return max(1, int(math.Ceil(left.Seconds())))
}

// State is the breaker's state name (closed, half-open, open).
func (b *breaker) State() string { return b.cbs.State().String() }
