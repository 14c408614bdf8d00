package storage

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Signer signs S3 requests with a catalog's credentials. It holds the
// secret: nothing it returns carries it (a SigV4 signature does not
// reveal the key).
type Signer struct {
	region   string
	endpoint *url.URL
	hosts    []string // the endpoint's host names, path-style and virtual-hosted bases
	creds    aws.CredentialsProvider
	v4       *v4.Signer
}

// NewSigner builds the signer of cfg, whose secrets are resolved.
func NewSigner(cfg S3Config) (*Signer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Signer{
		region: cfg.Region, v4: v4.NewSigner(),
		creds: credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken),
	}
	if cfg.Endpoint != "" {
		u, err := parseEndpoint(cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		s.endpoint, s.hosts = u, []string{u.Host}
	} else {
		s.endpoint = &url.URL{Scheme: "https", Host: "s3." + cfg.Region + ".amazonaws.com"}
		s.hosts = []string{s.endpoint.Host, "s3.amazonaws.com"}
	}
	return s, nil
}

// SignResult is the spec's RemoteSignResult.
type SignResult struct {
	URI     string              `json:"uri"`
	Headers map[string][]string `json:"headers"`
}

// Headers a client may not choose: the signer sets them.
var signerOwned = map[string]bool{
	"Authorization": true, "X-Amz-Date": true, "X-Amz-Security-Token": true, "Host": true,
}

// Sign signs t (a Target this Signer read, already checked Inside its
// table) with the client's headers, for the configured region.
func (s *Signer) Sign(ctx context.Context, t Target, headers map[string][]string) (SignResult, error) {
	h := http.Header{}
	for name, vs := range headers {
		c := http.CanonicalHeaderKey(name)
		if signerOwned[c] {
			continue
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") || strings.ContainsAny(name, " \t\r\n:") {
				return SignResult{}, refuse("header %q is malformed", name)
			}
			h.Add(c, v)
		}
	}
	hash, err := payloadHash(t, h.Values("X-Amz-Content-Sha256"))
	if err != nil {
		return SignResult{}, err
	}
	h.Set("X-Amz-Content-Sha256", hash)
	req := &http.Request{Method: t.Method, URL: t.URL, Host: t.URL.Host, Header: h}
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return SignResult{}, err
	}
	// S3 signs the path as sent: no second escaping.
	if err := s.v4.SignHTTP(ctx, creds, req, hash, "s3", s.region, time.Now(),
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }); err != nil {
		return SignResult{}, err
	}
	return SignResult{URI: t.URL.String(), Headers: req.Header}, nil
}

// payloadHash is the x-amz-content-sha256 to sign: the client's (a hex
// SHA-256 or UNSIGNED-PAYLOAD), else UNSIGNED-PAYLOAD; for DeleteObjects
// the hash of the body whose keys were checked, so S3 refuses any other.
func payloadHash(t Target, sent []string) (string, error) {
	if len(sent) > 1 {
		return "", refuse("x-amz-content-sha256 is repeated")
	}
	if t.payloadHash != "" {
		if len(sent) == 1 && sent[0] != t.payloadHash {
			return "", refuse("x-amz-content-sha256 is not the hash of the body sent to be checked")
		}
		return t.payloadHash, nil
	}
	if len(sent) == 0 {
		return "UNSIGNED-PAYLOAD", nil
	}
	v := sent[0]
	if v == "UNSIGNED-PAYLOAD" || isHexSHA256(v) {
		return v, nil
	}
	return "", refuse("x-amz-content-sha256 %q is neither a SHA-256 nor UNSIGNED-PAYLOAD", v)
}

func isHexSHA256(v string) bool {
	if len(v) != 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
