// Package gateway is lakegate's Caddy glue: the `lakegate` app (catalogs
// and the state shared by every handler) and the Iceberg REST front door.
package gateway

//go:generate go run github.com/lakegate/lakegate/internal/docgen -root ../.. -out docs/reference.md

import (
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/cache/commitlog"
	"github.com/lakegate/lakegate/cache/replay"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/icerest"
	"github.com/lakegate/lakegate/upstream/locations"
	"github.com/lakegate/lakegate/upstream/unified"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the `lakegate` Caddy app: the catalogs the gateway fronts.
type App struct {
	// Catalogs by client-visible name: what clients pass as `warehouse`
	// and then use as {prefix}.
	Catalogs []CatalogConfig `json:"catalogs,omitempty"`
	// DefaultCatalog answers /v1/config without `warehouse` and the
	// prefix-less /v1/namespaces/... path form (default: none; such
	// requests are then a 400).
	DefaultCatalog string `json:"default_catalog,omitempty"`
	// PrefixlessPaths is the catalog the prefix-less /v1/namespaces/...
	// form reaches, or "off" to refuse that form with a 400. A client
	// given a prefix by /v1/config that still sends a path without it
	// (ClickHouse does, for DROP TABLE) would otherwise reach the default
	// catalog, where a table of the same name is not the one it meant: on
	// a gateway with several catalogs, "off" (or the one catalog such
	// clients use) is the safe setting. Default: default_catalog.
	PrefixlessPaths string `json:"prefixless_paths,omitempty"`
	// Redis is the URL of the Redis that replicas share state through
	// (Idempotency-Key replay, the LoadTable cache's L2 and invalidation
	// bus, Delta staging): redis:// or rediss:// for a standalone Redis,
	// redis+cluster://host1:6379,host2:6379 for a Redis Cluster,
	// redis+sentinel://host1:26379,host2:26379/<master-name>[/<db>] for a
	// Sentinel-managed master (package internal/redisurl). A password may
	// be a {env.X} or {file./path} placeholder. Default: empty, state
	// stays in process memory.
	Redis string `json:"redis,omitempty"`
	// ReplayRedis, when set, holds Idempotency-Key records instead of
	// Redis: a Redis with maxmemory-policy noeviction, so a record is never
	// evicted (a retry would then apply twice), while Redis may evict
	// cache entries (allkeys-lru). Default: empty, records go to Redis.
	ReplayRedis string `json:"replay_redis,omitempty"`
	// CacheLimits bounds the in-process LoadTable cache (L1); default
	// 10,000 entries and 256 MiB.
	CacheLimits *CacheLimits `json:"cache,omitempty"`
	// Identity configures authentication of callers (JWT, static tokens,
	// lakegate as token issuer). Default: none, every caller is
	// anonymous.
	Identity *IdentityConfig `json:"identity,omitempty"`
	// Policy configures OPA authorization of every operation. Default:
	// none, every authenticated caller may do everything.
	Policy *policies.Config `json:"policy,omitempty"`

	backends   map[string]*catalogState
	lazy       []*lazyCatalog
	poolKeys   *heldKeys
	sharedKeys []string
	replay     replay.Store
	cache      *cache.Cache
	journal    *commitlog.Journal
	guard      *guard
	log        *zap.Logger
	// accessLog is Caddy's access logger (the http app's, named
	// log.access), for the lines lakegate writes itself (accesslog.go).
	accessLog *zap.Logger
	ctx       caddy.Context
}

// CatalogConfig is one catalog the gateway serves: its client-visible
// name and exactly one backend.
type CatalogConfig struct {
	// Name is what clients pass as `warehouse` and use as {prefix}
	// (required, unique).
	Name string `json:"name"`
	// Embedded serves the catalog from lakegate's own embedded catalog.
	// Exactly one of Embedded, Remote and Unified is set.
	Embedded *embedded.Config `json:"embedded,omitempty"`
	// Remote fronts an Iceberg REST catalog over HTTP. Exactly one of
	// Embedded, Remote and Unified is set.
	Remote *upstream.RemoteConfig `json:"remote,omitempty"`
	// Unified makes the catalog a virtual one whose namespaces live in
	// other catalogs of this gateway (its members, embedded or remote),
	// chosen by namespace prefix: see docs/unified.md. A member keeps its
	// own cache, idempotency and allowed locations, so a unified catalog
	// takes none of those. Exactly one of Embedded, Remote and Unified is
	// set.
	Unified *unified.Config `json:"unified,omitempty"`
	// MaxRequestBody bounds request bodies (default 10 MiB); larger ones
	// get 413.
	MaxRequestBody int64 `json:"max_request_body,omitempty"`
	// Idempotency turns on Idempotency-Key replay for the catalog's
	// mutations, whatever the backend supports. Default: off (keys are
	// passed to the backend).
	Idempotency *upstream.ReplayConfig `json:"idempotency,omitempty"`
	// Cache turns on the LoadTable cache for the catalog. Default: off.
	Cache *upstream.CacheConfig `json:"cache,omitempty"`
	// AllowedLocations are storage roots (absolute paths or URLs such as
	// s3://bucket/prefix) where the catalog's tables may live. An
	// embedded catalog allows its warehouse plus these, and reads, writes
	// and deletes nothing elsewhere. For a remote catalog, when set, every
	// location a write body names must be under one of them (default:
	// none set, the backend decides).
	AllowedLocations []string `json:"allowed_locations,omitempty"`
	// Storage is the catalog's object storage and the credentials only
	// the gateway holds for it; with remote_signing, clients with no
	// storage keys of their own have their S3 requests signed, file by
	// file, as the policy allows; with vended_credentials, they get
	// temporary keys scoped to the table (docs/storage.md). Default: none.
	Storage *storage.Config `json:"storage,omitempty"`
}

// CacheLimits bounds L1, the in-process part of the LoadTable cache.
type CacheLimits struct {
	// MaxEntries is how many LoadTable answers L1 holds (default 10,000).
	MaxEntries int `json:"max_entries,omitempty"`
	// MaxBytes is how many bytes of answers L1 holds (default 256 MiB).
	MaxBytes int64 `json:"max_bytes,omitempty"`
}

// catalogState is a provisioned catalog.
type catalogState struct {
	cfg      CatalogConfig
	pipeline *upstream.Pipeline
	// locations is where the catalog's files may be read from: an
	// embedded catalog's own rule, a remote's allowed_locations, or nil
	// (a remote without them: its metadata is trusted).
	locations *locations.Rule
	// keyLifetime is the Idempotency-Key lifetime a unified catalog
	// advertises: its members' shortest, when every member replays keys.
	keyLifetime time.Duration
	// separator is the namespace separator (decoded) clients of the
	// gateway use for this catalog, known without asking the backend, so
	// a request is parsed and authorized before any backend call: the
	// embedded catalog's own, else the spec's default. The backends get
	// paths and `parent` re-encoded with theirs.
	separator string
	// signing is the catalog's remote signer (storage.remote_signing),
	// nil when it signs nothing.
	signing *signing
	// vending is the catalog's credential vendor
	// (storage.vended_credentials), nil when it vends none.
	vending *vending
}

// clientSeparator is the namespace separator the gateway advertises for
// the catalog (see catalogState.separator).
func clientSeparator(cc CatalogConfig) string {
	if cc.Embedded != nil && cc.Embedded.NamespaceSeparator != "" {
		return cc.Embedded.NamespaceSeparator
	}
	return icerest.UnitSeparator
}

const defaultMaxRequestBody = 10 << 20

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "lakegate", New: func() caddy.Module { return new(App) }}
}

