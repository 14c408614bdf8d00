package policies

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/topdown"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/duration"
)

// Config selects the policy directory and the package to query.
type Config struct {
	// Dir is the policy directory: every *.rego file in it (not
	// *_test.rego) is loaded (default "policies").
	Dir string `json:"dir,omitempty"`
	// Package is the Rego package to query, e.g. "lakegate.roles":
	// data.<Package>.decision and data.<Package>.visible (required).
	Package string `json:"package"`
	// Timeout bounds one evaluation (default 1s).
	Timeout duration.Duration `json:"timeout,omitempty"`
	// ReloadInterval is how often Dir is polled for changes (default 2s);
	// negative disables reloading.
	ReloadInterval duration.Duration `json:"reload_interval,omitempty"`
}

// Defaults applied by New.
const (
	DefaultDir = "policies"
	// DefaultTimeout bounds one evaluation. A decision takes well under a
	// millisecond, but on a loaded 2-core machine evaluations were seen
	// past 100ms: a bound that tight denies healthy requests.
	DefaultTimeout        = time.Second
	DefaultReloadInterval = 2 * time.Second
)

// Obligations are conditions an allow comes with; the gateway must honour them.
type Obligations struct {
	StripCredentials bool `json:"strip_credentials,omitempty"`
}

// Decision is the outcome of one authorization.
type Decision struct {
	Allow       bool        `json:"allow"`
	Reason      string      `json:"reason,omitempty"`
	Obligations Obligations `json:"obligations"`
}

// Stats are cumulative engine counters. Decisions = Allowed + Denied;
// Errors counts failed evaluations (Decide and Filter), each of which
// also denied or hid.
type Stats struct {
	Decisions int64 `json:"decisions"`
	Allowed   int64 `json:"allowed"`
	Denied    int64 `json:"denied"`
	Errors    int64 `json:"errors"`
}

// Counters hold an engine's cumulative counts. An engine makes its own
// unless given a set (WithCounters): a gateway hands every engine of its
// process the same set, so that a config reload, which builds a new
// engine, does not reset totals that Prometheus' counters keep.
type Counters struct {
	decisions, allowed, denied, errs atomic.Int64
}

// Stats returns a snapshot of the counts.
func (c *Counters) Stats() Stats {
	return Stats{
		Decisions: c.decisions.Load(),
		Allowed:   c.allowed.Load(),
		Denied:    c.denied.Load(),
		Errors:    c.errs.Load(),
	}
}

// Option adjusts an engine at New.
type Option func(*Engine)

// WithCounters makes the engine count into c instead of a set of its own
// (nil: its own).
func WithCounters(c *Counters) Option {
	return func(e *Engine) {
		if c != nil {
			e.counters = c
		}
	}
}

// Failure classes, for errors.Is on the error Decide and Filter return.
var (
	ErrUndefined = errors.New("policy result is undefined")
	ErrInvalid   = errors.New("policy result is malformed")
	ErrTimeout   = errors.New("policy evaluation timed out")
)

// Engine evaluates one policy package. It is safe for concurrent use.
type Engine struct {
	cfg Config
	log *zap.Logger
	set atomic.Pointer[policySet] // swapped whole by reloads

	counters *Counters

	reloadMu sync.Mutex // serializes loads so an older set never replaces a newer one
	stop     context.CancelFunc
	done     chan struct{}

	// checked: every loaded set is tried on checkInputs first (see check).
	checked bool
}

// New loads the policy directory and starts the reloader. The initial load
// must succeed, the check on sample requests included: a gateway must not
// start without a working policy.
func New(ctx context.Context, cfg Config, log *zap.Logger, opts ...Option) (*Engine, error) {
	return open(ctx, cfg, log, true, opts...)
}

// open is New; checked false skips the load check, for tests of how a
// policy that fails at evaluation denies at run time.
func open(ctx context.Context, cfg Config, log *zap.Logger, checked bool, opts ...Option) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	e := &Engine{cfg: cfg, log: log, done: make(chan struct{}), checked: checked, counters: new(Counters)}
	for _, o := range opts {
		o(e)
	}
	// Snapshot before loading: a change racing the load is then seen as
	// a change by the first poll.
	snap := takeSnapshot(cfg.Dir)
	set, err := e.loadChecked(ctx)
	if err != nil {
		return nil, err
	}
	e.set.Store(set)
	e.logLoaded("policies loaded", set)
	e.startReloader(snap)
	return e, nil
}

// loadChecked loads the policy directory and checks the new set.
func (e *Engine) loadChecked(ctx context.Context) (*policySet, error) {
	set, err := load(ctx, e.cfg.Dir, e.cfg.Package)
	if err == nil && e.checked {
		err = e.check(ctx, set)
	}
	if err != nil {
		return nil, err
	}
	return set, nil
}

func (e *Engine) logLoaded(msg string, set *policySet) {
	e.log.Info(msg, zap.String("dir", e.cfg.Dir), zap.String("package", e.cfg.Package),
		zap.Strings("files", set.files))
	if set.visible == nil {
		e.log.Warn("policy package has no visible rule; list filtering will hide every item",
			zap.String("package", e.cfg.Package))
	}
}

