package gateway

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/lakegate/lakegate/duration"
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
//		config_ttl <duration>
//		breaker { failures <n>; timeout <duration>; count_read_500 }
//	}
func parseRemote(d *caddyfile.Dispenser) (*upstream.RemoteConfig, error) {
	cfg := new(upstream.RemoteConfig)
	if err := argNamed(d, &cfg.URL, "the backend's base URL (remote <url> { ... })"); err != nil {
		return nil, err
	}
	dir := caddyfileDir(d)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch opt := d.Val(); opt {
		case "warehouse":
			err = oneArg(d, &cfg.Warehouse)
		case "prefix":
			err = oneArg(d, &cfg.Prefix)
		case "auth":
			err = parseAuth(d, &cfg.Auth)
		case "tls":
			err = parseTLS(d, &cfg.TLS)
			cfg.TLS.CAFile = localPath(dir, cfg.TLS.CAFile)
		case "connect_timeout":
			err = durationArg(d, &cfg.ConnectTimeout)
		case "response_header_timeout":
			err = durationArg(d, &cfg.ResponseHeaderTimeout)
		case "read_timeout":
			err = durationArg(d, &cfg.ReadTimeout)
		case "write_timeout":
			err = durationArg(d, &cfg.WriteTimeout)
		case "config_ttl":
			err = durationArg(d, &cfg.ConfigTTL)
		case "breaker":
			err = parseBreaker(d, &cfg.Breaker)
		default:
			return nil, d.Errf("unknown remote option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func parseAuth(d *caddyfile.Dispenser, a *upstream.Auth) error {
	if !d.NextArg() {
		return argErr(d, "auth", "a mode: none, bearer, passthrough, oauth2 or sigv4", 0)
	}
	a.Mode = d.Val()
	switch a.Mode {
	case upstream.AuthNone, upstream.AuthPassthrough:
		return noMoreArgs(d)
	case upstream.AuthBearer:
		return argNamed(d, &a.Token, "the token (auth bearer <token>)")
	case upstream.AuthOAuth2:
		return parseBlock(d, map[string]*string{
			"token_url": &a.TokenURL, "client_id": &a.ClientID, "client_secret": &a.ClientSecret, "scope": &a.Scope,
		}, oneArg)
	case upstream.AuthSigV4:
		return parseBlock(d, map[string]*string{
			"region": &a.Region, "service": &a.Service, "access_key_id": &a.AccessKeyID,
			"secret_access_key": &a.SecretAccessKey, "session_token": &a.SessionToken,
			"profile": &a.Profile, "credentials": &a.Credentials,
		}, oneArg)
	}
	return d.Errf("unknown auth mode %q (want none, bearer, passthrough, oauth2 or sigv4)", a.Mode)
}

// parseBlock reads a block of `key <value>` lines into the named fields,
// each value read by arg (oneArg for strings, durationArg for durations).
func parseBlock[T any](d *caddyfile.Dispenser, fields map[string]*T, arg func(*caddyfile.Dispenser, *T) error) error {
	if err := noMoreArgs(d); err != nil {
		return err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		dst, ok := fields[d.Val()]
		if !ok {
			return d.Errf("unknown option %q", d.Val())
		}
		if err := arg(d, dst); err != nil {
			return err
		}
	}
	return nil
}

func parseTLS(d *caddyfile.Dispenser, t *upstream.TLS) error {
	if err := noMoreArgs(d); err != nil {
		return err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "insecure_skip_verify":
			t.InsecureSkipVerify = true
			if err := noMoreArgs(d); err != nil {
				return err
			}
		case "ca_file":
			if err := oneArg(d, &t.CAFile); err != nil {
				return err
			}
		default:
			return d.Errf("unknown tls option %q", d.Val())
		}
	}
	return nil
}

func parseBreaker(d *caddyfile.Dispenser, b *upstream.Breaker) error {
	if err := noMoreArgs(d); err != nil {
		return err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "failures":
			var n int
			if err := intArg(d, &n); err != nil {
				return err
			}
			if n < 1 {
				return d.Errf("breaker failures must be at least 1")
			}
			b.Failures = uint32(n)
		case "timeout":
			if err := durationArg(d, &b.Timeout); err != nil {
				return err
			}
		case "count_read_500":
			if err := noMoreArgs(d); err != nil {
				return err
			}
			b.CountRead500 = true
		default:
			return d.Errf("unknown breaker option %q", d.Val())
		}
	}
	return nil
}

// durationArg reads a duration as every Caddy directive does (Go's syntax
// plus days, "1d") into a time.Duration or a duration.Duration (the
// config type of the Caddy-free packages).
func durationArg[D ~int64](d *caddyfile.Dispenser, dst *D) error {
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	v, err := duration.Parse(s)
	if err != nil {
		return d.Errf("%v", err)
	}
	*dst = D(v)
	return nil
}

func intArg(d *caddyfile.Dispenser, dst *int) error {
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := parseInt(s)
	if err != nil {
		return d.Errf("invalid number %q", s)
	}
	*dst = n
	return nil
}

func noMoreArgs(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}
