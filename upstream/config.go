// Package upstream talks to backend catalogs: an Iceberg REST client side
// per backend (auth, TLS, timeouts, circuit breaker, safe retries) behind
// one small Backend interface that the gateway's front doors use.
package upstream

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// Backend is one backend catalog as the gateway sees it.
type Backend interface {
	// Config returns the backend's own /v1/config (cached).
	Config(ctx context.Context) (*CatalogConfig, error)
	// Serve forwards the parsed request to the backend and writes the
	// backend's answer (or a gateway-made Iceberg error) to w.
	Serve(w http.ResponseWriter, r *http.Request, q icerest.Request)
}

// CatalogConfig is a backend's /v1/config answer.
type CatalogConfig struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints,omitempty"`
	// IdempotencyKeyLifetime is set by a backend that dedupes
	// Idempotency-Keys itself (ISO-8601, e.g. PT30M).
	IdempotencyKeyLifetime string `json:"idempotency-key-lifetime,omitempty"`
}

// KeyLifetime is how long the backend keeps Idempotency-Keys; false when
// it advertises none (or nothing lakegate can read).
func (c *CatalogConfig) KeyLifetime() (time.Duration, bool) {
	d, err := ParseISODuration(c.IdempotencyKeyLifetime)
	return d, err == nil && d > 0
}

// ParseISODuration reads the time part of an ISO-8601 duration as the
// spec uses it: PT30M, PT1H30M, PT45S, PT0.5S, P1D, P1DT2H.
func ParseISODuration(s string) (time.Duration, error) {
	rest, ok := strings.CutPrefix(strings.ToUpper(s), "P")
	if !ok || rest == "" {
		return 0, fmt.Errorf("not an ISO-8601 duration: %q", s)
	}
	var total time.Duration
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			inTime, rest = true, rest[1:]
			continue
		}
		i := strings.IndexAny(rest, "DHMS")
		if i <= 0 {
			return 0, fmt.Errorf("not an ISO-8601 duration: %q", s)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not an ISO-8601 duration: %q", s)
		}
		unit := map[byte]time.Duration{'D': 24 * time.Hour, 'H': time.Hour, 'M': time.Minute, 'S': time.Second}[rest[i]]
		if (rest[i] == 'D') == inTime {
			return 0, fmt.Errorf("not an ISO-8601 duration: %q", s)
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	return total, nil
}

// Prefix is the backend's {prefix} ("" when it uses none). Nessie and
// Gravitino send it in defaults, most others in overrides.
func (c *CatalogConfig) Prefix() string {
	if p := c.Overrides["prefix"]; p != "" {
		return p
	}
	return c.Defaults["prefix"]
}

// Unlisted tells whether op is a write the backend's /v1/config says it
// does not serve: the backend lists endpoints and op's is not among them.
// Such a write is refused before it is sent, as the spec's clients refuse
// it themselves: a backend reached anyway answers from its router (Unity
// Catalog's read-only endpoint: a text 405, or a 404 that a client takes
// for "no such namespace" or "no such table"). Reads are sent all the
// same (a listing may leave out what the backend still serves, as Unity
// Catalog's HEAD of a namespace), and a backend that lists no endpoints
// (Nessie) serves the spec's defaults.
func (c *CatalogConfig) Unlisted(op string) bool {
	if len(c.Endpoints) == 0 || !icerest.IsMutation(op) {
		return false
	}
	return !slices.Contains(c.Endpoints, icerest.Endpoints[op])
}

// Separator is the backend's namespace separator, escaped as in config
// (default "%1F").
func (c *CatalogConfig) Separator() string {
	if s := c.Overrides["namespace-separator"]; s != "" {
		return s
	}
	if s := c.Defaults["namespace-separator"]; s != "" {
		return s
	}
	return "%1F"
}

