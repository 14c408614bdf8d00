package gateway

import (
	"encoding/json"
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/dustin/go-humanize"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("lakegate", parseAppOption)
}

// parseAppOption parses the `lakegate` global option:
//
//	lakegate {
//		default_catalog <name>
//		redis <url>          redis://, rediss://, redis+cluster://, redis+sentinel://
//		replay_redis <url>
//		cache { max_entries <n>; max_bytes <size> }
//		identity { see parseIdentity }
//		policy { see parsePolicy }
//		catalog <name> {
//			idempotency { lifetime <d>; lease <d>; wait <d> }
//			cache { max_age <d>; stale_if_error <d> }
//		}
//		catalog <name> {
//			max_request_body <size>
//			allowed_locations <path | url>...
//			remote <url> { see parseRemote }
//			embedded {
//				database  sqlite|postgres
//				dsn       <sqlite file | postgres url>
//				warehouse <dir | url>
//				namespace_separator <sep>
//				property  <key> <value>
//				auth_token <token>
//				auth_client <id> <secret>
//				token_ttl <duration>
//			}
//		}
//	}
func parseAppOption(d *caddyfile.Dispenser, _ any) (any, error) {
	app := new(App)
	if err := app.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "lakegate", Value: raw}, nil
}

// UnmarshalCaddyfile sets up the app from Caddyfile tokens.
func (a *App) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the option name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "default_catalog":
			if err := argNamed(d, &a.DefaultCatalog, "the name of one of the catalogs"); err != nil {
				return err
			}
		case "redis", "replay_redis":
			// An empty argument (an unset {$LAKEGATE_REDIS:}) keeps memory.
			name, dst := d.Val(), &a.Redis
			if name == "replay_redis" {
				dst = &a.ReplayRedis
			}
			if d.CountRemainingArgs() > 1 {
				return d.ArgErr()
			}
			if d.NextArg() {
				*dst = d.Val()
				if err := checkRedisURL(*dst); err != nil {
					return d.Errf("%s: %v", name, err)
				}
			}
		case "cache":
			limits, err := parseCacheLimits(d)
			if err != nil {
				return err
			}
			a.CacheLimits = limits
		case "identity":
			idc, err := parseIdentity(d)
			if err != nil {
				return err
			}
			a.Identity = idc
		case "policy":
			dir := caddyfileDir(d)
			pc, err := parsePolicy(d)
			if err != nil {
				return err
			}
			pc.Dir = localPath(dir, pc.Dir) // the default (unset) stays the working directory's
			a.Policy = pc
		case "catalog":
			cc, err := parseCatalog(d)
			if err != nil {
				return err
			}
			a.Catalogs = append(a.Catalogs, cc)
		default:
			return d.Errf("unknown lakegate option %q", d.Val())
		}
	}
	return nil
}

func parseCatalog(d *caddyfile.Dispenser) (CatalogConfig, error) {
	var cc CatalogConfig
	if !d.NextArg() {
		return cc, argErr(d, "catalog", "the catalog's name (catalog <name> { ... })", 0)
	}
	cc.Name = d.Val()
	if err := emptyArgErr(d, "catalog", "the catalog's name", cc.Name); err != nil {
		return cc, err
	}
	dir := caddyfileDir(d)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "embedded":
			cfg, err := parseEmbedded(d)
			if err != nil {
				return cc, err
			}
			cc.Embedded = cfg
		case "remote":
			cfg, err := parseRemote(d)
			if err != nil {
				return cc, err
			}
			cc.Remote = cfg
		case "cache":
			cfg, err := parseCatalogCache(d)
			if err != nil {
				return cc, err
			}
			cc.Cache = cfg
		case "idempotency":
			cfg, err := parseIdempotency(d)
			if err != nil {
				return cc, err
			}
			cc.Idempotency = cfg
		case "allowed_locations":
			locs := d.RemainingArgs()
			if len(locs) == 0 {
				return cc, argErr(d, "allowed_locations", "one or more absolute paths or URLs", 0)
			}
			for _, l := range locs {
				cc.AllowedLocations = append(cc.AllowedLocations, localPath(dir, l))
			}
		case "max_request_body":
			if err := sizeArg(d, &cc.MaxRequestBody); err != nil {
				return cc, err
			}
		default:
			return cc, d.Errf("unknown catalog option %q", d.Val())
		}
	}
	return cc, nil
}

