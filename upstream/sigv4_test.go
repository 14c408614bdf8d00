package upstream_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

const (
	testAKID   = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testToken  = "tok"
)

// sigv4Endpoint stands in for an AWS Iceberg REST endpoint (Glue or S3
// Tables): it answers only requests whose SigV4 signature it can
// reproduce with aws-sdk-go-v2's signer, and 403 otherwise, as AWS does.
type sigv4Endpoint struct {
	service, region, prefix string

	mu      sync.Mutex
	secrets map[string]string // access key id → secret
	seen    []string          // "METHOD escaped-path?query" of accepted requests
	bodies  []string

	accepted, rejected atomic.Int32
	lastErr            atomic.Value
	srv                *httptest.Server
}

func newSigV4Endpoint(t *testing.T, service, prefix string) *sigv4Endpoint {
	t.Helper()
	e := &sigv4Endpoint{service: service, region: "us-east-1", prefix: prefix,
		secrets: map[string]string{testAKID: testSecret}}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *sigv4Endpoint) setSecret(secret string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets[testAKID] = secret
}

func (e *sigv4Endpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := e.verify(r, body); err != nil {
		e.rejected.Add(1)
		e.lastErr.Store(err.Error())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		_, _ = fmt.Fprintf(w, `{"message":"The request signature we calculated does not match the signature you provided."}`)
		return
	}
	e.accepted.Add(1)
	e.mu.Lock()
	e.seen = append(e.seen, r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery)
	e.bodies = append(e.bodies, string(body))
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/v1/config") {
		_, _ = fmt.Fprintf(w, `{"defaults":{},"overrides":{"prefix":%q}}`, e.prefix)
		return
	}
	_, _ = io.WriteString(w, tableOKBody)
}

