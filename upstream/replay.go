package upstream

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// ReplayConfig tunes Idempotency-Key handling for a catalog.
type ReplayConfig struct {
	// Lifetime is how long a finished request's response is replayed
	// (default 30m; advertised as idempotency-key-lifetime).
	Lifetime duration.Duration `json:"lifetime,omitempty"`
	// Lease is how long an in-flight claim lives without renewal; a
	// crashed replica's claim frees itself after it (default 30s).
	Lease duration.Duration `json:"lease,omitempty"`
	// Wait bounds how long a duplicate waits for the first request's
	// outcome before answering 503 (default 10s).
	Wait duration.Duration `json:"wait,omitempty"`
	// MaxRecordBytes bounds a stored response body, after compression
	// (default 1 MiB). A larger one is not kept: retries of its key are
	// told it was applied (500 CommitStateUnknownException), never run.
	MaxRecordBytes int `json:"max_record_bytes,omitempty"`
	// MaxErrorRecords bounds how many refusals (4xx) one replica keeps
	// per Lifetime (default 10,000); past it, and for a refusal body over
	// 4 KiB, the claim is released instead: a refused request was not
	// applied, so a retry may run it again.
	MaxErrorRecords int `json:"max_error_records,omitempty"`
}

func (c ReplayConfig) withDefaults() ReplayConfig {
	if c.Lifetime <= 0 {
		c.Lifetime = duration.Duration(30 * time.Minute)
	}
	if c.Lease <= 0 {
		c.Lease = duration.Duration(30 * time.Second)
	}
	if c.Wait <= 0 {
		c.Wait = duration.Duration(10 * time.Second)
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = defaultMaxRecordBytes
	}
	if c.MaxErrorRecords <= 0 {
		c.MaxErrorRecords = defaultMaxErrorRecords
	}
	return c
}

// ReplayedHeader marks a response replayed from an earlier request.
const ReplayedHeader = "Idempotent-Replayed"

// Replayer makes keyed mutations apply once: the first request with a key
// claims it, runs, and stores its final response; retries get that
// response back. State lives in a replay.Store (Redis across replicas).
type Replayer struct {
	store   replay.Store
	cfg     ReplayConfig
	catalog string
	log     *zap.Logger

	// backend is the catalog's backend, reached past the cache, to
	// resolve outcomes left unknown (set by NewPipeline).
	backend Backend
	errors  errorBudget

	// ReplayCounters are its counts: its own from NewReplayer, or a set
	// the caller keeps across the replayers it makes (a gateway's config
	// reloads) and sets here before the replayer serves.
	*ReplayCounters
}

// ReplayCounters are a replayer's cumulative counts.
type ReplayCounters struct {
	Replays atomic.Int64 // responses served from the store
	NonV7   atomic.Int64 // keys that are UUIDs but not version 7
}

// NewReplayer guards catalog's mutations with store.
func NewReplayer(catalog string, store replay.Store, cfg ReplayConfig, log *zap.Logger) *Replayer {
	if log == nil {
		log = zap.NewNop()
	}
	cfg = cfg.withDefaults()
	return &Replayer{store: store, cfg: cfg, catalog: catalog, log: log,
		errors:         errorBudget{max: cfg.MaxErrorRecords, window: cfg.Lifetime.D()},
		ReplayCounters: new(ReplayCounters)}
}

// Lifetime is the advertised idempotency-key-lifetime.
func (g *Replayer) Lifetime() time.Duration { return g.cfg.Lifetime.D() }

// guarded are the operations that take an Idempotency-Key.
func guarded(op string) bool {
	switch op {
	case icerest.OpPlanTableScan, icerest.OpFetchScanTasks, icerest.OpCancelPlanning:
		return true
	}
	return icerest.IsMutation(op)
}

