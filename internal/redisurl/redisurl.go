// Package redisurl reads lakegate's Redis URLs. One string names a
// standalone Redis, a Redis Cluster or a Sentinel-managed master, so the
// `redis` and `replay_redis` settings need no companion options:
//
//	redis://[user:password@]host:6379/0[?options]      standalone (also rediss://, unix://)
//	redis+cluster://[user:password@]h1:6379,h2:6379[?options]        Redis Cluster (rediss+cluster://: TLS)
//	redis+sentinel://[user:password@]s1:26379,s2:26379/master[/db][?options]  Sentinel (rediss+sentinel://: TLS)
//
// Options are go-redis's own URL query options (dial_timeout,
// pool_size, max_redirects, ...), read by redis.ParseURL,
// redis.ParseClusterURL and redis.ParseFailoverURL.
//
// Errors never quote the URL: it may carry a password.
package redisurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Target is a parsed URL: exactly one of its options is set. Each kind
// keeps go-redis's own options type rather than redis.UniversalOptions,
// which cannot say unix socket and guesses the kind from the number of
// addresses (a cluster URL naming one seed would open a plain client).
type Target struct {
	Simple   *redis.Options
	Cluster  *redis.ClusterOptions
	Failover *redis.FailoverOptions
}

// NewClient opens a client for t (go-redis dials lazily).
func (t Target) NewClient() redis.UniversalClient {
	switch {
	case t.Cluster != nil:
		return redis.NewClusterClient(t.Cluster)
	case t.Failover != nil:
		return redis.NewFailoverClient(t.Failover)
	default:
		return redis.NewClient(t.Simple)
	}
}

// Kind names t's deployment: "standalone", "cluster" or "sentinel".
func (t Target) Kind() string {
	switch {
	case t.Cluster != nil:
		return "cluster"
	case t.Failover != nil:
		return "sentinel"
	default:
		return "standalone"
	}
}

const forms = "redis://host:6379/0, rediss://, unix://, " +
	"redis+cluster://host1:6379,host2:6379 or redis+sentinel://host1:26379,host2:26379/<master-name>"

// Parse reads raw into go-redis options.
func Parse(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, fmt.Errorf("not a Redis URL: want %s", forms)
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "redis", "rediss", "unix":
		return standalone(scheme, rest)
	case "redis+cluster", "rediss+cluster":
		return cluster(strings.TrimSuffix(scheme, "+cluster"), rest)
	case "redis+sentinel", "rediss+sentinel":
		return sentinel(strings.TrimSuffix(scheme, "+sentinel"), rest)
	}
	return Target{}, fmt.Errorf("unknown Redis URL scheme %q: want %s", scheme, forms)
}

// standalone reads a one-host URL with go-redis's ParseURL, its userinfo
// escaped first: net/url reads a userinfo only up to the first "/", and
// refuses braces, so a {file./run/pw} placeholder would not parse.
func standalone(scheme, rest string) (Target, error) {
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = userinfo(rest[:at]).String() + rest[at:]
	}
	raw := scheme + "://" + rest
	o, err := redis.ParseURL(raw)
	if err != nil {
		if strings.Contains(raw, "addr=") {
			// go-redis's own cluster and sentinel URLs add seeds with
			// addr=: here the scheme says which deployment it is.
			return Target{}, fmt.Errorf("%v: a standalone URL names one host; "+
				"for a Redis Cluster write redis+cluster://host1:6379,host2:6379, "+
				"for Sentinel redis+sentinel://host1:26379,host2:26379/<master-name>", bare(err))
		}
		return Target{}, bare(err)
	}
	return Target{Simple: o}, nil
}

// cluster reads the part of a redis+cluster URL after "://" and hands
// go-redis's own form of it (redis://seed1?addr=seed2) to ParseClusterURL.
func cluster(scheme, rest string) (Target, error) {
	p, err := split(rest, "6379")
	if err != nil {
		return Target{}, fmt.Errorf("redis+cluster URL: %w", err)
	}
	if p.path != "" && p.path != "/" && p.path != "/0" {
		return Target{}, errors.New("redis+cluster URL: a Redis Cluster has only database 0; drop the path")
	}
	if err := p.refuse("cluster", map[string]string{
		"addr":             "list every seed in the host part, comma-separated",
		"read_only":        readsFromMasters,
		"route_by_latency": readsFromMasters,
		"route_randomly":   readsFromMasters,
	}); err != nil {
		return Target{}, err
	}
	for _, h := range p.hosts[1:] {
		p.query.Add("addr", h)
	}
	u := url.URL{Scheme: scheme, User: p.user, Host: p.hosts[0], RawQuery: p.query.Encode()}
	o, err := redis.ParseClusterURL(u.String())
	if err != nil {
		return Target{}, fmt.Errorf("redis+cluster URL: %w", bare(err))
	}
	return Target{Cluster: o}, nil
}

// readsFromMasters is why routing reads to replicas is refused: a replica
// lags its master, and a replay record read from one could be missing,
// letting a retried commit apply twice.
const readsFromMasters = "lakegate reads replay records and cache entries from masters only: a replica may lag, and a retried commit could apply twice"

