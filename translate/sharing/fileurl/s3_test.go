package fileurl

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/lakegate/lakegate/translate/sharing/fileurl/s3test"
)

func baseProps() map[string]string {
	return map[string]string{
		PropS3AccessKeyID:     "AKIDEXAMPLE",
		PropS3SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		PropS3Region:          "us-west-2",
	}
}

func with(props map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "<delete>" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

var sigRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestPresignS3(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		props    map[string]string
		uri      string
		host     string // expected URL host
		path     string // expected decoded URL path
		region   string
		withTok  bool
		scheme   string
		lifetime time.Duration
	}{
		{"virtual host default", baseProps(), "s3://my-bucket/wh/db/t/data/f.parquet",
			"my-bucket.s3.us-west-2.amazonaws.com", "/wh/db/t/data/f.parquet", "us-west-2", false, "https", time.Hour},
		{"path style", with(baseProps(), PropS3PathStyleAccess, "true"), "s3a://my-bucket/wh/f.parquet",
			"s3.us-west-2.amazonaws.com", "/my-bucket/wh/f.parquet", "us-west-2", false, "https", 90 * time.Minute},
		{"client.region fallback", with(baseProps(), PropS3Region, "<delete>", PropClientRegion, "eu-central-1"), "s3n://bkt/k.parquet",
			"bkt.s3.eu-central-1.amazonaws.com", "/k.parquet", "eu-central-1", false, "https", time.Hour},
		{"session token", with(baseProps(), PropS3SessionToken, "FwoGZXIvYXdzEXAMPLE"), "s3://bkt/k.parquet",
			"bkt.s3.us-west-2.amazonaws.com", "/k.parquet", "us-west-2", true, "https", time.Hour},
		{"custom endpoint defaults to path style and us-east-1", with(baseProps(), PropS3Region, "<delete>", PropS3Endpoint, "http://minio:9000"), "s3://warehouse/t/f.parquet",
			"minio:9000", "/warehouse/t/f.parquet", "us-east-1", false, "http", time.Hour},
		{"custom endpoint forced virtual", with(baseProps(), PropS3Endpoint, "https://objects.example.com", PropS3ForceVirtualAddressing, "true"), "s3://warehouse/f.parquet",
			"warehouse.objects.example.com", "/f.parquet", "us-west-2", false, "https", time.Hour},
		{"path-style-access beats force-virtual", with(baseProps(), PropS3Endpoint, "https://objects.example.com", PropS3ForceVirtualAddressing, "true", PropS3PathStyleAccess, "true"), "s3://warehouse/f.parquet",
			"objects.example.com", "/warehouse/f.parquet", "us-west-2", false, "https", time.Hour},
		// Bucket names under 3 characters aren't DNS-valid; the SDK falls back.
		{"non-DNS bucket falls back to path style", baseProps(), "s3://b/k.parquet",
			"s3.us-west-2.amazonaws.com", "/b/k.parquet", "us-west-2", false, "https", time.Hour},
		{"raw percent in key kept literal", baseProps(), "s3://bkt/t/name=a%20b/f g+h.parquet",
			"bkt.s3.us-west-2.amazonaws.com", "/t/name=a%20b/f g+h.parquet", "us-west-2", false, "https", time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, err := presign(ctx, c.props, c.uri, c.lifetime)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if u.Scheme != c.scheme || u.Host != c.host || u.Path != c.path {
				t.Fatalf("URL %s: got %s://%s%s, want %s://%s%s", raw, u.Scheme, u.Host, u.Path, c.scheme, c.host, c.path)
			}
			q := u.Query()
			checks := map[string]string{
				"X-Amz-Algorithm":     "AWS4-HMAC-SHA256",
				"X-Amz-Expires":       strconv.Itoa(int(c.lifetime / time.Second)),
				"X-Amz-SignedHeaders": "host", // anything more and plain GETs would fail
			}
			for k, want := range checks {
				if got := q.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			cred := q.Get("X-Amz-Credential")
			if !strings.HasPrefix(cred, "AKIDEXAMPLE/") || !strings.HasSuffix(cred, "/"+c.region+"/s3/aws4_request") {
				t.Errorf("X-Amz-Credential = %q", cred)
			}
			if !sigRE.MatchString(q.Get("X-Amz-Signature")) {
				t.Errorf("X-Amz-Signature = %q", q.Get("X-Amz-Signature"))
			}
			if got := q.Get("X-Amz-Security-Token"); (got != "") != c.withTok {
				t.Errorf("X-Amz-Security-Token = %q, want present=%v", got, c.withTok)
			}
			if strings.Contains(raw, "wJalrXUtnFEMI") {
				t.Error("secret key leaked into URL")
			}
		})
	}
}

