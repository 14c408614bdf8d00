package upstream

import (
	"context"
	"fmt"
	"net/http"
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
	return Health{Kind: "remote", URL: u.String(), Breaker: b.breaker.State(), LastError: b.lastErr.Load()}
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
func (l *Local) Health() Health { return Health{Kind: "embedded", Breaker: "closed"} }

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
