package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testSigner(t testing.TB) *Signer {
	s, err := NewSigner(S3Config{Endpoint: "http://127.0.0.1:9000", Region: "us-east-1",
		AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test-key"})
	require.NoError(t, err)
	return s
}

var tablePlaces = TableLocations("s3://lake/warehouse/ns/t", "s3://lake/data/ns/t/", "file:///tmp/x", "s3://lake")

func TestTargetInsideTable(t *testing.T) {
	s := testSigner(t)
	for _, c := range []struct {
		method, uri, body string
		access            Access
	}{
		{"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/metadata/v1.json", "", Read},
		{"HEAD", "http://127.0.0.1:9000/lake/warehouse/ns/t/data/a.parquet?x-id=HeadObject", "", Read},
		{"PUT", "http://127.0.0.1:9000/lake/data/ns/t/part%20one.parquet", "", Write},
		{"PUT", "http://127.0.0.1:9000/lake/warehouse/ns/t/d/f?partNumber=1&uploadId=u", "", Write},
		{"POST", "http://127.0.0.1:9000/lake/warehouse/ns/t/d/f?uploads", "", Write},
		{"DELETE", "http://127.0.0.1:9000/lake/warehouse/ns/t/d/f", "", Write},
		{"GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=warehouse/ns/t/metadata/", "", Read},
		{"POST", "http://127.0.0.1:9000/lake?delete", "<Delete><Object><Key>warehouse/ns/t/a</Key></Object></Delete>", Write},
		{"GET", "http://lake.127.0.0.1:9000/warehouse/ns/t/x", "", Read},
	} {
		req := SignRequest{Method: c.method, URI: c.uri, Region: "us-east-1"}
		if c.body != "" {
			req.Body = &c.body
		}
		tg, err := s.Target(req)
		require.NoError(t, err, c.uri)
		assert.Equal(t, c.access, tg.Access, c.uri)
		assert.NoError(t, tg.Inside(tablePlaces), c.uri)
	}
}

func TestTargetRefused(t *testing.T) {
	s := testSigner(t)
	for name, c := range map[string]struct {
		method, uri, body string
		headers           map[string][]string
	}{
		"other table":               {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t2/x", "", nil},
		"table's sibling prefix":    {"GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=warehouse/ns/t", "", nil},
		"other bucket":              {"GET", "http://127.0.0.1:9000/other/warehouse/ns/t/x", "", nil},
		"bucket root":               {"GET", "http://127.0.0.1:9000/lake/x", "", nil},
		"traversal":                 {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/../t2/x", "", nil},
		"encoded traversal":         {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/%2e%2e/t2/x", "", nil},
		"encoded slash traversal":   {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t%2F..%2Ft2/x", "", nil},
		"double slash":              {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t//x", "", nil},
		"bad escape":                {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/%zz", "", nil},
		"other host":                {"GET", "http://evil.example:9000/lake/warehouse/ns/t/x", "", nil},
		"other port":                {"GET", "http://127.0.0.1:9001/lake/warehouse/ns/t/x", "", nil},
		"other scheme":              {"GET", "https://127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"userinfo":                  {"GET", "http://u:p@127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"fragment":                  {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/x#y", "", nil},
		"patch":                     {"PATCH", "http://127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"options":                   {"OPTIONS", "http://127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"acl":                       {"PUT", "http://127.0.0.1:9000/lake/warehouse/ns/t/x?acl", "", nil},
		"repeated query":            {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/x?versionId=1&versionId=2", "", nil},
		"semicolon query":           {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/x?a;b", "", nil},
		"copy":                      {"PUT", "http://127.0.0.1:9000/lake/warehouse/ns/t/x", "", map[string][]string{"x-amz-copy-source": {"/other/secret"}}},
		"bucket listing, no prefix": {"GET", "http://127.0.0.1:9000/lake?list-type=2", "", nil},
		"delete outside":            {"POST", "http://127.0.0.1:9000/lake?delete", "<Delete><Object><Key>warehouse/ns/t/a</Key></Object><Object><Key>other/b</Key></Object></Delete>", nil},
		"delete without body":       {"POST", "http://127.0.0.1:9000/lake?delete", "", nil},
		"bad bucket":                {"GET", "http://127.0.0.1:9000/LAKE/warehouse/ns/t/x", "", nil},
		"gcs":                       {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"post without uploads":      {"POST", "http://127.0.0.1:9000/lake/warehouse/ns/t/x", "", nil},
		"control char":              {"GET", "http://127.0.0.1:9000/lake/warehouse/ns/t/a%0Ab", "", nil},
	} {
		req := SignRequest{Method: c.method, URI: c.uri, Region: "us-east-1", Headers: c.headers}
		if c.body != "" {
			req.Body = &c.body
		}
		if name == "gcs" {
			req.Provider = "gcs"
		}
		tg, err := s.Target(req)
		if err == nil {
			err = tg.Inside(tablePlaces)
		}
		assert.ErrorIs(t, err, ErrRefused, name)
	}
}

func TestTableLocationsLeaveOutAmbiguous(t *testing.T) {
	got := TableLocations("s3://lake/a", "s3a://lake/b/", "s3://lake", "s3://lake/c/../d", "s3://lake/e%2Ff",
		"gs://lake/g", "s3://u@lake/h", "s3://lake//i", "s3://Lake/j")
	assert.Equal(t, []Place{{"lake", "a"}, {"lake", "b"}}, got)
}

func TestSignKeepsSecretOut(t *testing.T) {
	s := testSigner(t)
	tg, err := s.Target(SignRequest{Method: "GET", URI: "http://127.0.0.1:9000/lake/warehouse/ns/t/x"})
	require.NoError(t, err)
	res, err := s.Sign(t.Context(), tg, map[string][]string{"Authorization": {"forged"}, "User-Agent": {"pyiceberg"}})
	require.NoError(t, err)
	auth := strings.Join(res.Headers["Authorization"], "")
	assert.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/"), auth)
	assert.Equal(t, []string{"UNSIGNED-PAYLOAD"}, res.Headers["X-Amz-Content-Sha256"])
	for _, vs := range res.Headers {
		for _, v := range vs {
			assert.NotContains(t, v, "secret-test-key")
		}
	}
	_, err = s.Sign(t.Context(), tg, map[string][]string{"X-Amz-Content-Sha256": {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}})
	assert.True(t, errors.Is(err, ErrRefused))
}

// FuzzTarget: whatever URI is asked for, a signature is only ever
// produced for a key under the table's places, in its bucket, on the
// endpoint, with no dot or empty segment once decoded.
func FuzzTarget(f *testing.F) {
	for _, u := range []string{"http://127.0.0.1:9000/lake/warehouse/ns/t/x", "http://127.0.0.1:9000/lake/warehouse/ns/t/%2e%2e/u",
		"http://lake.127.0.0.1:9000/warehouse/ns/t/x", "http://127.0.0.1:9000/lake?list-type=2&prefix=warehouse/ns/t/"} {
		f.Add("GET", u)
	}
	s := testSigner(f)
	f.Fuzz(func(t *testing.T, method, uri string) {
		tg, err := s.Target(SignRequest{Method: method, URI: uri})
		if err != nil || tg.Inside(tablePlaces) != nil {
			return
		}
		if tg.URL.Host != "127.0.0.1:9000" && tg.URL.Host != "lake.127.0.0.1:9000" {
			t.Fatalf("%q: signed for host %q", uri, tg.URL.Host)
		}
		for _, k := range tg.Keys {
			if !strings.HasPrefix(k, "warehouse/ns/t/") && !strings.HasPrefix(k, "data/ns/t/") {
				t.Fatalf("%q: key %q outside the table", uri, k)
			}
			for _, seg := range strings.Split(strings.TrimSuffix(k, "/"), "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("%q: key %q has a dot or empty segment", uri, k)
				}
			}
		}
		if tg.Bucket != "lake" {
			t.Fatalf("%q: bucket %q", uri, tg.Bucket)
		}
	})
}

// BenchmarkSign is the gateway's CPU for one sign request past the HTTP
// and JSON layers: reading the URI, the location check, SigV4.
func BenchmarkSign(b *testing.B) {
	s := testSigner(b)
	req := SignRequest{Method: "GET", URI: "http://127.0.0.1:9000/lake/warehouse/ns/t/data/part-00001.parquet",
		Region: "us-east-1", Headers: map[string][]string{"User-Agent": {"bench"}}}
	b.ReportAllocs()
	for b.Loop() {
		tg, err := s.Target(req)
		if err == nil {
			err = tg.Inside(tablePlaces)
		}
		if err == nil {
			_, err = s.Sign(b.Context(), tg, req.Headers)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
