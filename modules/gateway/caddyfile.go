package gateway

import (
	"encoding/json"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/unified"
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
//		identity { see identityGrammar }
//		policy { see parsePolicy }
//		catalog <name> {
//			idempotency { lifetime <d>; lease <d>; wait <d>; max_record_bytes <size>; max_error_records <n> }
//			cache { max_age <d>; stale_if_error <d> }
//			max_request_body <size>
//			allowed_locations <path | url>...
//			remote <url> { see parseRemote }
//			unified {
//				route <namespace> <catalog> [as <namespace>]   namespaces dotted: sales.eu
//				default <catalog>
//			}
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
//
// testdata/grammar.Caddyfile uses every option of every lakegate directive.
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
	if err := noMoreArgs(d); err != nil {
		return err
	}
	return a.grammar().parse(d, "lakegate")
}

// Interface guards
var _ caddyfile.Unmarshaler = (*App)(nil)

// grammar is the `lakegate` option's block.
func (a *App) grammar() block {
	return block{
		"default_catalog":  named(&a.DefaultCatalog, "the name of one of the catalogs"),
		"prefixless_paths": named(&a.PrefixlessPaths, "off, or the name of one of the catalogs"),
		"redis":            redisURL(&a.Redis),
		"replay_redis":     redisURL(&a.ReplayRedis),
		"cache":            fresh(&a.CacheLimits, "cache", cacheLimitsGrammar),
		"identity":         fresh(&a.Identity, "identity", identityGrammar),
		"policy": func(d *caddyfile.Dispenser) error {
			dir := caddyfileDir(d)
			pc, err := parsePolicy(d)
			if err != nil {
				return err
			}
			pc.Dir = localPath(dir, pc.Dir) // the default (unset) stays the working directory's
			a.Policy = pc
			return nil
		},
		"catalog": func(d *caddyfile.Dispenser) error {
			cc, err := parseCatalog(d)
			a.Catalogs = append(a.Catalogs, cc)
			return err
		},
	}
}

// named reads the option's one argument, want naming it in errors.
func named(dst *string, want string) setter {
	return func(d *caddyfile.Dispenser) error { return argNamed(d, dst, want) }
}

// fresh is an option with a block and no arguments whose config is a new
// *T, read by the block grammar(*T) makes: a repeated option replaces
// the earlier one.
func fresh[T any](dst **T, what string, grammar func(*T) block) setter {
	return func(d *caddyfile.Dispenser) error {
		*dst = new(T)
		return sub(grammar(*dst), what)(d)
	}
}

// redisURL reads `redis <url>`: an empty argument (an unset
// {$LAKEGATE_REDIS:}) or none keeps memory.
func redisURL(dst *string) setter {
	return func(d *caddyfile.Dispenser) error {
		name := d.Val()
		if d.CountRemainingArgs() > 1 {
			return d.ArgErr()
		}
		if d.NextArg() {
			*dst = d.Val()
			if err := checkRedisURL(*dst); err != nil {
				return d.Errf("%s: %v", name, err)
			}
		}
		return nil
	}
}

// parseCatalog reads `catalog <name> { ... }`.
func parseCatalog(d *caddyfile.Dispenser) (CatalogConfig, error) {
	var cc CatalogConfig
	if err := argNamed(d, &cc.Name, "the catalog's name (catalog <name> { ... })"); err != nil {
		return cc, err
	}
	dir := caddyfileDir(d)
	return cc, block{
		"embedded": func(d *caddyfile.Dispenser) (err error) {
			cc.Embedded, err = parseEmbedded(d)
			return err
		},
		"remote": func(d *caddyfile.Dispenser) (err error) {
			cc.Remote, err = parseRemote(d)
			return err
		},
		"unified":     fresh(&cc.Unified, "unified", unifiedGrammar),
		"cache":       fresh(&cc.Cache, "cache", catalogCacheGrammar),
		"idempotency": fresh(&cc.Idempotency, "idempotency", idempotencyGrammar),
		"storage":     fresh(&cc.Storage, "storage", storageGrammar),
		"allowed_locations": func(d *caddyfile.Dispenser) error {
			locs := d.RemainingArgs()
			if len(locs) == 0 {
				return argErr(d, "allowed_locations", "one or more absolute paths or URLs", 0)
			}
			for _, l := range locs {
				cc.AllowedLocations = append(cc.AllowedLocations, localPath(dir, l))
			}
			return nil
		},
		"max_request_body": size(&cc.MaxRequestBody),
	}.parse(d, "catalog")
}

