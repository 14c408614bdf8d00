// Package caller carries who a request is made for through the context:
// one value, set by a front door after authentication, read where a call
// has no other way to say it: the in-process pipeline transport the Delta
// doors' translated calls go through (the principal, for cache scoping and
// replay ownership) and a passthrough backend's /v1/config fetch (the
// client's own Authorization).
package caller

import "context"

// Caller is the request's caller.
type Caller struct {
	// Principal is the id lakegate authenticated ("anonymous" when none).
	Principal string
	// Authorization is the client's Authorization header as sent. Only a
	// backend in passthrough mode forwards it; "" for callers whose
	// credentials must never leave lakegate (Delta Sharing recipients).
	Authorization string
}

type key struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// Present reports whether ctx carries a caller.
func Present(ctx context.Context) bool {
	_, ok := ctx.Value(key{}).(Caller)
	return ok
}

// From is the caller ctx carries; its Principal is "anonymous" when unset.
func From(ctx context.Context) Caller {
	c, _ := ctx.Value(key{}).(Caller)
	if c.Principal == "" {
		c.Principal = "anonymous"
	}
	return c
}
