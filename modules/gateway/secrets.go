package gateway

import (
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Secrets in lakegate's config (backend tokens and client secrets, AWS
// secret keys, the issuer's signing secret, the sharing signing key, Redis
// passwords, secret storage properties) are run-time placeholders,
// {env.NAME} or {file./path}, resolved here in Provision with Caddy's
// replacer. The adapted JSON and the admin API (which shows the config as
// it was loaded) then carry the placeholder; the value lives only in the
// running process. A literal secret is refused: it would be on display.
// Identity's static tokens and client secrets are SHA-256 hashes already
// and stay as they are.

// secrets resolves secret fields; what names the field in errors.
type secrets struct{ repl *caddy.Replacer }

func newSecrets() secrets { return secrets{repl: caddy.NewReplacer()} }

// resolve returns the secret raw stands for ("" stays "").
func (s secrets) resolve(what, raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	if !isPlaceholder(raw) {
		return "", fmt.Errorf("%s must be a placeholder, {env.NAME} or {file./path}, not a literal: "+
			"the adapted JSON and the admin API would show it", what)
	}
	v, err := s.repl.ReplaceOrErr(raw, true, true)
	if err != nil || v == "" {
		return "", fmt.Errorf("%s: %s is unset, empty or unreadable", what, raw)
	}
	return v, nil
}

// resolveIn resolves the secret at *field in place.
func (s secrets) resolveIn(what string, field *string) error {
	v, err := s.resolve(what, *field)
	*field = v
	return err
}

// resolveURL resolves a URL whose password, if it has one, is a
// placeholder (redis://:{env.REDIS_PASSWORD}@host:6379/0), as is a
// Sentinel URL's sentinel_password option; the whole URL may be one
// placeholder too.
func (s secrets) resolveURL(what, raw string) (string, error) {
	if isPlaceholder(raw) {
		return s.resolve(what, raw)
	}
	raw, err := s.resolveUserinfo(what, raw)
	if err != nil {
		return "", err
	}
	return s.resolveQuerySecret(what, raw, "sentinel_password")
}

// resolveUserinfo resolves the password of raw's userinfo.
func (s secrets) resolveUserinfo(what, raw string) (string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw, nil
	}
	// The userinfo ends at the last "@": a placeholder ({file./run/pw}) or
	// a literal password may hold "/", so the host's end is no bound. Redis
	// URLs carry no "@" after the host.
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw, nil
	}
	user, pass, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass || pass == "" {
		return raw, nil
	}
	v, err := s.resolve(what+" password", pass)
	if err != nil {
		return "", err
	}
	if u, uerr := url.PathUnescape(user); uerr == nil {
		user = u
	}
	return scheme + "://" + url.UserPassword(user, v).String() + rest[at:], nil
}

// resolveQuerySecret resolves query option name of raw, if it is there.
// The query starts at the first "?" after the userinfo.
func (s secrets) resolveQuerySecret(what, raw, name string) (string, error) {
	start := strings.LastIndex(raw, "@") + 1
	i := strings.Index(raw[start:], "?")
	if i < 0 {
		return raw, nil
	}
	base, rawQuery := raw[:start+i], raw[start+i+1:]
	q, err := url.ParseQuery(rawQuery)
	if err != nil || !q.Has(name) {
		return raw, nil // a bad query is the URL parser's to report
	}
	v, err := s.resolve(what+" "+name, q.Get(name))
	if err != nil {
		return "", err
	}
	q.Set(name, v)
	return base + "?" + q.Encode(), nil
}

// resolveDSN resolves an embedded catalog's DSN. The whole DSN may be a
// placeholder ({env.LAKEGATE_CATALOG_DSN}); a PostgreSQL URL's password,
// in its userinfo or its password option, must be one, as in a Redis
// URL. A literal password would be on display like any other secret; the
// key=value form has nowhere to put a placeholder, so a password there is
// refused too. SQLite paths hold no secret.
func (s secrets) resolveDSN(database, raw string) (string, error) {
	const what = "embedded dsn"
	if isPlaceholder(raw) {
		return s.resolve(what, raw)
	}
	if database != embedded.Postgres {
		return raw, nil
	}
	if !strings.Contains(raw, "://") {
		if strings.Contains(strings.ToLower(raw), "password=") {
			return "", fmt.Errorf("%s: a password in a key=value DSN would be on display; "+
				"use a postgres:// URL with a placeholder password, or a placeholder for the whole DSN", what)
		}
		return raw, nil
	}
	raw, err := s.resolveUserinfo(what, raw)
	if err != nil {
		return "", err
	}
	return s.resolveQuerySecret(what, raw, "password")
}

// credentialKey reports a property whose value is a credential and so
// must be a placeholder. IsSecretConfigKey hides more than that from
// logs (that errs safe); refusing literals must not: access key ids are
// identifiers and *expires-at* keys are times.
func credentialKey(k string) bool {
	l := strings.ToLower(k)
	return icerest.IsSecretConfigKey(k) && !strings.Contains(l, "access-key-id") && !strings.Contains(l, "expires")
}

