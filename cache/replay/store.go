// Package replay keeps Idempotency-Key state: which keys are claimed by a
// request in flight, and the final response of each finished one, so a
// retried write applies once, across gateway replicas. Memory is the
// in-process default; Redis shares the state between replicas.
package replay

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Record is the state of one key.
type Record struct {
	// Fingerprint identifies the request that claimed the key (method,
	// path, body hash); a different request with the same key is refused.
	Fingerprint string `json:"fp"`
	// Owner is a random token of the request holding the claim; empty
	// once the record is final.
	Owner string `json:"owner,omitempty"`
	// Sent reports a claimed request that may have reached the backend: its
	// record lives for the key's whole lifetime from then on, so the key is
	// never claimed (and the request never run) again.
	Sent bool `json:"sent,omitempty"`
	// LeaseUntil (unix ms) is when a sent claim's holder stops renewing it:
	// past it, the holder is gone and the outcome is unknown.
	LeaseUntil int64 `json:"lease_until,omitempty"`
	// Final reports a finished request whose response is stored below.
	Final  bool        `json:"final,omitempty"`
	Status int         `json:"status,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
	// Encoding is "gzip" for a compressed Body, "" for a plain one.
	Encoding string `json:"enc,omitempty"`
	// Unkept is the size of a response too large to keep: the request
	// was applied, and Body is empty.
	Unkept  int       `json:"unkept,omitempty"`
	Created time.Time `json:"created"`
}

// Lapsed reports a sent claim whose holder is gone: its outcome is
// unknown, and TakeOver may hand it to a request that resolves it.
func (r Record) Lapsed(now time.Time) bool {
	return r.Sent && !r.Final && now.UnixMilli() > r.LeaseUntil
}

// ErrClaimLost is MarkSent's answer when the claim is no longer the
// caller's (its lease ran out and another request took it).
var ErrClaimLost = errors.New("idempotency claim lost")

// ErrUnavailable wraps failures of the store itself: a keyed mutation
// cannot be guarded, so it must not run.
var ErrUnavailable = errors.New("replay store unavailable")

// Store holds records by key. Implementations are safe for concurrent use
// and atomic per key.
type Store interface {
	// Claim stores rec under key if the key is free, with a lease (the
	// record expires after lease unless finalized). It returns
	// (rec, true) when claimed, else the current record and false.
	Claim(ctx context.Context, key string, rec Record, lease time.Duration) (Record, bool, error)
	// Get returns the key's record, or false when there is none.
	Get(ctx context.Context, key string) (Record, bool, error)
	// Extend renews the lease of the claim held by owner: its expiry, or a
	// sent claim's LeaseUntil (its record keeps its lifetime).
	Extend(ctx context.Context, key, owner string, lease time.Duration) error
	// MarkSent marks the claim held by owner as sent, with its lease, and
	// keeps its record for lifetime. ErrClaimLost when owner no longer holds
	// it: the request must not run.
	MarkSent(ctx context.Context, key, owner string, lease, lifetime time.Duration) error
	// Finalize replaces the claim held by owner with the final record,
	// kept for ttl.
	Finalize(ctx context.Context, key, owner string, rec Record, ttl time.Duration) error
	// Release drops the claim held by owner, so the key may be retried.
	Release(ctx context.Context, key, owner string) error
	// TakeOver hands a sent claim whose holder is gone (its lease passed:
	// it gave up or died, and the outcome is unknown) to owner, with a new
	// lease; the record keeps its lifetime, fingerprint and creation time.
	// Of several callers at once, one wins: it returns (rec, true). Else it
	// returns the current record and false (not found: the zero Record).
	TakeOver(ctx context.Context, key, owner string, lease time.Duration) (Record, bool, error)
	Close() error
}