// Serve runs next once per (principal, catalog, operation, key).
func (g *Replayer) Serve(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, next Handler) {
	key := r.Header.Get("Idempotency-Key")
	rt := q.Route
	if key == "" || !guarded(rt.Operation) {
		next(w, r, q)
		return
	}
	if e := g.checkKey(key); e != nil {
		g.outcome(r, "bad-key")
		icerest.WriteError(w, r, e)
		return
	}
	r, span := telemetry.StartRequest(r, "lakegate.replay", g.spanAttrs)
	storeKey := hashOf(principal, g.catalog, rt.Operation, key)
	fp := hashOf(r.Method, rt.Path("", "%1F"), r.URL.RawQuery, string(q.Body))
	g.run(w, r, q, storeKey, fp, next)
	if rec := telemetry.From(r.Context()); rec != nil && span.IsRecording() {
		span.SetAttributes(telemetry.AttrReplay.String(rec.Replay))
	}
	span.End()
}

func (g *Replayer) spanAttrs() []attribute.KeyValue {
	return []attribute.KeyValue{telemetry.AttrCatalog.String(g.catalog)}
}

// outcome counts an Idempotency-Key outcome and notes it in the request's
// record.
func (g *Replayer) outcome(r *http.Request, outcome string) {
	telemetry.CountReplay(g.catalog, outcome)
	telemetry.From(r.Context()).SetReplay(outcome)
}

func (g *Replayer) run(w http.ResponseWriter, r *http.Request, q icerest.Request, key, fp string, next Handler) {
	ctx := r.Context()
	deadline := time.Now().Add(g.cfg.Wait.D())
	for {
		owner := randomToken()
		rec, claimed, err := g.store.Claim(ctx, key, replay.Record{Fingerprint: fp, Owner: owner, Created: time.Now()}, g.cfg.Lease.D())
		if err != nil {
			g.storeDown(w, r, err)
			return
		}
		if claimed {
			g.execute(w, r.WithContext(context.WithoutCancel(ctx)), q, key, owner, fp, next)
			return
		}
		if rec.Fingerprint != fp {
			g.outcome(r, "key-reused")
			icerest.WriteError(w, r, icerest.Errorf(http.StatusUnprocessableEntity, icerest.UnprocessableEntity,
				"Idempotency-Key was already used for a different request"))
			return
		}
		if rec.Final {
			g.replay(w, r, rec)
			return
		}
		// In flight elsewhere: wait for its outcome, or for its claim to go.
		rec, state, err := g.await(ctx, key, rec, deadline)
		switch {
		case err != nil:
			g.storeDown(w, r, err)
			return
		case state == awaitFinal:
			g.replay(w, r, rec)
			return
		case state == awaitUnknown:
			if g.resolve(w, r, q, key, next) {
				return
			}
			continue // another request took it over, or it expired: look again
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			g.outcome(r, "in-progress")
			w.Header().Set("Retry-After", "1")
			icerest.WriteError(w, r, icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
				"a request with this Idempotency-Key is still in progress; retry later"))
			return
		}
	}
}

// What await found.
const (
	awaitGone    = iota // the claim went away unsent: try to claim the key
	awaitFinal          // the outcome is stored
	awaitUnknown        // sent, and its holder is gone: the outcome is unknown
	awaitTimeout        // still in flight at the deadline
)

// await polls the key's record, starting from rec, until it is final, the
// claim is gone, a sent claim's holder stops renewing it, or the deadline
// passes.
func (g *Replayer) await(ctx context.Context, key string, rec replay.Record, deadline time.Time) (replay.Record, int, error) {
	for {
		switch {
		case rec.Final:
			return rec, awaitFinal, nil
		case rec.Sent && time.Now().UnixMilli() > rec.LeaseUntil:
			return rec, awaitUnknown, nil
		case !time.Now().Before(deadline) || ctx.Err() != nil:
			return rec, awaitTimeout, nil
		}
		time.Sleep(20 * time.Millisecond)
		var found bool
		var err error
		if rec, found, err = g.store.Get(ctx, key); err != nil || !found {
			return replay.Record{}, awaitGone, err
		}
	}
}