func TestPresignS3Errors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		props    map[string]string
		uri      string
		lifetime time.Duration
		mention  []string
	}{
		{"no credentials", map[string]string{PropS3Region: "us-east-1"}, "s3://b/k", time.Hour, []string{PropS3AccessKeyID, PropS3SecretAccessKey}},
		{"no secret", with(baseProps(), PropS3SecretAccessKey, "<delete>"), "s3://b/k", time.Hour, []string{PropS3SecretAccessKey}},
		{"no key id", with(baseProps(), PropS3AccessKeyID, ""), "s3://b/k", time.Hour, []string{PropS3AccessKeyID}},
		{"no region", with(baseProps(), PropS3Region, "<delete>"), "s3://b/k", time.Hour, []string{PropS3Region}},
		{"bad path style", with(baseProps(), PropS3PathStyleAccess, "sometimes"), "s3://b/k", time.Hour, []string{PropS3PathStyleAccess}},
		{"bad force virtual", with(baseProps(), PropS3ForceVirtualAddressing, "maybe"), "s3://b/k", time.Hour, []string{PropS3ForceVirtualAddressing}},
		{"endpoint without scheme", with(baseProps(), PropS3Endpoint, "minio:9000"), "s3://b/k", time.Hour, []string{PropS3Endpoint}},
		{"gs scheme", baseProps(), "gs://b/k", time.Hour, []string{"s3://"}},
		{"http scheme", baseProps(), "https://b.s3.amazonaws.com/k", time.Hour, []string{"s3://"}},
		{"local path", baseProps(), "/tmp/k.parquet", time.Hour, []string{"s3://"}},
		{"no key", baseProps(), "s3://bucket", time.Hour, []string{"object key"}},
		{"empty key", baseProps(), "s3://bucket/", time.Hour, []string{"object key"}},
		{"no bucket", baseProps(), "s3:///key", time.Hour, []string{"bucket"}},
		{"zero lifetime", baseProps(), "s3://b/k", 0, []string{"lifetime"}},
		{"too long lifetime", baseProps(), "s3://b/k", 8 * 24 * time.Hour, []string{"lifetime"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := presign(ctx, c.props, c.uri, c.lifetime)
			if err == nil {
				t.Fatalf("got URL %q, want error", u)
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

// TestPresignS3IgnoresAmbientCredentials guards the rule that only the
// table's credentials are used, never the process environment.
func TestPresignS3IgnoresAmbientCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secretfromenv")
	t.Setenv("AWS_REGION", "ap-south-1")
	if _, err := presign(context.Background(), map[string]string{PropS3Region: "us-east-1"}, "s3://b/k", time.Hour); err == nil {
		t.Fatal("fell back to environment credentials")
	}
	u, err := presign(context.Background(), baseProps(), "s3://b/k", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(u, "AKIDFROMENV") || strings.Contains(u, "ap-south-1") {
		t.Fatalf("environment leaked into %s", u)
	}
}

// TestPresignS3VerifiesEndToEnd fetches a presigned URL from a fake S3
// that re-derives the SigV4 signature from the request it actually
// received, so host, path escaping and query survive the round trip.
func TestPresignS3VerifiesEndToEnd(t *testing.T) {
	props := with(baseProps(), PropS3SessionToken, "session-tok")
	creds := aws.Credentials{AccessKeyID: props[PropS3AccessKeyID], SecretAccessKey: props[PropS3SecretAccessKey], SessionToken: "session-tok"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s3test.VerifyPresigned(r, creds, props[PropS3Region]); err != "" {
			http.Error(w, err, http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "object:"+r.URL.Path)
	}))
	defer srv.Close()
	props[PropS3Endpoint] = srv.URL

	p, err := NewS3Presigner(props)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"t/data/f.parquet", "t/name=a%20b/f g+h~.parquet"} {
		u, err := p.Presign(context.Background(), "s3://wh/"+key, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		body, status := get(t, u)
		if status != 200 || body != "object:/wh/"+key {
			t.Fatalf("GET %s = %d %q", u, status, body)
		}
		// A changed query must break the signature.
		if _, status := get(t, strings.Replace(u, "X-Amz-Expires=3600", "X-Amz-Expires=7200", 1)); status != 403 {
			t.Fatalf("tampered URL accepted: %d", status)
		}
	}
}

func get(t *testing.T, u string) (string, int) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// presign builds a presigner from props and presigns uri with it.
func presign(ctx context.Context, props map[string]string, uri string, lifetime time.Duration) (string, error) {
	p, err := NewS3Presigner(props)
	if err != nil {
		return "", err
	}
	return p.Presign(ctx, uri, lifetime)
}