// Provision opens every catalog's backend.
func (a *App) Provision(ctx caddy.Context) error {
	a.log, a.ctx = ctx.Logger(), ctx
	// The http app's logger, built as the http app builds its own: the
	// same logs, filters and name.
	a.accessLog = ctx.Logger(new(caddyhttp.App)).Named("log.access")
	// Caddy makes a registry per config load; the collectors are the
	// process's, so their counts carry on across reloads.
	if err := telemetry.Register(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	if err := a.resolveSecrets(); err != nil {
		return err
	}
	if err := a.checkRedisURLs(); err != nil {
		return err
	}
	counters, err := a.policyCounters()
	if err != nil {
		return err
	}
	g, err := newGuard(ctx, a.Identity, a.Policy, counters, a.log)
	if err != nil {
		return err
	}
	a.guard = g
	a.backends, a.poolKeys = map[string]*catalogState{}, &heldKeys{}
	journal, err := a.sharedJournal()
	if err != nil {
		return err
	}
	for _, cc := range a.Catalogs {
		if cc.Unified != nil {
			continue // over the others: see provisionUnified
		}
		b, rule, err := a.openBackend(cc)
		if err != nil {
			return fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
		if cc.MaxRequestBody <= 0 {
			cc.MaxRequestBody = defaultMaxRequestBody
		}
		opts := []upstream.PipelineOption{upstream.WithJournal(journal)}
		if cc.Remote != nil {
			opts = append(opts, upstream.WithLocations(rule)) // the embedded catalog confines itself
		}
		if cc.Idempotency != nil {
			store, err := a.sharedReplayStore()
			if err != nil {
				return err
			}
			rp := upstream.NewReplayer(cc.Name, store, *cc.Idempotency, a.log.Named("replay"))
			if rp.ReplayCounters, err = sharedCounters[upstream.ReplayCounters](a, "counters|replay|"+cc.Name); err != nil {
				return err
			}
			opts = append(opts, upstream.WithReplay(rp))
		}
		if cc.Cache != nil {
			c, err := a.sharedCache()
			if err != nil {
				return err
			}
			opts = append(opts, upstream.WithCache(&upstream.TableCache{Cache: c, Config: *cc.Cache, Catalog: cc.Name,
				PerPrincipal: cc.Remote != nil && cc.Remote.Auth.Mode == upstream.AuthPassthrough}))
		}
		p := upstream.NewPipeline(cc.Name, b, opts...)
		st := &catalogState{cfg: cc, pipeline: p, locations: rule, separator: clientSeparator(cc)}
		if st.signing, err = newSigning(cc); err != nil {
			return fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
		if st.vending, err = newVending(cc); err != nil {
			return fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
		a.backends[cc.Name] = st
	}
	for _, cc := range a.Catalogs {
		if cc.Unified != nil {
			if err := a.provisionUnified(cc); err != nil {
				return fmt.Errorf("catalog %q: %w", cc.Name, err)
			}
		}
	}
	return nil
}

// provisionUnified builds a unified catalog over its members' pipelines,
// provisioned before it: a request through it runs the member's whole
// pipeline (replay, cache, confinement, breaker) under the member's
// names. Its files may be read where its members' may (nil when a member
// is not confined by lakegate).
func (a *App) provisionUnified(cc CatalogConfig) error {
	members := map[string]unified.Member{}
	var rules []*locations.Rule
	confined := true
	var lifetime time.Duration
	replays := true
	for _, name := range cc.Unified.Members() {
		m, ok := a.backends[name]
		if !ok || m.cfg.Unified != nil {
			return fmt.Errorf("unified member %q is not an embedded or remote catalog of this gateway", name)
		}
		members[name] = m.pipeline
		rules = append(rules, m.locations)
		confined = confined && m.locations != nil
		if rp := m.pipeline.Replayer; rp != nil && replays {
			if lifetime == 0 || rp.Lifetime() < lifetime {
				lifetime = rp.Lifetime()
			}
		} else {
			replays = false
		}
	}
	b, err := unified.New(cc.Name, *cc.Unified, members)
	if err != nil {
		return err
	}
	if cc.MaxRequestBody <= 0 {
		cc.MaxRequestBody = defaultMaxRequestBody
	}
	st := &catalogState{cfg: cc, pipeline: upstream.NewPipeline(cc.Name, b, upstream.WithJournal(a.journal)), separator: clientSeparator(cc)}
	if confined {
		st.locations = locations.Union(rules...)
	}
	if replays {
		st.keyLifetime = lifetime
	}
	a.backends[cc.Name] = st
	return nil
}

// sharedReplayStore opens the replay store once per app.
func (a *App) sharedReplayStore() (replay.Store, error) {
	if a.replay != nil {
		return a.replay, nil
	}
	store, key, err := a.replayStore()
	if err != nil {
		return nil, err
	}
	a.replay = store
	a.sharedKeys = append(a.sharedKeys, key)
	return store, nil
}

// openBackend opens the catalog's backend and the rule its files are
// confined to (nil: a remote without allowed_locations).
func (a *App) openBackend(cc CatalogConfig) (upstream.Backend, *locations.Rule, error) {
	switch {
	case cc.Embedded != nil && cc.Remote != nil:
		return nil, nil, fmt.Errorf("configure one backend: embedded or remote, not both")
	case cc.Unified != nil:
		return nil, nil, fmt.Errorf("configure one backend: embedded, remote or unified")
	case cc.Remote != nil:
		var rule *locations.Rule
		if len(cc.AllowedLocations) > 0 {
			var err error
			if rule, err = locations.New(cc.AllowedLocations...); err != nil {
				return nil, nil, err
			}
		}
		b, err := upstream.NewRemote(cc.Name, *cc.Remote, a.log.Named("upstream").With(zap.String("catalog", cc.Name)))
		return b, rule, err
	case cc.Embedded != nil:
		lazy, rule, err := a.embeddedCatalog(cc)
		if err != nil {
			return nil, nil, err
		}
		return upstream.NewLocal(cc.Name, lazy), rule, nil
	}
	return nil, nil, fmt.Errorf("no backend configured (embedded, remote or unified)")
}

// configuredApp is the lakegate app a front door serves. Caddy's ctx.App
// would make an empty one when the config has none: the door then loaded,
// validated and answered every request 400, so a door without the app is
// a configuration error.
func configuredApp(ctx caddy.Context, door string) (*App, error) {
	app, err := ctx.AppIfConfigured("lakegate")
	switch {
	case errors.Is(err, caddy.ErrNotConfigured):
		return nil, fmt.Errorf("%s needs the lakegate app: add the `lakegate` global option with at least one catalog (JSON: apps.lakegate): %w", door, err)
	case err != nil:
		// The app is there but failed to load: its own error says why,
		// without a hint to add what is already configured.
		return nil, err
	}
	return app.(*App), nil
}

// Validate checks names and the default catalog.
func (a *App) Validate() error {
	seen := map[string]bool{}
	for _, cc := range a.Catalogs {
		switch {
		case cc.Name == "":
			return fmt.Errorf("a catalog needs a name")
		case icerest.IsReservedPrefix(cc.Name):
			return fmt.Errorf("catalog name %q is reserved by the prefix-less path form", cc.Name)
		case seen[cc.Name]:
			return fmt.Errorf("catalog %q is configured twice", cc.Name)
		}
		seen[cc.Name] = true
		if err := checkStorage(cc); err != nil {
			return fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
	}
	if err := a.validateUnified(); err != nil {
		return err
	}
	if a.DefaultCatalog != "" && !seen[a.DefaultCatalog] {
		return fmt.Errorf("default_catalog %q is not a configured catalog", a.DefaultCatalog)
	}
	switch p := a.PrefixlessPaths; {
	case p == prefixlessOff && seen[p]:
		return fmt.Errorf("prefixless_paths off is ambiguous: a catalog is named %q", p)
	case p != "" && p != prefixlessOff && !seen[p]:
		return fmt.Errorf("prefixless_paths %q is neither off nor a configured catalog", p)
	}
	// (The policy's reload_interval is left out: negative turns reloading off.)
	if a.Policy != nil && a.Policy.Timeout < 0 {
		return fmt.Errorf("policy.timeout: %s is negative", a.Policy.Timeout)
	}
	for path, v := range map[string]any{"catalogs": a.Catalogs, "identity": a.Identity, "cache": a.CacheLimits} {
		if err := duration.CheckNonNegative(path, v); err != nil {
			return err
		}
	}
	return nil
}

// validateUnified checks every unified catalog: one backend only, members
// that are embedded or remote catalogs of this gateway, and none of the
// stages its members carry for it.
func (a *App) validateUnified() error {
	kinds := map[string]bool{}
	for _, cc := range a.Catalogs {
		kinds[cc.Name] = cc.Unified != nil
	}
	for _, cc := range a.Catalogs {
		u := cc.Unified
		if u == nil {
			continue
		}
		switch {
		case cc.Embedded != nil || cc.Remote != nil:
			return fmt.Errorf("catalog %q: configure one backend: embedded, remote or unified", cc.Name)
		case cc.Cache != nil || cc.Idempotency != nil || len(cc.AllowedLocations) > 0:
			return fmt.Errorf("catalog %q: a unified catalog takes no cache, idempotency or allowed_locations: its members' own apply", cc.Name)
		}
		if err := u.Validate(); err != nil {
			return fmt.Errorf("catalog %q: %w", cc.Name, err)
		}
		for _, m := range u.Members() {
			unifiedMember, ok := kinds[m]
			switch {
			case !ok:
				return fmt.Errorf("catalog %q: unified member %q is not a configured catalog", cc.Name, m)
			case unifiedMember:
				return fmt.Errorf("catalog %q: unified member %q is itself unified", cc.Name, m)
			}
		}
	}
	return nil
}

// Start refuses addresses another process serves (exclusive.go), then
// opens the embedded catalogs (Provision only checked them), so a
// database that cannot be opened fails the load, not a later request.
func (a *App) Start() error {
	if err := a.checkAddresses(); err != nil {
		return err
	}
	telemetry.StartHistory() // the status page's charts: sampled from the start
	return a.openCatalogs()
}

// Stop is a no-op; Cleanup releases the catalogs.
func (a *App) Stop() error { return nil }

// Cleanup releases this config's hold on pooled catalogs.
func (a *App) Cleanup() error {
	if err := a.guard.close(); err != nil {
		a.log.Error("stopping the policy engine", zap.Error(err))
	}
	for _, k := range a.poolKeys.take() {
		if _, err := embeddedPool.Delete(k); err != nil {
			// The key holds the DSN, which may carry a password: not logged.
			a.log.Error("closing an embedded catalog", zap.Error(err))
		}
	}
	for _, k := range a.sharedKeys {
		if _, err := sharedPool.Delete(k); err != nil {
			a.log.Error("releasing shared state", zap.Error(err))
		}
	}
	return nil
}

// backendKind names the backend kind for policies ("embedded", "remote",
// "unified").
func (c *catalogState) backendKind() string {
	if c.cfg.Remote != nil {
		return "remote"
	}
	if c.cfg.Unified != nil {
		return "unified"
	}
	return "embedded"
}

// catalog returns a provisioned catalog by name.
func (a *App) catalog(name string) (*catalogState, bool) {
	c, ok := a.backends[name]
	return c, ok
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.Validator    = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