// outcomeUnknown answers a retry of a request that may have reached the
// backend and whose outcome neither the store nor the catalog tells
// (resolve): running it again could apply it twice, so the client must
// check the table instead.
func outcomeUnknown(w http.ResponseWriter, r *http.Request) {
	icerest.WriteError(w, r, icerest.Errorf(http.StatusInternalServerError, icerest.CommitStateUnknown,
		"a request with this Idempotency-Key may have reached the backend, and whether it was applied is unknown: "+
			"it is not run again; check the table, and use a new key for a new attempt"))
}

// execute runs the claimed request, detached from the client (a client
// that gives up must not leave the outcome unrecorded), renewing the lease
// while it runs, then settles the claim. Before the request can reach the
// backend its claim is marked sent: from then on the key is never simply
// run again.
func (g *Replayer) execute(w http.ResponseWriter, r *http.Request, q icerest.Request, key, owner, fp string, next Handler) {
	ctx, sent := withDelivery(context.WithoutCancel(r.Context()))
	r = r.WithContext(ctx)
	hb := g.heartbeat(key, owner)
	// Deferred: if next panics, the outcome is unknown, so the claim is
	// neither finalized nor released; its lease lapses and a retry
	// resolves it.
	defer hb.done()
	if err := g.store.MarkSent(ctx, key, owner, g.cfg.Lease.D(), g.cfg.Lifetime.D()); err != nil {
		if !errors.Is(err, replay.ErrClaimLost) {
			_ = g.store.Release(ctx, key, owner)
		}
		g.storeDown(w, r, err)
		return
	}
	g.outcome(r, "executed")
	rw := &recorder{StatusWriter: StatusWriter{ResponseWriter: w}}
	next(rw, r, q)
	g.settle(ctx, key, owner, fp, rw, sent, hb)
}

// settle ends a claim by what its request's answer proves:
//   - a success or a deterministic refusal is stored and replayed;
//   - a request lakegate knows never reached the backend, or that the
//     backend refused unapplied (401/403/408/419/429, 501), is released,
//     so a retry runs it;
//   - anything else (a 5xx, a timeout, a connection broken after the
//     request was handed to it) may have been applied: the claim stays,
//     "outcome unknown", and a retry resolves it (resolve) instead of
//     running it blindly. A rule written for servers, "5xx is not
//     finalized", would let a retry apply twice through a gateway.
func (g *Replayer) settle(ctx context.Context, key, owner, fp string, rw *recorder, sent *delivery, hb *heartbeat) {
	status := rw.Status()
	switch {
	case finalizable(status) && status >= 400 && !g.errors.keep(rw.body.Len()):
		g.release(ctx, key, owner, hb)
	case finalizable(status):
		g.finalize(ctx, key, owner, g.finalRecord(fp, rw), hb)
	case !sent.maySent() || refusedUnapplied(status):
		g.release(ctx, key, owner, hb)
	default:
		g.giveUp(ctx, key, owner, hb)
	}
}

func (g *Replayer) release(ctx context.Context, key, owner string, hb *heartbeat) {
	hb.stop()
	if err := g.store.Release(ctx, key, owner); err != nil {
		// The claim is marked sent: if it cannot be released it lapses
		// into "outcome unknown", which a retry resolves.
		g.log.Warn("releasing an idempotency claim", zap.Error(err))
	}
}

// giveUp leaves a sent claim whose outcome is unknown to a retry: its
// lease ends now, and the record keeps the key's lifetime.
func (g *Replayer) giveUp(ctx context.Context, key, owner string, hb *heartbeat) {
	hb.stop()
	_ = g.store.Extend(ctx, key, owner, 0) // if this fails, the lease lapses by itself
}

// finalize stores the outcome; if the store fails it keeps trying in the
// background, the lease renewed, so that a retry meanwhile waits rather
// than finding the outcome unknown.
func (g *Replayer) finalize(ctx context.Context, key, owner string, rec replay.Record, hb *heartbeat) {
	if err := g.store.Finalize(ctx, key, owner, rec, g.cfg.Lifetime.D()); err == nil {
		hb.stop()
		return
	}
	hb.handedOff.Store(true)
	go func() {
		defer hb.stop()
		g.finalizeLater(ctx, key, owner, rec)
	}()
}