// storageGrammar is a catalog's
//
//	storage {
//		s3 { endpoint <url>; region <r>; path_style; access_key_id <id>;
//		     secret_access_key <placeholder>; session_token <placeholder> }
//		remote_signing
//		decision_ttl <duration>
//		vended_credentials { role_arn <arn>; duration <d>; sts_endpoint <url> }
//	}
func storageGrammar(c *storage.Config) block {
	return block{
		"s3": fresh(&c.S3, "s3", func(s *storage.S3Config) block {
			return block{
				"endpoint":          str(&s.Endpoint),
				"region":            str(&s.Region),
				"path_style":        on(&s.PathStyle),
				"access_key_id":     str(&s.AccessKeyID),
				"secret_access_key": str(&s.SecretAccessKey),
				"session_token":     str(&s.SessionToken),
			}
		}),
		"remote_signing": on(&c.RemoteSigning),
		"decision_ttl":   dur(&c.DecisionTTL),
		"vended_credentials": fresh(&c.VendedCredentials, "vended_credentials", func(v *storage.VendConfig) block {
			return block{
				"role_arn":     str(&v.RoleARN),
				"duration":     dur(&v.Duration),
				"sts_endpoint": str(&v.STSEndpoint),
			}
		}),
	}
}

// parseEmbedded reads a catalog's `embedded { ... }`.
func parseEmbedded(d *caddyfile.Dispenser) (*embedded.Config, error) {
	cfg := new(embedded.Config)
	dir := caddyfileDir(d)
	err := sub(block{
		"database":            str(&cfg.Database),
		"dsn":                 str(&cfg.DSN),
		"warehouse":           str(&cfg.Warehouse),
		"namespace_separator": str(&cfg.NamespaceSeparator),
		"property":            keyValue(&cfg.Properties, "property <key> <value>"),
		"auth_token": func(d *caddyfile.Dispenser) error {
			var tok string
			err := oneArg(d, &tok)
			cfg.Auth.Tokens = append(cfg.Auth.Tokens, tok)
			return err
		},
		"auth_client": keyValue(&cfg.Auth.Clients, "auth_client <id> <secret>"),
		"token_ttl":   dur(&cfg.Auth.TokenTTL),
	}, "embedded")(d)
	if err != nil {
		return nil, err
	}
	// A relative SQLite file or warehouse directory is the Caddyfile's
	// neighbour (see localPath); a PostgreSQL DSN is a URL.
	if cfg.Database == "" || cfg.Database == embedded.SQLite {
		cfg.DSN = localPath(dir, cfg.DSN)
	}
	cfg.Warehouse = localPath(dir, cfg.Warehouse)
	return cfg, nil
}

// unifiedGrammar is a catalog's `unified { route <namespace> <catalog>
// [as <namespace>]; default <catalog> }`; a namespace's levels are
// separated by dots.
func unifiedGrammar(cfg *unified.Config) block {
	return block{
		"route": func(d *caddyfile.Dispenser) error {
			const usage = "route <namespace> <catalog> [as <namespace>]"
			args := d.RemainingArgs()
			if (len(args) != 2 && len(args) != 4) || (len(args) == 4 && args[2] != "as") {
				return argsErr(d, "route", usage)
			}
			r := unified.Rule{Namespace: strings.Split(args[0], "."), Catalog: args[1]}
			if len(args) == 4 {
				r.As = strings.Split(args[3], ".")
			}
			cfg.Routes = append(cfg.Routes, r)
			return nil
		},
		"default": named(&cfg.Default, "the member catalog of every namespace no route covers"),
	}
}

// idempotencyGrammar is a catalog's `idempotency { lifetime <d>; lease <d>;
// wait <d>; max_record_bytes <size>; max_error_records <n> }`.
func idempotencyGrammar(cfg *upstream.ReplayConfig) block {
	return block{
		"lifetime":          dur(&cfg.Lifetime),
		"lease":             dur(&cfg.Lease),
		"wait":              dur(&cfg.Wait),
		"max_record_bytes":  size(&cfg.MaxRecordBytes),
		"max_error_records": integer(&cfg.MaxErrorRecords),
	}
}

// cacheLimitsGrammar is the app's `cache { max_entries <n>; max_bytes <size> }`.
func cacheLimitsGrammar(limits *CacheLimits) block {
	return block{
		"max_entries": integer(&limits.MaxEntries),
		"max_bytes":   size(&limits.MaxBytes),
	}
}

// catalogCacheGrammar is a catalog's `cache { max_age <d>; stale_if_error <d> }`.
func catalogCacheGrammar(cfg *upstream.CacheConfig) block {
	return block{
		"max_age":        dur(&cfg.MaxAge),
		"stale_if_error": dur(&cfg.StaleIfError),
	}
}
