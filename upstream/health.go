package upstream

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Health is what an operator is shown of one catalog's backend.
type Health struct {
	Kind string `json:"kind"` // embedded or remote
	// URL is a remote backend's base URL, without user info or query.
	URL string `json:"url,omitempty"`
	// Breaker is the circuit breaker's state: closed, half-open or open
	// (an embedded backend has none and is always closed).
	Breaker   string        `json:"breaker"`
	LastError *BackendError `json:"last_error,omitempty"`
	// Answered: the backend has answered a call since the gateway started.
	// A closed breaker that has seen no call says nothing about it.
	Answered bool `json:"-"`
}

// BackendError is a backend call that got no answer, or a 5xx.
type BackendError struct {
	At        time.Time `json:"at"`
	Operation string    `json:"operation"`
	Status    int       `json:"status,omitempty"` // 0: no answer
	Message   string    `json:"message"`
}

// Health reports the backend's breaker and its last failure.
func (b *Remote) Health() Health {
	u := *b.base
	u.User, u.RawQuery = nil, ""
	return Health{Kind: "remote", URL: u.String(), Breaker: b.breaker.State(), LastError: b.lastErr.Load(),
		Answered: b.answered.Load()}
}

// Probe asks the backend for its /v1/config, past the breaker and the
// config cache: any answer below 500 means it is reachable (a 401 is the
// backend answering).
func (b *Remote) Probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.configURL(), nil)
	if err != nil {
		return err
	}
	resp, err := b.send(req, nil, false)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("/v1/config answered %d", resp.StatusCode)
	}
	return nil
}

// Health reports an embedded backend: in process, no breaker.
func (l *Local) Health() Health { return Health{Kind: "embedded", Breaker: "closed", Answered: true} }

// Probe asks the embedded catalog for its /v1/config.
func (l *Local) Probe(ctx context.Context) error {
	_, err := l.Config(ctx)
	return err
}

// HealthReporter is a backend that can say how it is.
type HealthReporter interface {
	Health() Health
	Probe(ctx context.Context) error
}

var (
	_ HealthReporter = (*Remote)(nil)
	_ HealthReporter = (*Local)(nil)
)

// Probes that decide whether a failure counts in the breaker: one at a
// time, its answer shared by the failures of the next probeFresh.
const (
	probeTimeout = 2 * time.Second
	probeFresh   = time.Second
)

// prober runs health probes for the breaker, coalesced: failures that
// come together wait for one probe rather than each sending their own.
type prober struct {
	mu   sync.Mutex
	at   time.Time // when the last probe ended
	ok   bool
	busy chan struct{} // closed when the probe in flight ends; nil if none
}

// healthy reports whether probe succeeds now (or did within probeFresh).
func (p *prober) healthy(probe func(context.Context) error) bool {
	p.mu.Lock()
	if time.Since(p.at) < probeFresh {
		ok := p.ok
		p.mu.Unlock()
		return ok
	}
	if wait := p.busy; wait != nil {
		p.mu.Unlock()
		<-wait
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.ok
	}
	done := make(chan struct{})
	p.busy = done
	p.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	err := probe(ctx)
	cancel()

	p.mu.Lock()
	p.at, p.ok, p.busy = time.Now(), err == nil, nil
	p.mu.Unlock()
	close(done)
	return err == nil
}