// finalizeLater retries storing an outcome, with backoff, for about one
// lease. If the store is still failing then, the sent claim lapses: a
// retry resolves it (resolve), never a blind re-run.
func (g *Replayer) finalizeLater(ctx context.Context, key, owner string, rec replay.Record) {
	deadline := time.Now().Add(g.cfg.Lease.D())
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		if time.Now().Add(wait).After(deadline) {
			g.log.Error("could not store an idempotent outcome: a retry of this key must resolve it from the catalog",
				zap.String("catalog", g.catalog))
			return
		}
		time.Sleep(wait)
		if err := g.store.Finalize(ctx, key, owner, rec, g.cfg.Lifetime.D()); err == nil {
			return
		}
	}
}

// heartbeat renews a claim's lease while its request runs.
type heartbeat struct {
	quit, exited chan struct{}
	once         sync.Once
	// handedOff: a goroutine storing the outcome later owns it now.
	handedOff atomic.Bool
}

func (g *Replayer) heartbeat(key, owner string) *heartbeat {
	hb := &heartbeat{quit: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(hb.exited)
		t := time.NewTicker(g.cfg.Lease.D() / 3)
		defer t.Stop()
		for {
			select {
			case <-hb.quit:
				return
			case <-t.C:
				_ = g.store.Extend(context.Background(), key, owner, g.cfg.Lease.D())
			}
		}
	}()
	return hb
}

// stop ends the renewals and waits until none is in flight, so that a
// renewal cannot land after the lease was ended (giveUp).
func (hb *heartbeat) stop() {
	hb.once.Do(func() { close(hb.quit) })
	<-hb.exited
}

// done ends the request's part: it stops the renewals unless they were
// handed off.
func (hb *heartbeat) done() {
	if !hb.handedOff.Load() {
		hb.stop()
	}
}

// storeDown refuses a keyed mutation when its key cannot be guarded: a
// retry is safe, a double apply is not.
func (g *Replayer) storeDown(w http.ResponseWriter, r *http.Request, err error) {
	g.outcome(r, "store-unavailable")
	g.log.Warn("idempotency store unavailable", zap.String("catalog", g.catalog), zap.Error(err))
	w.Header().Set("Retry-After", "1")
	icerest.WriteError(w, r, icerest.Errorf(http.StatusServiceUnavailable, icerest.ServiceUnavailable,
		"the idempotency store is unavailable; the request was not run"))
}

// checkKey accepts a UUID in its 36-character string form.
func (g *Replayer) checkKey(key string) error {
	u, err := uuid.Parse(key)
	if len(key) != 36 || err != nil {
		return icerest.Errorf(http.StatusBadRequest, icerest.BadRequest,
			"Idempotency-Key must be a UUID in its 36-character string form, got %q", truncate(key, 64))
	}
	if u.Version() != 7 {
		g.NonV7.Add(1)
	}
	return nil
}

// finalizable: success and deterministic terminal 4xx are stored; 5xx and
// refusals a retry may get past (auth, throttling) are not.
func finalizable(status int) bool {
	return status < 500 && !refusedUnapplied(status)
}

// refusedUnapplied are answers by which the backend (or lakegate) says it
// did not apply the request and a retry may succeed: authentication,
// authorization, throttling, and an operation it does not implement.
func refusedUnapplied(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, 419, http.StatusTooManyRequests,
		http.StatusNotImplemented:
		return true
	}
	return false
}

func keptHeaders(h http.Header) http.Header {
	out := http.Header{}
	for _, k := range []string{"Content-Type", "ETag"} {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// recorder passes a response through while keeping a copy.
type recorder struct {
	StatusWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.StatusWriter.Write(b)
}

func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