func parseEmbedded(d *caddyfile.Dispenser) (*embedded.Config, error) {
	cfg := new(embedded.Config)
	dir := caddyfileDir(d)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch opt := d.Val(); opt {
		case "database":
			err = oneArg(d, &cfg.Database)
		case "dsn":
			err = oneArg(d, &cfg.DSN)
		case "warehouse":
			err = oneArg(d, &cfg.Warehouse)
		case "namespace_separator":
			err = oneArg(d, &cfg.NamespaceSeparator)
		case "property":
			var k, v string
			if !d.Args(&k, &v) {
				return nil, argsErr(d, "property", "property <key> <value>")
			}
			if cfg.Properties == nil {
				cfg.Properties = map[string]string{}
			}
			cfg.Properties[k] = v
		case "auth_token":
			var tok string
			err = oneArg(d, &tok)
			cfg.Auth.Tokens = append(cfg.Auth.Tokens, tok)
		case "auth_client":
			var id, secret string
			if !d.Args(&id, &secret) {
				return nil, argsErr(d, "auth_client", "auth_client <id> <secret>")
			}
			if cfg.Auth.Clients == nil {
				cfg.Auth.Clients = map[string]string{}
			}
			cfg.Auth.Clients[id] = secret
		case "token_ttl":
			err = durationArg(d, &cfg.Auth.TokenTTL)
		default:
			return nil, d.Errf("unknown embedded option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	// A relative SQLite file or warehouse directory is the Caddyfile's
	// neighbour (see localPath); a PostgreSQL DSN is a URL.
	if cfg.Database == "" || cfg.Database == embedded.SQLite {
		cfg.DSN = localPath(dir, cfg.DSN)
	}
	cfg.Warehouse = localPath(dir, cfg.Warehouse)
	return cfg, nil
}

// oneArg reads exactly one argument into dst. An empty one is kept,
// unless it is an unset {$VAR} without a default (see argNamed).
func oneArg(d *caddyfile.Dispenser, dst *string) error {
	return argNamed(d, dst, "its value")
}

// Interface guards
var _ caddyfile.Unmarshaler = (*App)(nil)

func parseInt(s string) (int, error) { return strconv.Atoi(s) }

// parseIdempotency parses `idempotency [{ lifetime <d>; lease <d>; wait <d>;
// max_record_bytes <size>; max_error_records <n> }]`.
func parseIdempotency(d *caddyfile.Dispenser) (*upstream.ReplayConfig, error) {
	cfg := new(upstream.ReplayConfig)
	durations := map[string]*duration.Duration{"lifetime": &cfg.Lifetime, "lease": &cfg.Lease, "wait": &cfg.Wait}
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		if dst, ok := durations[d.Val()]; ok {
			err = durationArg(d, dst)
		} else if d.Val() == "max_record_bytes" {
			err = sizeArg(d, &cfg.MaxRecordBytes)
		} else if d.Val() == "max_error_records" {
			err = intArg(d, &cfg.MaxErrorRecords)
		} else {
			err = d.Errf("unknown idempotency option %q", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// sizeArg reads one positive byte size (1MiB, 512KB, 4096), at most 2 GiB,
// into dst: every size option of the Caddyfile reads the same way.
func sizeArg[T int | int64](d *caddyfile.Dispenser, dst *T) error {
	opt := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<31 {
		return d.Errf("%s: invalid size %q (a positive size up to 2GiB, such as 512KiB or 64MiB)", opt, s)
	}
	*dst = T(n)
	return nil
}

// parseCacheLimits parses the app's `cache { max_entries <n>; max_bytes <size> }`.
func parseCacheLimits(d *caddyfile.Dispenser) (*CacheLimits, error) {
	limits := new(CacheLimits)
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch opt := d.Val(); opt {
		case "max_entries":
			if err := intArg(d, &limits.MaxEntries); err != nil {
				return nil, err
			}
		case "max_bytes":
			if err := sizeArg(d, &limits.MaxBytes); err != nil {
				return nil, err
			}
		default:
			return nil, d.Errf("unknown cache option %q", opt)
		}
	}
	return limits, nil
}

// parseCatalogCache parses a catalog's `cache { max_age <d>; stale_if_error <d> }`.
func parseCatalogCache(d *caddyfile.Dispenser) (*upstream.CacheConfig, error) {
	cfg := new(upstream.CacheConfig)
	return cfg, parseBlock(d, map[string]*duration.Duration{
		"max_age": &cfg.MaxAge, "stale_if_error": &cfg.StaleIfError}, durationArg)
}