// verify recomputes the request's signature from its method, URL, body
// and the headers it says it signed, and compares.
func (e *sigv4Endpoint) verify(r *http.Request, body []byte) error {
	rest, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
	if !ok {
		return errors.New("no AWS4-HMAC-SHA256 Authorization")
	}
	fields := parseAuthz(rest)
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[2] != e.region || cred[3] != e.service || cred[4] != "aws4_request" {
		return fmt.Errorf("bad credential scope %q", fields["Credential"])
	}
	e.mu.Lock()
	secret, known := e.secrets[cred[0]]
	e.mu.Unlock()
	if !known {
		return fmt.Errorf("unknown access key %q", cred[0])
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date: %v", err)
	}
	if cred[1] != when.Format("20060102") {
		return errors.New("credential date differs from X-Amz-Date")
	}
	if d := time.Since(when); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("request time too skewed")
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != testToken {
		return fmt.Errorf("session token %q", got)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hash {
		return errors.New("payload hash does not match the body")
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	for _, must := range []string{"host", "x-amz-date", "x-amz-security-token"} {
		if !slices.Contains(signed, must) {
			return fmt.Errorf("%s is not signed", must)
		}
	}
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range signed {
		if h == "host" || h == "content-length" {
			continue // the signer takes these from the request itself
		}
		req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
	}
	err = v4.NewSigner().SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: cred[0], SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token")},
		req, hash, e.service, e.region, when)
	if err != nil {
		return err
	}
	want := parseAuthz(strings.TrimPrefix(req.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "))
	if want["SignedHeaders"] != fields["SignedHeaders"] {
		return fmt.Errorf("signed headers %q, recomputed %q", fields["SignedHeaders"], want["SignedHeaders"])
	}
	if want["Signature"] != fields["Signature"] {
		return errors.New("signature mismatch")
	}
	return nil
}

func parseAuthz(s string) map[string]string {
	m := map[string]string{}
	for f := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		m[k] = v
	}
	return m
}

func TestSigV4SignatureVerifies(t *testing.T) {
	t.Parallel()
	for _, svc := range []struct{ service, warehouse, prefix string }{
		{"glue", "123456789012", "catalogs/123456789012"},
		{"s3tables", "arn:aws:s3tables:us-east-1:111122223333:bucket/lake",
			"arn%3Aaws%3As3tables%3Aus-east-1%3A111122223333%3Abucket%2Flake"},
	} {
		t.Run(svc.service, func(t *testing.T) {
			t.Parallel()
			ep := newSigV4Endpoint(t, svc.service, svc.prefix)
			auth := func(secret string) func(*upstream.RemoteConfig) {
				return func(c *upstream.RemoteConfig) {
					c.Warehouse = svc.warehouse
					c.Auth = upstream.Auth{Mode: upstream.AuthSigV4, Region: "us-east-1", Service: svc.service,
						AccessKeyID: testAKID, SecretAccessKey: secret, SessionToken: testToken}
				}
			}
			gw := gateway(t, ep.srv.URL+"/iceberg", auth(testSecret))
			reqs := []struct{ method, path, body string }{
				{"GET", "/v1/config?warehouse=" + svc.warehouse, ""},
				{"GET", "/v1/config", ""},
				{"GET", "/v1/gw/namespaces/db/tables/t", ""},
				{"GET", "/v1/gw/namespaces/a%20b%1Fc%2Fd/tables/t%3A1?snapshots=refs", ""},
				{"GET", "/v1/gw/namespaces?parent=db&pageToken=a%20b%2Bc&pageSize=10", ""},
				{"POST", "/v1/gw/namespaces/db/tables/t", `{"requirements":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[]}`},
				{"POST", "/v1/gw/transactions/commit", `{"table-changes":[]}`},
				{"HEAD", "/v1/gw/namespaces/db/tables/t", ""},
				{"DELETE", "/v1/gw/namespaces/db/tables/t?purgeRequested=true", ""},
			}
			for _, rq := range reqs {
				a := call(t, rq.method, gw+rq.path, rq.body, "Idempotency-Key", "k-1", "traceparent",
					"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				assert.Equal(t, 200, a.Status, "%s %s: %s (endpoint: %v)", rq.method, rq.path, a.Body, ep.lastErr.Load())
			}
			assert.Zero(t, ep.rejected.Load(), "rejected: %v", ep.lastErr.Load())
			// One /v1/config fetch by the gateway, then every request.
			assert.Equal(t, int32(len(reqs)+1), ep.accepted.Load())
			ep.mu.Lock()
			assert.Contains(t, ep.seen, "GET /iceberg/v1/"+svc.prefix+"/namespaces/db/tables/t?")
			assert.Contains(t, ep.bodies, `{"table-changes":[]}`)
			ep.mu.Unlock()

			// A wrong secret: the backend's 403 reaches the client as a 403.
			// Here it is the gateway's /v1/config fetch that is refused.
			bad := gateway(t, ep.srv.URL+"/iceberg", auth("not-the-secret"))
			a := call(t, "GET", bad+loadTablePath, "")
			wantError(t, a, http.StatusForbidden, icerest.Forbidden)
			assert.Contains(t, a.Err.Message, "signature we calculated does not match")
			assert.NotContains(t, string(a.Body), "not-the-secret")
			assert.NotContains(t, string(a.Body), testSecret)

			// A key revoked once the config is cached: each request's 403
			// (not in the Iceberg error model) is shaped as ForbiddenException.
			ep.setSecret("rotated")
			a = call(t, "GET", gw+loadTablePath, "")
			wantError(t, a, http.StatusForbidden, icerest.Forbidden)
			a = call(t, "POST", gw+loadTablePath, commitBody)
			wantError(t, a, http.StatusForbidden, icerest.Forbidden)
			assert.NotContains(t, string(a.Body), testSecret)
		})
	}
}

// The endpoint's verifier is not a rubber stamp: a signed request it
// accepts is refused once a signed header or the body changes.
func TestSigV4EndpointRejectsTampering(t *testing.T) {
	t.Parallel()
	ep := newSigV4Endpoint(t, "glue", "catalogs/1")
	send := func(tamper func(*http.Request) []byte) int {
		t.Helper()
		body := []byte(`{"a":1}`)
		req, err := http.NewRequest("POST", ep.srv.URL+"/iceberg/v1/catalogs/1/namespaces/db/tables/t", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Traceparent", "00-1-2-01")
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		require.NoError(t, v4.NewSigner().SignHTTP(context.Background(),
			aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: testToken},
			req, hash, "glue", "us-east-1", time.Now()))
		if tamper != nil {
			if b := tamper(req); b != nil {
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
			}
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, send(nil))
	assert.Equal(t, 403, send(func(r *http.Request) []byte { r.Header.Set("Traceparent", "00-9-9-01"); return nil }))
	assert.Equal(t, 403, send(func(*http.Request) []byte { return []byte(`{"a":2}`) }))
	assert.Equal(t, 403, send(func(r *http.Request) []byte { r.URL.Path += "x"; return nil }))
	assert.Equal(t, 403, send(func(r *http.Request) []byte { r.Header.Set("X-Amz-Security-Token", "other"); return nil }))
}

func TestSigV4Config(t *testing.T) {
	t.Parallel()
	for _, a := range []upstream.Auth{
		{Mode: upstream.AuthSigV4, Service: "glue", AccessKeyID: "a", SecretAccessKey: "b"},
		{Mode: upstream.AuthSigV4, Region: "us-east-1", Service: "s3", AccessKeyID: "a", SecretAccessKey: "b"},
		{Mode: upstream.AuthSigV4, Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b"},
	} {
		_, err := upstream.NewRemote("x", upstream.RemoteConfig{URL: "http://127.0.0.1:1", Auth: a}, nil)
		assert.Error(t, err, "%+v", a)
	}
}