func (c Config) withDefaults() (Config, error) {
	if c.Package == "" {
		return c, errors.New("policies: package is required (e.g. lakegate.roles)")
	}
	if err := checkPackage(c.Package); err != nil {
		return c, err
	}
	if c.Dir == "" {
		c.Dir = DefaultDir
	}
	if c.Timeout <= 0 {
		c.Timeout = duration.Duration(DefaultTimeout)
	}
	if c.ReloadInterval == 0 {
		c.ReloadInterval = duration.Duration(DefaultReloadInterval)
	}
	return c, nil
}

// Decide authorizes one request. On any failure it returns a deny with a
// plain-words reason and a non-nil error.
func (e *Engine) Decide(ctx context.Context, in Input) (Decision, error) {
	start := time.Now()
	d, err := e.decide(ctx, &in)
	e.count(d, err)
	if err != nil {
		e.log.Error("policy decision failed; denying", append(logFields(&in),
			zap.String("reason", d.Reason), zap.Error(err))...)
	} else if ce := e.log.Check(zap.DebugLevel, "policy decision"); ce != nil {
		ce.Write(append(logFields(&in), zap.Bool("allow", d.Allow), zap.String("reason", d.Reason),
			zap.Bool("strip_credentials", d.Obligations.StripCredentials),
			zap.Duration("duration", time.Since(start)))...)
	}
	return d, err
}

func (e *Engine) decide(ctx context.Context, in *Input) (Decision, error) {
	set := e.set.Load()
	key, memo := memoKey(set, in)
	if memo {
		if d, ok := set.memo.Get(key); ok {
			return d, nil
		}
	}
	rs, err := e.eval(ctx, set.decision, in)
	if err != nil {
		return e.deny(err)
	}
	d, err := parseDecision(rs, e.cfg.Package)
	if err != nil {
		return e.deny(err)
	}
	if memo {
		set.memo.Add(key, d)
	}
	return d, nil
}

// memoKey hashes the whole input: a deterministic policy gives the same
// decision for the same input (time included, to the second), so a hit
// is exactly what evaluating would have answered. Failures are never
// remembered.
func memoKey(set *policySet, in *Input) ([32]byte, bool) {
	if set.memo == nil {
		return [32]byte{}, false
	}
	var buf [512]byte
	b, ok := in.appendKey(buf[:0])
	if !ok {
		return [32]byte{}, false
	}
	return sha256.Sum256(b), true
}

// Filter decides which items of a listing page the principal may see, in
// one evaluation of data.<pkg>.visible for the whole page. On failure every
// item is hidden and the error is returned.
func (e *Engine) Filter(ctx context.Context, in Input) ([]bool, error) {
	visible, err := e.filter(ctx, &in)
	if err != nil {
		e.counters.errs.Add(1)
		e.log.Error("policy list filter failed; hiding the page", append(logFields(&in),
			zap.Int("items", len(in.Items)), zap.Error(err))...)
		return make([]bool, len(in.Items)), err
	}
	if ce := e.log.Check(zap.DebugLevel, "policy list filter"); ce != nil {
		ce.Write(append(logFields(&in), zap.Int("items", len(in.Items)),
			zap.Int("visible", countTrue(visible)))...)
	}
	return visible, nil
}

func (e *Engine) filter(ctx context.Context, in *Input) ([]bool, error) {
	if len(in.Items) == 0 {
		return []bool{}, nil // nothing to show; no need to ask the policy
	}
	set := e.set.Load()
	if set.visible == nil {
		return nil, fmt.Errorf("%w: package %s defines no visible rule", ErrUndefined, e.cfg.Package)
	}
	rs, err := e.eval(ctx, *set.visible, in)
	if err != nil {
		return nil, err
	}
	return parseVisible(rs, len(in.Items), e.cfg.Package)
}

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats { return e.counters.Stats() }

// Close stops the reloader and waits for it. The engine keeps deciding
// with the last loaded policy set.
func (e *Engine) Close() error {
	e.stop()
	<-e.done
	return nil
}

func (e *Engine) count(d Decision, err error) {
	c := e.counters
	c.decisions.Add(1)
	if d.Allow {
		c.allowed.Add(1)
	} else {
		c.denied.Add(1)
	}
	if err != nil {
		c.errs.Add(1)
	}
}

// deny turns a failure into the fail-closed decision. Reasons may reach
// the client, so OPA's own error text (which can quote policy source) only
// goes to the returned error and the log; our undefined/malformed messages
// are plain enough to pass on.
func (e *Engine) deny(err error) (Decision, error) {
	reason := "policy evaluation failed"
	if te, ok := errors.AsType[*topdown.Error](err); ok {
		reason += " (" + te.Code + ")" // e.g. eval_conflict_error: says what kind of bug, not where
	}
	switch {
	case errors.Is(err, ErrTimeout):
		reason = fmt.Sprintf("%s after %s", ErrTimeout, e.cfg.Timeout)
	case errors.Is(err, ErrUndefined), errors.Is(err, ErrInvalid):
		reason = err.Error()
	case errors.Is(err, context.Canceled):
		reason = "request cancelled during policy evaluation"
	}
	return Decision{Allow: false, Reason: reason}, err
}

// logFields identify a request in logs. Claims and tokens are deliberately
// absent: they may carry secrets or personal data.
func logFields(in *Input) []zap.Field {
	return append(make([]zap.Field, 0, 8),
		zap.String("operation", in.Operation),
		zap.String("api", in.API),
		zap.String("principal", in.Principal.ID),
		zap.Object("resource", in.Resource),
	)
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