// sentinel reads the part of a redis+sentinel URL after "://" and hands
// go-redis's own form of it to ParseFailoverURL. The userinfo is the
// master's credentials (go-redis's URL gives them to the sentinels); the
// sentinels' own, if they have any, are sentinel_username and
// sentinel_password.
func sentinel(scheme, rest string) (Target, error) {
	p, err := split(rest, "26379")
	if err != nil {
		return Target{}, fmt.Errorf("redis+sentinel URL: %w", err)
	}
	master, db, err := masterAndDB(p.path)
	if err != nil {
		return Target{}, err
	}
	if err := p.refuse("sentinel", map[string]string{
		"addr":                      "list every sentinel in the host part, comma-separated",
		"master_name":               "give the master name as the path: redis+sentinel://host:26379/<master-name>",
		"db":                        "give the database after the master name: /<master-name>/<db>",
		"username":                  "give the master's credentials as the URL's user:password",
		"password":                  "give the master's credentials as the URL's user:password",
		"replica_only":              readsFromMasters,
		"route_by_latency":          readsFromMasters,
		"route_randomly":            readsFromMasters,
		"use_disconnected_replicas": readsFromMasters,
	}); err != nil {
		return Target{}, err
	}
	sentinelUser, sentinelPassword := p.query.Get("sentinel_username"), p.query.Get("sentinel_password")
	p.query.Del("sentinel_username")
	p.query.Del("sentinel_password")
	p.query.Set("master_name", master)
	for _, h := range p.hosts[1:] {
		p.query.Add("addr", h)
	}
	u := url.URL{Scheme: scheme, Host: p.hosts[0], Path: "/" + strconv.Itoa(db), RawQuery: p.query.Encode()}
	o, err := redis.ParseFailoverURL(u.String())
	if err != nil {
		return Target{}, fmt.Errorf("redis+sentinel URL: %w", bare(err))
	}
	if p.user != nil {
		o.Username = p.user.Username()
		o.Password, _ = p.user.Password()
	}
	o.SentinelUsername, o.SentinelPassword = sentinelUser, sentinelPassword
	return Target{Failover: o}, nil
}

// masterAndDB reads a sentinel URL's path: /<master-name>[/<db>].
func masterAndDB(path string) (string, int, error) {
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	if len(segs) == 0 {
		return "", 0, errors.New("redis+sentinel URL names no master: " +
			"write redis+sentinel://host1:26379,host2:26379/<master-name>[/<db>]")
	}
	if len(segs) > 2 {
		return "", 0, errors.New("redis+sentinel URL: the path is /<master-name>[/<db>], nothing more")
	}
	master, err := url.PathUnescape(segs[0])
	if err != nil {
		return "", 0, errors.New("redis+sentinel URL: the master name is badly escaped")
	}
	db := 0
	if len(segs) == 2 {
		if db, err = strconv.Atoi(segs[1]); err != nil || db < 0 {
			return "", 0, fmt.Errorf("redis+sentinel URL: database %q is not a number", segs[1])
		}
	}
	return master, db, nil
}

// parts is a multi-host URL after its "://".
type parts struct {
	user  *url.Userinfo // nil: none
	hosts []string      // host:port, at least one
	path  string
	query url.Values
}

// split takes a multi-host URL apart by hand: net/url reads one host
// only. As secrets.go does, the userinfo ends at the last "@", since a
// password may hold "/", "?" or "@".
func split(rest, defaultPort string) (parts, error) {
	var p parts
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		p.user = userinfo(rest[:at])
		rest = rest[at+1:]
	}
	hostList, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hostList, tail = rest[:i], rest[i:]
	}
	path, rawQuery, _ := strings.Cut(tail, "?")
	p.path = path
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return parts{}, errors.New("bad query string")
	}
	p.query = q
	if hostList == "" {
		return parts{}, errors.New("names no host: list host:port pairs, comma-separated")
	}
	for _, h := range strings.Split(hostList, ",") {
		addr, err := seed(h, defaultPort)
		if err != nil {
			return parts{}, err
		}
		p.hosts = append(p.hosts, addr)
	}
	return p, nil
}

// userinfo reads user[:password], percent-escaped or not (a {env.X}
// placeholder is not escaped until secrets.go resolves it).
func userinfo(s string) *url.Userinfo {
	user, pass, hasPass := strings.Cut(s, ":")
	if u, err := url.PathUnescape(user); err == nil {
		user = u
	}
	if !hasPass {
		return url.User(user)
	}
	if p, err := url.PathUnescape(pass); err == nil {
		pass = p
	}
	return url.UserPassword(user, pass)
}

// seed checks one host[:port] of a host list, adding the default port.
func seed(h, defaultPort string) (string, error) {
	if h == "" {
		return "", errors.New("an empty host in the host list")
	}
	host, port := h, defaultPort
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1 {
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			if !strings.HasSuffix(h, "]") {
				return "", fmt.Errorf("bad host %q: want host:port", h)
			}
			host, port = strings.Trim(h, "[]"), defaultPort
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("bad port in %q", h)
	}
	if host == "" || strings.ContainsAny(host, " /\\[]") {
		return "", fmt.Errorf("bad host %q", h)
	}
	return net.JoinHostPort(host, port), nil
}

// refuse fails on the first query option in bad, saying why.
func (p parts) refuse(kind string, bad map[string]string) error {
	for name, why := range bad {
		if p.query.Has(name) {
			return fmt.Errorf("redis+%s URL: option %s is not accepted: %s", kind, name, why)
		}
	}
	return nil
}

// bare drops the URL net/url quotes in its errors.
func bare(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("bad URL: %w", ue.Err)
	}
	return err
}