// RemoteConfig configures a remote Iceberg REST backend.
type RemoteConfig struct {
	// URL is the backend's base URL, without /v1 (required).
	URL string `json:"url"`
	// Warehouse is sent to the backend as /v1/config?warehouse= (default:
	// none sent).
	Warehouse string `json:"warehouse,omitempty"`
	// Prefix overrides the prefix the backend's /v1/config returns
	// (default: the backend's own).
	Prefix string `json:"prefix,omitempty"`
	// Auth is how lakegate authenticates to the backend (default: none).
	Auth Auth `json:"auth,omitzero"`
	// TLS configures the connection (default: system roots, verified).
	TLS TLS `json:"tls,omitzero"`
	// ConnectTimeout bounds dialing (default 5s).
	ConnectTimeout duration.Duration `json:"connect_timeout,omitempty"`
	// ResponseHeaderTimeout bounds the wait for the backend's response
	// headers once the request is sent (default 60s).
	ResponseHeaderTimeout duration.Duration `json:"response_header_timeout,omitempty"`
	// ReadTimeout bounds a whole read (loads, lists, exists), /v1/config
	// fetch included (default 10s): a hung backend fails fast, and with the
	// cache on a stale copy is answered once it passes.
	ReadTimeout duration.Duration `json:"read_timeout,omitempty"`
	// WriteTimeout bounds a whole write, and scan planning (default 60s). A
	// write that runs out of time may have been applied:
	// CommitStateUnknownException.
	WriteTimeout duration.Duration `json:"write_timeout,omitempty"`
	// Breaker is the backend's circuit breaker (default: 5 failures, 10s open).
	Breaker Breaker `json:"breaker,omitzero"`
	// ConfigTTL is how long the backend's /v1/config is cached (default 5m).
	ConfigTTL duration.Duration `json:"config_ttl,omitempty"`
}

// Auth modes.
const (
	AuthNone        = "none"
	AuthBearer      = "bearer"
	AuthPassthrough = "passthrough"
	AuthOAuth2      = "oauth2"
	AuthSigV4       = "sigv4"
)

// Auth is how lakegate authenticates to the backend.
type Auth struct {
	// Mode is none (the default), bearer, passthrough (the client's own
	// Authorization header), oauth2 (client credentials) or sigv4.
	Mode string `json:"mode,omitempty"`
	// Token is the static bearer token (bearer mode, required there). Secrets
	// here and below may be {env.X} or {file./path} placeholders.
	Token string `json:"token,omitempty"`

	// OAuth2 client credentials (oauth2 mode).

	// TokenURL is where oauth2 mode gets its tokens (default
	// <url>/v1/oauth/tokens).
	TokenURL string `json:"token_url,omitempty"`
	// ClientID is the OAuth2 client id (oauth2 mode, required there).
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is the OAuth2 client secret (oauth2 mode, required
	// there).
	ClientSecret string `json:"client_secret,omitempty"`
	// Scope is the OAuth2 scope requested with the token (default: none
	// sent).
	Scope string `json:"scope,omitempty"`

	// SigV4 (AWS Glue / S3 Tables).

	// Region is the AWS region requests are signed for (sigv4 mode,
	// required there).
	Region string `json:"region,omitempty"`
	// Service is the AWS service requests are signed for: glue or
	// s3tables (sigv4 mode, required there).
	Service string `json:"service,omitempty"`
	// AccessKeyID is the AWS access key to sign with (default: none).
	// Without keys, credentials come from the environment
	// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
	// AWS_PROFILE, web identity, ECS container variables) or the shared
	// AWS config files, never from the EC2 instance metadata service
	// (IMDS) unless Credentials is "default_chain"; with none found, the
	// backend fails to load.
	AccessKeyID string `json:"access_key_id,omitempty"`
	// SecretAccessKey is the AWS secret key (required with AccessKeyID).
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	// SessionToken is the AWS session token of temporary keys (default:
	// none).
	SessionToken string `json:"session_token,omitempty"`
	// Profile is a profile of the shared AWS config files to take
	// credentials from (default: AWS_PROFILE, else "default").
	Profile string `json:"profile,omitempty"`
	// Credentials "default_chain" opts in to the AWS SDK's whole default
	// credential chain, the EC2 instance role through IMDS included
	// (default: "", the chain without IMDS, as AccessKeyID says).
	Credentials string `json:"credentials,omitempty"`
}

// AWSDefaultChain is the Auth.Credentials value that lets SigV4 ask the
// EC2 instance metadata service for the instance role's credentials.
const AWSDefaultChain = "default_chain"

// TLS options for the connection to the backend.
type TLS struct {
	// InsecureSkipVerify skips verifying the backend's certificate
	// (default false; for tests only).
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// CAFile is a PEM bundle to verify the backend with instead of the
	// system roots (default: system roots).
	CAFile string `json:"ca_file,omitempty"`
}

// Breaker configures the backend's circuit breaker.
type Breaker struct {
	// Failures is the number of consecutive failures that opens it
	// (default 5).
	Failures uint32 `json:"failures,omitempty"`
	// Timeout is how long it stays open before letting a probe through
	// (default 10s).
	Timeout duration.Duration `json:"timeout,omitempty"`
	// CountRead500 counts a backend's 500 answers to reads as failures
	// (default false). Connection errors, timeouts and 502/503/504 always
	// count; a 500 to a write never does: it is the backend's answer to
	// that request, often to bad input, not a sign it is down.
	CountRead500 bool `json:"count_read_500,omitempty"`
}