// resolveProperties resolves the secret-looking keys of props (storage
// secret keys, session tokens, passwords) in a copy, and any other value
// that is a placeholder. Access key ids are identifiers, not secrets, and
// may stay literal.
func (s secrets) resolveProperties(what string, props map[string]string) (map[string]string, error) {
	if props == nil {
		return nil, nil
	}
	out := maps.Clone(props)
	for k, v := range props {
		// A credential must be a placeholder; any other value may be one
		// (an access key id from the environment).
		if !credentialKey(k) && !isPlaceholder(v) {
			continue
		}
		if err := s.resolveIn(what+" "+k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// isPlaceholder is exactly one {env.NAME} or {file./path}.
func isPlaceholder(s string) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	key := s[1 : len(s)-1]
	if strings.ContainsAny(key, "{}") {
		return false
	}
	name, env := strings.CutPrefix(key, "env.")
	if !env {
		name, _ = strings.CutPrefix(key, "file.")
		if name == key {
			return false
		}
	}
	return name != ""
}

// resolveSecrets resolves every secret of the app's config in place.
func (a *App) resolveSecrets() error {
	s := newSecrets()
	var err error
	if a.Redis, err = s.resolveURL("redis", a.Redis); err != nil {
		return err
	}
	if a.ReplayRedis, err = s.resolveURL("replay_redis", a.ReplayRedis); err != nil {
		return err
	}
	if a.Identity != nil && a.Identity.Issuer != nil {
		if err := s.resolveIn("identity issuer signing_secret", &a.Identity.Issuer.SigningSecret); err != nil {
			return err
		}
	}
	for i := range a.Catalogs {
		if err := a.Catalogs[i].resolveSecrets(s); err != nil {
			return fmt.Errorf("catalog %q: %w", a.Catalogs[i].Name, err)
		}
	}
	return nil
}

func (cc *CatalogConfig) resolveSecrets(s secrets) error {
	if err := cc.resolveStorageSecrets(s); err != nil {
		return err
	}
	if r := cc.Remote; r != nil {
		for what, f := range map[string]*string{
			"remote auth token": &r.Auth.Token, "remote auth client_secret": &r.Auth.ClientSecret,
			"remote auth secret_access_key": &r.Auth.SecretAccessKey, "remote auth session_token": &r.Auth.SessionToken,
		} {
			if err := s.resolveIn(what, f); err != nil {
				return err
			}
		}
	}
	e := cc.Embedded
	if e == nil {
		return nil
	}
	props, err := s.resolveProperties("embedded property", e.Properties)
	if err != nil {
		return err
	}
	// A copy: the embedded pool keys catalogs by this config.
	resolved := *e
	resolved.Properties = withStorageProperties(props, cc.Storage)
	if resolved.DSN, err = s.resolveDSN(e.Database, e.DSN); err != nil {
		return err
	}
	resolved.Auth.Tokens = make([]string, len(e.Auth.Tokens))
	for i, tok := range e.Auth.Tokens {
		if resolved.Auth.Tokens[i], err = s.resolve("embedded auth_token", tok); err != nil {
			return err
		}
	}
	resolved.Auth.Clients = make(map[string]string, len(e.Auth.Clients))
	for id, secret := range e.Auth.Clients {
		if resolved.Auth.Clients[id], err = s.resolve("embedded auth_client "+id+" secret", secret); err != nil {
			return err
		}
	}
	cc.Embedded = &resolved
	return nil
}

// resolveStorageSecrets resolves the storage keys in a copy (the config
// as loaded keeps its placeholders). The access key id is an identifier
// and may be literal; the secret and session token may not.
func (cc *CatalogConfig) resolveStorageSecrets(s secrets) error {
	if cc.Storage == nil || cc.Storage.S3 == nil {
		return nil
	}
	st, s3 := *cc.Storage, *cc.Storage.S3
	if isPlaceholder(s3.AccessKeyID) {
		if err := s.resolveIn("storage s3 access_key_id", &s3.AccessKeyID); err != nil {
			return err
		}
	}
	if err := s.resolveIn("storage s3 secret_access_key", &s3.SecretAccessKey); err != nil {
		return err
	}
	if err := s.resolveIn("storage s3 session_token", &s3.SessionToken); err != nil {
		return err
	}
	st.S3 = &s3
	cc.Storage = &st
	return nil
}

// withStorageProperties gives an embedded catalog the catalog's storage
// (endpoint, region, path style, keys) as its FileIO properties, where
// its own properties do not set them: one place for the keys. The
// gateway strips them from every answer of a catalog with storage.
func withStorageProperties(props map[string]string, st *storage.Config) map[string]string {
	if st == nil || st.S3 == nil {
		return props
	}
	s3 := st.S3
	out := maps.Clone(props)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range map[string]string{
		"s3.endpoint": s3.Endpoint, "s3.region": s3.Region, "s3.access-key-id": s3.AccessKeyID,
		"s3.secret-access-key": s3.SecretAccessKey, "s3.session-token": s3.SessionToken,
	} {
		if _, set := out[k]; !set && v != "" {
			out[k] = v
		}
	}
	if _, set := out["s3.path-style-access"]; !set && s3.PathStyle {
		out["s3.path-style-access"] = "true"
	}
	return out
}
