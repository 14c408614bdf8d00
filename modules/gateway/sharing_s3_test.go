package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/fileurl/s3test"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

const (
	s3TestBucket = "lakegate-share"
	s3TestKeyID  = "AKIDLAKEGATESHARE"
	s3TestSecret = "s3cr3t/LakegateShareTestKey+0123456789"
	s3TestRegion = "eu-west-1"
)

// fakeS3 is gofakes3 (in-memory) on loopback behind a guard, because
// gofakes3 itself checks no signatures: a presigned GET (X-Amz-Signature
// in the query) must carry the configured key id and a SigV4 signature
// that the AWS SDK's signer re-derives from the request as received, and
// must not have expired; any other request must be signed in the
// Authorization header with the configured key id. Everything else is
// refused with 403.
type fakeS3 struct {
	URL string

	mu        sync.Mutex
	presigned []string // raw query strings of accepted presigned GETs
}

func newFakeS3(t testing.TB) *fakeS3 {
	t.Helper()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(s3TestBucket))
	faker := gofakes3.New(backend)
	f := &fakeS3{}
	creds := aws.Credentials{AccessKeyID: s3TestKeyID, SecretAccessKey: s3TestSecret}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Has("X-Amz-Signature"):
			if r.Method != http.MethodGet {
				http.Error(w, "presigned URLs are for GET only", http.StatusForbidden)
				return
			}
			if reason := s3test.VerifyPresigned(r, creds, s3TestRegion); reason != "" {
				http.Error(w, "presigned URL refused: "+reason, http.StatusForbidden)
				return
			}
			f.mu.Lock()
			f.presigned = append(f.presigned, r.URL.RawQuery)
			f.mu.Unlock()
		case strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+s3TestKeyID+"/"):
		default:
			http.Error(w, "unsigned request refused", http.StatusForbidden)
			return
		}
		faker.Server().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeS3) presignedGETs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.presigned)
}

// configProps are props as lakegate's config takes them: the secret key
// as a placeholder.
func (f *fakeS3) configProps(t *testing.T) map[string]string {
	p := f.props()
	p["s3.secret-access-key"] = secretRef(t, s3TestSecret)
	return p
}

// props are the FileIO properties of the fake S3.
func (f *fakeS3) props() map[string]string {
	return map[string]string{
		"s3.endpoint":          f.URL,
		"s3.access-key-id":     s3TestKeyID,
		"s3.secret-access-key": s3TestSecret,
		"s3.region":            s3TestRegion,
		"s3.path-style-access": "true",
	}
}

