package telemetry

import (
	"context"

	"go.uber.org/zap/zapcore"
)

// Record is what one request did, filled in by the layers it passes
// (front door, policy, replay, cache, backend) and written to the access
// log when the request ends. It names things and never holds a secret:
// no token, no header, no body.
//
// One request's layers run on its goroutine, one after the other; a
// Record is not for concurrent use.
type Record struct {
	API       string // iceberg, delta, sharing
	Catalog   string // "" until the request names a catalog the gateway serves
	Operation string
	Principal string
	// Client is the OAuth client a token request named, issued a token or
	// refused one (never its secret).
	Client string
	// allowed and denied count the policy's answers; refused marks a
	// request a door turned away on a denial (see Decision).
	allowed, denied int
	refused         bool
	// Cache is the LoadTable cache's result (hit-l1, hit-l2, miss,
	// revalidated, stale, bypass) or "invalidated" for a write.
	Cache string
	// Replay is the Idempotency-Key outcome (see CountReplay).
	Replay string
	// BackendStatus is the backend's status code for the last call the
	// request made (0: none made, or no answer).
	BackendStatus int
	// BackendError says why the last backend call got no answer.
	BackendError string
	// Member is the member catalog a unified catalog sent the request to,
	// and MemberNamespace the namespace there (the request's own names are
	// the unified ones).
	Member          string
	MemberNamespace []string
	// Table and StorageAccess name what a signRequest signed (or was
	// refused): the table (namespace levels and name joined by ".") and
	// read or write. Never the signature, the URI's query or a key.
	Table         string
	StorageAccess string
}

type recordKey struct{}

// WithRecord returns ctx carrying rec.
func WithRecord(ctx context.Context, rec *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

// From returns the request's record, or nil; every setter below takes a
// nil record (a request that no front door made, as in tests).
func From(ctx context.Context) *Record {
	rec, _ := ctx.Value(recordKey{}).(*Record)
	return rec
}

// SetCatalog notes the catalog the request addresses: a name the gateway
// serves, never one only the client made up (labels stay bounded).
func (r *Record) SetCatalog(catalog string) {
	if r != nil {
		r.Catalog = catalog
	}
}

// SetMember notes the member catalog, and the namespace in it, that a
// unified catalog sent the request to.
func (r *Record) SetMember(catalog string, namespace []string) {
	if r != nil {
		r.Member, r.MemberNamespace = catalog, namespace
	}
}

// SetOperation notes the operation.
func (r *Record) SetOperation(op string) {
	if r != nil {
		r.Operation = op
	}
}

// CountDecision notes one policy answer (a listing asks once per item).
func (r *Record) CountDecision(allow bool) {
	switch {
	case r == nil:
	case allow:
		r.allowed++
	default:
		r.denied++
	}
}

// Refused notes that a door turned the request away on a denial.
func (r *Record) Refused() {
	if r != nil {
		r.refused = true
	}
}

// Decision is the policy's verdict on the request: deny when it was
// refused or every answer was no, partial when a listing lost some items,
// allow, or "" when no policy was asked.
func (r *Record) Decision() string {
	switch {
	case r.refused || (r.denied > 0 && r.allowed == 0):
		return "deny"
	case r.denied > 0:
		return "partial"
	case r.allowed > 0:
		return "allow"
	}
	return ""
}

// SetCache notes a cache result.
func (r *Record) SetCache(result string) {
	if r != nil {
		r.Cache = result
	}
}

// SetReplay notes an Idempotency-Key outcome.
func (r *Record) SetReplay(outcome string) {
	if r != nil {
		r.Replay = outcome
	}
}

// SetBackend notes a backend call's status (0 and why, without an answer).
func (r *Record) SetBackend(status int, why string) {
	if r != nil {
		r.BackendStatus, r.BackendError = status, why
	}
}

// maxClientID bounds the client id a token request may put in the log.
const maxClientID = 128

// SetClient notes the OAuth client a token request named, cut to
// maxClientID bytes (it is the caller's text, not yet anything we know).
func (r *Record) SetClient(id string) {
	if r != nil {
		if len(id) > maxClientID {
			id = id[:maxClientID]
		}
		r.Client = id
	}
}

// MarshalLogObject writes the record as the access log's `lakegate`
// object; fields a request did not reach are left out.
func (r *Record) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for _, f := range [...]struct{ k, v string }{
		{"api", r.API}, {"catalog", r.Catalog}, {"operation", r.Operation}, {"principal", r.Principal}, {"client_id", r.Client},
		{"decision", r.Decision()}, {"cache", r.Cache}, {"replay", r.Replay}, {"backend_error", r.BackendError},
		{"member", r.Member}, {"table", r.Table}, {"storage_access", r.StorageAccess},
	} {
		if f.v != "" {
			enc.AddString(f.k, f.v)
		}
	}
	if len(r.MemberNamespace) > 0 {
		_ = enc.AddArray("member_namespace", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
			for _, level := range r.MemberNamespace {
				a.AppendString(level)
			}
			return nil
		}))
	}
	if r.BackendStatus != 0 {
		enc.AddInt("backend_status", r.BackendStatus)
	}
	return nil
}
