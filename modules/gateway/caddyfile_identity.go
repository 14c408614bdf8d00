package gateway

import (
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
)

// parseIdentity parses:
//
//	identity {
//		required
//		jwt { jwks_url <url>; issuer <iss>; discover; static_jwks_file <path>; audience <aud>;
//		      leeway <d>; subject_claim <c>; groups_claim <c>; refresh_interval <d> }
//		token <id> <sha256-hex> [<group>...]
//		issuer { issuer <iss>; audience <aud>; ttl <d>; signing_secret <s>;
//		         client <id> <bcrypt-hash|secret-sha256-hex> [<group>...]
//		         client_secret <id> <secret> [<group>...] }   # bcrypt here: JSON holds only the hash
//	}
func parseIdentity(d *caddyfile.Dispenser) (*IdentityConfig, error) {
	cfg := new(IdentityConfig)
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "required":
			cfg.Required = true
			if err := noMoreArgs(d); err != nil {
				return nil, err
			}
		case "jwt":
			jc, err := parseJWT(d)
			if err != nil {
				return nil, err
			}
			cfg.JWT = append(cfg.JWT, *jc)
		case "token":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return nil, d.ArgErr()
			}
			cfg.Tokens = append(cfg.Tokens, identity.StaticToken{ID: args[0], SHA256: args[1], Groups: args[2:]})
		case "issuer":
			ic, err := parseIssuer(d)
			if err != nil {
				return nil, err
			}
			cfg.Issuer = ic
		default:
			return nil, d.Errf("unknown identity option %q", d.Val())
		}
	}
	return cfg, nil
}

func parseJWT(d *caddyfile.Dispenser) (*identity.JWTConfig, error) {
	jc := new(identity.JWTConfig)
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch opt := d.Val(); opt {
		case "jwks_url":
			err = oneArg(d, &jc.JWKSURL)
		case "issuer":
			err = oneArg(d, &jc.Issuer)
		case "discover":
			jc.Discover = true
			err = noMoreArgs(d)
		case "static_jwks_file":
			var path string
			if err = oneArg(d, &path); err == nil {
				var b []byte
				if b, err = os.ReadFile(path); err != nil {
					return nil, d.Errf("static_jwks_file: %v", err)
				}
				jc.StaticJWKS = string(b)
			}
		case "audience":
			err = oneArg(d, &jc.Audience)
		case "leeway":
			err = durationArg(d, &jc.Leeway)
		case "subject_claim":
			err = oneArg(d, &jc.SubjectClaim)
		case "groups_claim":
			err = oneArg(d, &jc.GroupsClaim)
		case "refresh_interval":
			err = durationArg(d, &jc.RefreshInterval)
		default:
			return nil, d.Errf("unknown jwt option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	return jc, nil
}

func parseIssuer(d *caddyfile.Dispenser) (*identity.IssuerConfig, error) {
	ic := new(identity.IssuerConfig)
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch opt := d.Val(); opt {
		case "issuer":
			err = oneArg(d, &ic.Issuer)
		case "audience":
			err = oneArg(d, &ic.Audience)
		case "ttl":
			err = durationArg(d, &ic.TTL)
		case "signing_secret":
			err = oneArg(d, &ic.SigningSecret)
		case "client", "client_secret":
			args := d.RemainingArgs()
			if len(args) < 2 {
				return nil, d.ArgErr()
			}
			c := identity.Client{ID: args[0], Groups: args[2:]}
			switch {
			case opt == "client_secret":
				// Hashed here, salted and slow: /config/ shows only the hash.
				if c.SecretBcrypt, err = identity.HashSecretBcrypt(args[1]); err != nil {
					return nil, d.Errf("client_secret %s: %v", c.ID, err)
				}
			case strings.HasPrefix(args[1], "$2"): // a bcrypt hash; checked at provision
				c.SecretBcrypt = args[1]
			default: // hex SHA-256, deprecated (a warning at provision)
				c.SecretSHA256 = args[1]
			}
			ic.Clients = append(ic.Clients, c)
		default:
			return nil, d.Errf("unknown issuer option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	return ic, nil
}

// parsePolicy parses `policy { dir <dir>; package <pkg>; timeout <d>; reload_interval <d> }`.
func parsePolicy(d *caddyfile.Dispenser) (*policies.Config, error) {
	pc := new(policies.Config)
	if err := noMoreArgs(d); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch opt := d.Val(); opt {
		case "dir":
			err = oneArg(d, &pc.Dir)
		case "package":
			err = oneArg(d, &pc.Package)
		case "timeout":
			err = durationArg(d, &pc.Timeout)
		case "reload_interval":
			err = durationArg(d, &pc.ReloadInterval)
		default:
			return nil, d.Errf("unknown policy option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	if pc.Package == "" {
		return nil, d.Err("policy needs a package (e.g. lakegate.roles)")
	}
	return pc, nil
}
