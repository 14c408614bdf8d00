// Package storage is what lakegate does with a catalog's object storage
// on its clients' behalf (docs/storage.md): the storage credentials only
// the gateway holds, and remote signing, where a client with no storage
// keys of its own asks the gateway to sign each S3 request and the
// gateway signs only requests for files inside the table the client may
// read or write. It knows no Caddy and no policy: the Iceberg door asks
// the policy and hands this package the table's locations.
package storage

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/lakegate/lakegate/duration"
)

// Config is a catalog's storage: where its tables' files live and the
// credentials the gateway reaches them with.
type Config struct {
	// S3 is an S3 or S3-compatible object store (required).
	S3 *S3Config `json:"s3,omitempty"`
	// RemoteSigning answers X-Iceberg-Access-Delegation: remote-signing
	// on loadTable and createTable with the signer's address instead of
	// keys, and signs (signRequest) the S3 requests the policy allows for
	// files inside the table (default false).
	RemoteSigning bool `json:"remote_signing,omitempty"`
	// DecisionTTL is how long a signing decision (a principal, a table
	// and read or write access, with the table's locations) is reused
	// before the policy and the catalog are asked again (default 30s; at
	// most 10m). Vended credentials are reused as long, so a client is
	// never handed keys with less than 5 of their 15 minutes or more left.
	DecisionTTL duration.Duration `json:"decision_ttl,omitempty"`
	// VendedCredentials answers X-Iceberg-Access-Delegation:
	// vended-credentials on loadTable and createTable, and loadCredentials,
	// with temporary keys from STS AssumeRole scoped to the table's
	// locations, read-only unless the policy lets the principal write the
	// table's files (default: none vended).
	VendedCredentials *VendConfig `json:"vended_credentials,omitempty"`
}

// S3Config is an S3 or S3-compatible endpoint and the gateway's keys for
// it.
type S3Config struct {
	// Endpoint is an S3-compatible endpoint's base URL, http(s)://host[:port]
	// with no path (default: AWS S3 in Region).
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the region requests are signed for (required).
	Region string `json:"region,omitempty"`
	// PathStyle addresses buckets as endpoint/bucket/key rather than
	// bucket.endpoint/key (default false; S3-compatible stores usually
	// want it).
	PathStyle bool `json:"path_style,omitempty"`
	// AccessKeyID is the gateway's access key id (required); a
	// placeholder such as {env.AWS_ACCESS_KEY_ID} or literal.
	AccessKeyID string `json:"access_key_id,omitempty"`
	// SecretAccessKey is the gateway's secret key (required): a run-time
	// placeholder, {env.AWS_SECRET_ACCESS_KEY} or {file./path}, never a
	// literal.
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	// SessionToken is the session token of temporary keys, a placeholder
	// (default: none).
	SessionToken string `json:"session_token,omitempty"`
}

// Decision TTL bounds.
const (
	DefaultDecisionTTL = 30 * time.Second
	MaxDecisionTTL     = 10 * time.Minute
)

// TTL is the decision lifetime in effect.
func (c *Config) TTL() time.Duration {
	if c.DecisionTTL <= 0 {
		return DefaultDecisionTTL
	}
	return c.DecisionTTL.D()
}

// Check validates c as configured (secrets may still be placeholders).
func (c *Config) Check() error {
	if c.S3 == nil {
		return errors.New("storage: needs an s3 block (the only kind of storage so far)")
	}
	if c.DecisionTTL < 0 || c.DecisionTTL.D() > MaxDecisionTTL {
		return fmt.Errorf("storage: decision_ttl %s is out of range (0 to %s)", c.DecisionTTL, MaxDecisionTTL)
	}
	if err := c.S3.check(); err != nil {
		return err
	}
	if c.VendedCredentials != nil {
		return c.VendedCredentials.check()
	}
	return nil
}

func (s *S3Config) check() error {
	if s.Region == "" {
		return errors.New("storage s3: region is required (requests are signed for it)")
	}
	if s.AccessKeyID == "" || s.SecretAccessKey == "" {
		return errors.New("storage s3: access_key_id and secret_access_key are required")
	}
	if s.Endpoint == "" {
		return nil
	}
	_, err := parseEndpoint(s.Endpoint)
	return err
}

// parseEndpoint reads an endpoint base URL: a scheme, a host, nothing
// else.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("storage s3: endpoint %q must be http(s)://host[:port] with no path, user or query", raw)
	}
	u.Host = strings.ToLower(u.Host)
	u.Path = ""
	return u, nil
}
