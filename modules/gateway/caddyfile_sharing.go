package gateway

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/lakegate/lakegate/translate/sharing"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("lakegate_sharing", parseSharingHandler)
	httpcaddyfile.RegisterDirectiveOrder("lakegate_sharing", httpcaddyfile.Before, "reverse_proxy")
}

// parseSharingHandler reads
//
//	lakegate_sharing {
//		prefix <path>                  (default /delta-sharing)
//		url_lifetime <duration>
//		planning auto|local
//		signing_key <base64>
//		public_url <url>
//		s3 <fileio-property> <value>
//		max_change_versions <n>        (default 1000)
//		change_data_dir <dir>|off      (default: Caddy's data dir/lakegate/sharing-changes)
//		max_change_rewrite_bytes <size> (default 64MiB)
//		share <name> {
//			comment <text>
//			recipient <name> token <token> | sha256 <hex> [expires <rfc3339>]
//			schema <name> {
//				namespace <catalog> <level>...
//				table <name> <catalog> <level>... <table>
//			}
//		}
//	}
func parseSharingHandler(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	s := new(SharingHandler)
	if err := s.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return s, nil
}

// UnmarshalCaddyfile reads the block parseSharingHandler describes.
func (s *SharingHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		// A path here would be read by Caddy as a request matcher.
		return d.Err("lakegate_sharing takes no arguments; set the path with `prefix`")
	}
	return s.grammar().parse(d, "lakegate_sharing")
}

// Interface guard
var _ caddyfile.Unmarshaler = (*SharingHandler)(nil)

func (s *SharingHandler) grammar() block {
	return block{
		"url_lifetime": dur(&s.URLLifetime),
		"change_data_dir": func(d *caddyfile.Dispenser) error {
			dir := caddyfileDir(d)
			if err := oneArg(d, &s.ChangeDataDir); err != nil {
				return err
			}
			if s.ChangeDataDir != "off" {
				s.ChangeDataDir = localPath(dir, s.ChangeDataDir)
			}
			return nil
		},
		"max_change_rewrite_bytes": size(&s.MaxChangeRewriteBytes),
		"max_change_versions": func(d *caddyfile.Dispenser) error {
			if err := intArg(d, &s.MaxChangeVersions); err != nil {
				return err
			}
			if s.MaxChangeVersions < 1 {
				return d.Errf("max_change_versions must be at least 1")
			}
			return nil
		},
		"planning":    str(&s.Planning),
		"prefix":      str(&s.Prefix),
		"signing_key": str(&s.SigningKey),
		"public_url":  str(&s.PublicURL),
		"s3":          keyValue(&s.S3, "s3 <fileio-property> <value>"),
		"share": func(d *caddyfile.Dispenser) error {
			sh, err := parseShare(d)
			if err != nil {
				return err
			}
			s.Shares = append(s.Shares, sh)
			return nil
		},
	}
}

func parseShare(d *caddyfile.Dispenser) (ShareConfig, error) {
	var sh ShareConfig
	if err := argNamed(d, &sh.Name, "the share's name (share <name> { ... })"); err != nil {
		return sh, err
	}
	return sh, block{
		"comment": str(&sh.Comment),
		"recipient": func(d *caddyfile.Dispenser) error {
			rc, err := parseRecipient(d)
			sh.Recipients = append(sh.Recipients, rc)
			return err
		},
		"schema": func(d *caddyfile.Dispenser) error {
			sc, err := parseSchema(d)
			sh.Schemas = append(sh.Schemas, sc)
			return err
		},
	}.parse(d, "share")
}

// parseRecipient reads `recipient <name> token <t>|sha256 <hex> [expires <t>]`.
// A plain token is hashed here, so the adapted JSON config never holds it.
func parseRecipient(d *caddyfile.Dispenser) (RecipientConfig, error) {
	var rc RecipientConfig
	args := d.RemainingArgs()
	if len(args) != 3 && len(args) != 5 {
		return rc, argsErr(d, "recipient", "recipient <name> token <token>|sha256 <hex> [expires <rfc3339>]")
	}
	rc.Name = args[0]
	switch args[1] {
	case "token":
		if err := emptyArgErr(d, "recipient", "the token", args[2]); err != nil {
			return rc, err
		}
		if args[2] == "" {
			return rc, d.Errf("recipient %s: empty token", rc.Name)
		}
		sum := sha256.Sum256([]byte(args[2]))
		rc.TokenSHA256 = hex.EncodeToString(sum[:])
	case "sha256":
		rc.TokenSHA256 = args[2]
	default:
		return rc, d.Errf("recipient %s: expected token or sha256, got %q", rc.Name, args[1])
	}
	if len(args) == 5 {
		if args[3] != "expires" {
			return rc, d.Errf("recipient %s: expected expires, got %q", rc.Name, args[3])
		}
		rc.Expires = args[4]
	}
	return rc, nil
}

func parseSchema(d *caddyfile.Dispenser) (sharing.Schema, error) {
	var sc sharing.Schema
	if err := argNamed(d, &sc.Name, "the schema's name (schema <name> { ... })"); err != nil {
		return sc, err
	}
	return sc, block{
		"namespace": func(d *caddyfile.Dispenser) error {
			args := d.RemainingArgs()
			if len(args) < 2 {
				return argsErr(d, "namespace", "namespace <catalog> <level>...")
			}
			sc.Namespaces = append(sc.Namespaces, sharing.NamespaceRef{Catalog: args[0], Namespace: args[1:]})
			return nil
		},
		"table": func(d *caddyfile.Dispenser) error {
			args := d.RemainingArgs()
			if len(args) < 4 {
				return argsErr(d, "table", "table <name> <catalog> <level>... <table>")
			}
			n := len(args)
			sc.Tables = append(sc.Tables, sharing.TableRef{Name: args[0], Catalog: args[1],
				Namespace: args[2 : n-1], Table: args[n-1]})
			return nil
		},
	}.parse(d, "schema")
}