// s3Status is the status a plain GET of u gets.
func s3Status(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// A table whose warehouse is on S3 is shared with presigned S3 URLs: the
// embedded backend keeps the warehouse on a real S3-compatible server
// (gofakes3) and vends its credentials in LoadTable's
// storage-credentials; iceberg-go writes through the gateway; the
// recipient downloads every file with a plain GET, which the server
// accepts only for a valid SigV4 presignature, and reads back every row.
func TestSharingS3(t *testing.T) {
	ctx := context.Background()
	s3 := newFakeS3(t)
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + s3TestBucket + "/wh"
	cfg.Properties = s3.props()
	backend := embeddedtest.Serve(t, cfg)

	require.Equal(t, http.StatusForbidden, s3Status(t, s3.URL+"/"+s3TestBucket+"/"), "the fake S3 refuses unsigned requests")

	const lifetime = 10 * time.Minute
	base := sharingGatewayFor(t, backend.URL, map[string]any{"url_lifetime": "10m"})
	cat := embeddedtest.Client(t, base, rest.WithWarehouseLocation("lake"))
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "plain"}, orderSchema)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tbl.Location(), "s3://"+s3TestBucket+"/wh/"), "table location %s", tbl.Location())
	tbl = appendOrders(t, tbl, orders(0, 7))
	tbl = appendOrders(t, tbl, orders(7, 19))
	want := sortOrders(orders(0, 19))

	// query reads the table as a recipient and checks every file URL.
	query := func(t *testing.T, base string) {
		c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
		before := s3.presignedGETs()
		asked := time.Now()
		r := c.do("POST", "/shares/demo/schemas/sales/tables/plain/query", nil, "{}")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, "responseformat=parquet", r.header.Get("delta-sharing-capabilities"))
		assert.Equal(t, metadataVersion(t, tbl.MetadataLocation()), r.version(t))
		assert.NotContains(t, string(r.body), s3TestSecret, "the secret key never leaves lakegate")

		lines := r.lines(t)
		require.Len(t, lines, 4, "protocol, metadata and one file per append: %s", r.body)
		var rows []order
		for _, l := range lines[2:] {
			f := l["file"].(map[string]any)
			raw := f["url"].(string)
			u, err := url.Parse(raw)
			require.NoError(t, err)
			assert.Equal(t, "http", u.Scheme)
			assert.Equal(t, strings.TrimPrefix(s3.URL, "http://"), u.Host, "the URL is on the fake S3")
			assert.True(t, strings.HasPrefix(u.Path, "/"+s3TestBucket+"/wh/"), "path-style URL of an object under the warehouse: %s", u.Path)
			q := u.Query()
			assert.Regexp(t, `^[0-9a-f]{64}$`, q.Get("X-Amz-Signature"))
			assert.True(t, strings.HasPrefix(q.Get("X-Amz-Credential"), s3TestKeyID+"/"), "X-Amz-Credential %q", q.Get("X-Amz-Credential"))
			assert.Equal(t, "host", q.Get("X-Amz-SignedHeaders"), "a plain GET must be able to use the URL")
			assert.Equal(t, strconv.Itoa(int(lifetime/time.Second)), q.Get("X-Amz-Expires"), "the URL lives url_lifetime")
			assert.NotContains(t, raw, s3TestSecret)

			// The advertised expiration is url_lifetime from the answer,
			// and the URL is valid at least until then.
			signedAt, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
			require.NoError(t, err)
			exp := time.UnixMilli(int64(f["expirationTimestamp"].(float64)))
			assert.WithinDuration(t, asked.Add(lifetime), exp, 5*time.Second)
			assert.False(t, exp.After(signedAt.Add(lifetime)),
				"expirationTimestamp %v is after the presigned URL expires (%v + %v)", exp, signedAt, lifetime)

			// Tampering with the signed query, or dropping the signature,
			// makes the server refuse the URL.
			tampered := strings.Replace(raw, "X-Amz-Expires=600", "X-Amz-Expires=3600", 1)
			require.NotEqual(t, raw, tampered)
			assert.Equal(t, http.StatusForbidden, s3Status(t, tampered))
			assert.Equal(t, http.StatusForbidden, s3Status(t, s3.URL+u.Path))

			got := fileRows(t, raw, false)
			var stats struct{ NumRecords int }
			require.NoError(t, json.Unmarshal([]byte(f["stats"].(string)), &stats))
			assert.Equal(t, len(got), stats.NumRecords, "the file holds the rows its stats announce")
			rows = append(rows, got...)
		}
		assert.Equal(t, want, sortOrders(rows))
		assert.Equal(t, before+2, s3.presignedGETs(), "both files were downloaded through verified presigned URLs")
	}

	t.Run("vended credentials", func(t *testing.T) { query(t, base) })

	// A backend that vends nothing: the handler's `s3` properties are used.
	t.Run("handler s3 properties", func(t *testing.T) {
		var loads atomic.Int64
		noVending := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("X-Iceberg-Access-Delegation")
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/tables/plain") {
				loads.Add(1)
			}
			backend.Catalog.ServeHTTP(w, r)
		}))
		t.Cleanup(noVending.Close)
		base := sharingGatewayFor(t, noVending.URL, map[string]any{"url_lifetime": "10m", "s3": s3.configProps(t)})
		query(t, base)
		assert.Positive(t, loads.Load(), "the table was loaded without asking for vended credentials")
	})
}
