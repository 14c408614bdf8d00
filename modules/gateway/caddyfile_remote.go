package gateway

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/lakegate/lakegate/upstream"
)

// parseRemote parses a remote backend:
//
//	remote <base-url> {
//		warehouse <upstream warehouse>
//		prefix <upstream prefix>
//		auth none | passthrough | bearer <token>
//		auth oauth2 { token_url <url>; client_id <id>; client_secret <secret>; scope <scope> }
//		auth sigv4 { region <r>; service glue|s3tables; access_key_id <id>; secret_access_key <s>; session_token <t>;
//		             profile <shared config profile>; credentials default_chain }
//		tls { insecure_skip_verify; ca_file <path> }
//		connect_timeout <duration>
//		response_header_timeout <duration>
//		read_timeout <duration>
//		write_timeout <duration>
//		config_ttl <duration>
//		breaker { failures <n>; timeout <duration>; count_read_500 }
//	}
func parseRemote(d *caddyfile.Dispenser) (*upstream.RemoteConfig, error) {
	cfg := new(upstream.RemoteConfig)
	if err := argNamed(d, &cfg.URL, "the backend's base URL (remote <url> { ... })"); err != nil {
		return nil, err
	}
	dir := caddyfileDir(d)
	err := block{
		"warehouse": str(&cfg.Warehouse),
		"prefix":    str(&cfg.Prefix),
		"auth":      auth(&cfg.Auth),
		"tls": func(d *caddyfile.Dispenser) error {
			err := sub(tlsGrammar(&cfg.TLS), "tls")(d)
			cfg.TLS.CAFile = localPath(dir, cfg.TLS.CAFile)
			return err
		},
		"connect_timeout":         dur(&cfg.ConnectTimeout),
		"response_header_timeout": dur(&cfg.ResponseHeaderTimeout),
		"read_timeout":            dur(&cfg.ReadTimeout),
		"write_timeout":           dur(&cfg.WriteTimeout),
		"config_ttl":              dur(&cfg.ConfigTTL),
		"breaker":                 sub(breakerGrammar(&cfg.Breaker), "breaker"),
	}.parse(d, "remote")
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// authModes lists auth's modes in errors.
const authModes = "none, bearer, passthrough, oauth2 or sigv4"

// auth reads `auth <mode> ...`: each mode reads the rest of the option.
func auth(a *upstream.Auth) setter {
	modes := block{
		upstream.AuthNone:        bare,
		upstream.AuthPassthrough: bare,
		upstream.AuthBearer:      named(&a.Token, "the token (auth bearer <token>)"),
		upstream.AuthOAuth2: sub(block{
			"token_url":     str(&a.TokenURL),
			"client_id":     str(&a.ClientID),
			"client_secret": str(&a.ClientSecret),
			"scope":         str(&a.Scope),
		}, "oauth2"),
		upstream.AuthSigV4: sub(block{
			"region":            str(&a.Region),
			"service":           str(&a.Service),
			"access_key_id":     str(&a.AccessKeyID),
			"secret_access_key": str(&a.SecretAccessKey),
			"session_token":     str(&a.SessionToken),
			"profile":           str(&a.Profile),
			"credentials":       str(&a.Credentials),
		}, "sigv4"),
	}
	return func(d *caddyfile.Dispenser) error {
		return modes.choose(d, "auth mode", authModes, &a.Mode)
	}
}

// tlsGrammar is a remote's `tls { insecure_skip_verify; ca_file <path> }`.
func tlsGrammar(t *upstream.TLS) block {
	return block{
		"insecure_skip_verify": on(&t.InsecureSkipVerify),
		"ca_file":              str(&t.CAFile),
	}
}

// breakerGrammar is a remote's `breaker { failures <n>; timeout <d>; count_read_500 }`.
func breakerGrammar(b *upstream.Breaker) block {
	return block{
		"failures": func(d *caddyfile.Dispenser) error {
			var n int
			if err := intArg(d, &n); err != nil {
				return err
			}
			if n < 1 {
				return d.Errf("breaker failures must be at least 1")
			}
			b.Failures = uint32(n)
			return nil
		},
		"timeout":        dur(&b.Timeout),
		"count_read_500": on(&b.CountRead500),
	}
}
