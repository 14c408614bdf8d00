package gateway

import (
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/policies"
)

// identityGrammar is the app's
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
func identityGrammar(cfg *IdentityConfig) block {
	return block{
		"required": on(&cfg.Required),
		"jwt": func(d *caddyfile.Dispenser) error {
			jc := new(identity.JWTConfig)
			if err := sub(jwtGrammar(jc), "jwt")(d); err != nil {
				return err
			}
			cfg.JWT = append(cfg.JWT, *jc)
			return nil
		},
		"token": func(d *caddyfile.Dispenser) error {
			args := d.RemainingArgs()
			if len(args) < 2 {
				return d.ArgErr()
			}
			cfg.Tokens = append(cfg.Tokens, identity.StaticToken{ID: args[0], SHA256: args[1], Groups: args[2:]})
			return nil
		},
		"issuer": fresh(&cfg.Issuer, "issuer", issuerGrammar),
	}
}

func jwtGrammar(jc *identity.JWTConfig) block {
	return block{
		"jwks_url": str(&jc.JWKSURL),
		"issuer":   str(&jc.Issuer),
		"discover": on(&jc.Discover),
		"static_jwks_file": func(d *caddyfile.Dispenser) error {
			dir := caddyfileDir(d)
			var path string
			if err := oneArg(d, &path); err != nil {
				return err
			}
			// Read at adapt time; relative, the Caddyfile's neighbour.
			b, err := os.ReadFile(localPath(dir, path))
			if err != nil {
				return d.Errf("static_jwks_file: %v", err)
			}
			jc.StaticJWKS = string(b)
			return nil
		},
		"audience":         str(&jc.Audience),
		"leeway":           dur(&jc.Leeway),
		"subject_claim":    str(&jc.SubjectClaim),
		"groups_claim":     str(&jc.GroupsClaim),
		"refresh_interval": dur(&jc.RefreshInterval),
	}
}

func issuerGrammar(ic *identity.IssuerConfig) block {
	return block{
		"issuer":         str(&ic.Issuer),
		"audience":       str(&ic.Audience),
		"ttl":            dur(&ic.TTL),
		"signing_secret": str(&ic.SigningSecret),
		"client":         issuerClient(ic),
		"client_secret":  issuerClient(ic),
	}
}

// issuerClient reads `client <id> <bcrypt-hash|secret-sha256-hex> [<group>...]`
// and `client_secret <id> <secret> [<group>...]`.
func issuerClient(ic *identity.IssuerConfig) setter {
	return func(d *caddyfile.Dispenser) error {
		opt := d.Val()
		args := d.RemainingArgs()
		if len(args) < 2 {
			return d.ArgErr()
		}
		c := identity.Client{ID: args[0], Groups: args[2:]}
		switch {
		case opt == "client_secret":
			// Hashed here, salted and slow: /config/ shows only the hash.
			var err error
			if c.SecretBcrypt, err = identity.HashSecretBcrypt(args[1]); err != nil {
				return d.Errf("client_secret %s: %v", c.ID, err)
			}
		case strings.HasPrefix(args[1], "$2"): // a bcrypt hash; checked at provision
			c.SecretBcrypt = args[1]
		default: // hex SHA-256, deprecated (a warning at provision)
			c.SecretSHA256 = args[1]
		}
		ic.Clients = append(ic.Clients, c)
		return nil
	}
}

// parsePolicy parses `policy { dir <dir>; package <pkg>; timeout <d>; reload_interval <d> }`.
func parsePolicy(d *caddyfile.Dispenser) (*policies.Config, error) {
	pc := new(policies.Config)
	err := sub(block{
		"dir":             str(&pc.Dir),
		"package":         str(&pc.Package),
		"timeout":         dur(&pc.Timeout),
		"reload_interval": dur(&pc.ReloadInterval),
	}, "policy")(d)
	if err != nil {
		return nil, err
	}
	if pc.Package == "" {
		return nil, d.Err("policy needs a package (e.g. lakegate.roles)")
	}
	return pc, nil
}
