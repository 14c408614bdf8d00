package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing/fileurl/s3test"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// storageShare writes lake.sales.plain (orders 0-11, two files) to st
// straight through an embedded backend, and serves it through a gateway
// whose catalog `lake` holds st's keys in a storage block, shared as
// demo.sales.plain with url_lifetime 10m. It returns the query's file
// URLs, after checking that the backend was asked for no credentials and
// that the answer carries no secret.
func storageShare(t *testing.T, st s3Store) []string {
	ctx := context.Background()
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/wh"
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	backend := embeddedtest.Serve(t, cfg)
	direct := embeddedtest.Client(t, backend.URL)
	require.NoError(t, direct.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	tbl, err := direct.CreateTable(ctx, table.Identifier{"sales", "plain"}, orderSchema)
	require.NoError(t, err)
	tbl = appendOrders(t, tbl, orders(0, 5))
	appendOrders(t, tbl, orders(5, 12))

	// The backend vends its keys when asked (and the gateway strips
	// them); the gateway should not ask.
	var mu sync.Mutex
	var delegated []string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("X-Iceberg-Access-Delegation"); h != "" {
			mu.Lock()
			delegated = append(delegated, r.URL.Path+": "+h)
			mu.Unlock()
		}
		backend.Catalog.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	lake := remote("lake", front.URL, nil)
	lake["allowed_locations"] = []string{cfg.Warehouse} // a remote catalog's storage is confined to them
	lake["storage"] = map[string]any{
		"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
			"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
	}
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{lake}},
		sharingHandler(map[string]any{"url_lifetime": "10m", "change_data_dir": t.TempDir()}),
		map[string]any{"handler": "lakegate_iceberg"}))

	c := clientFromProfile(t, base+"/delta-sharing", recipientToken)
	r := c.do("POST", "/shares/demo/schemas/sales/tables/plain/query", nil, "{}")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.NotContains(t, string(r.body), st.secret, "the secret key never leaves lakegate")
	mu.Lock()
	assert.Empty(t, delegated, "the backend is asked for no credentials")
	mu.Unlock()
	lines := r.lines(t)
	require.Len(t, lines, 4, "protocol, metadata and one file per append: %s", r.body)
	var urls []string
	for _, l := range lines[2:] {
		raw := l["file"].(map[string]any)["url"].(string)
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, strings.TrimPrefix(st.endpoint, "http://"), u.Host, "the URL is on the catalog's store")
		assert.True(t, strings.HasPrefix(u.Path, "/"+st.bucket+"/wh/sales.db/plain/"), "an object of the table: %s", u.Path)
		q := u.Query()
		assert.True(t, strings.HasPrefix(q.Get("X-Amz-Credential"), st.keyID+"/"), "signed with the storage key: %q", q.Get("X-Amz-Credential"))
		assert.Equal(t, "600", q.Get("X-Amz-Expires"), "the URL lives url_lifetime")
		assert.Equal(t, "host", q.Get("X-Amz-SignedHeaders"), "a plain GET can use it")
		urls = append(urls, raw)
	}
	return urls
}

// tamper changes what a presigned URL's signature covers (its expiry).
func tamper(t *testing.T, raw string) string {
	out := strings.Replace(raw, "X-Amz-Expires=600", "X-Amz-Expires=3600", 1)
	require.NotEqual(t, raw, out)
	return out
}

// A share over a table of a catalog whose storage keys are the gateway's
// (a storage block) answers file URLs presigned with those keys, for GET
// only and for url_lifetime, and a recipient with no keys reads the rows
// with plain GETs. On the S3 of sharing_s3_test.go, whose guard checks
// presignatures as S3 does; the moto variant is below.
func TestSharingPresignedWithStorageKeys(t *testing.T) {
	st := fakeStore(t)
	var rows []order
	for _, raw := range storageShare(t, st) {
		assert.Equal(t, http.StatusForbidden, s3Status(t, tamper(t, raw)))
		req, err := http.NewRequest(http.MethodPut, raw, strings.NewReader("overwritten"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a GET's presignature does not PUT")
		rows = append(rows, fileRows(t, raw, false)...)
	}
	assert.Equal(t, sortOrders(orders(0, 12)), sortOrders(rows))
}

// The same on moto with every signature checked: the gateway reads the
// table's metadata and manifests from moto with the storage keys, and the
// URLs are presigned for moto's key. moto 5.2.6 cannot check a query
// signature with its access control on (it reads only the Authorization
// header, and answers 500 without one), so each URL's presignature is
// checked as S3 would (s3test.VerifyPresigned, aws-sdk-go-v2's signer,
// with moto's key and secret), and the object it names is read from moto
// with the keys.
func TestSharingPresignedWithStorageKeysOnMoto(t *testing.T) {
	st := motoStore(t)
	creds := aws.Credentials{AccessKeyID: st.keyID, SecretAccessKey: st.secret}
	var rows []order
	// verify checks raw as S3 would, as moto's server receives it.
	verify := func(raw string, creds aws.Credentials) string {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		r := httptest.NewRequest(http.MethodGet, u.RequestURI(), nil)
		r.Host = u.Host
		return s3test.VerifyPresigned(r, creds, st.region)
	}
	for _, raw := range storageShare(t, st) {
		assert.Empty(t, verify(raw, creds))
		assert.NotEmpty(t, verify(tamper(t, raw), creds))
		assert.NotEmpty(t, verify(raw, aws.Credentials{AccessKeyID: st.keyID, SecretAccessKey: st.secret + "x"}))
		u, err := url.Parse(raw)
		require.NoError(t, err)
		out, err := st.client().GetObject(context.Background(), &s3.GetObjectInput{
			Bucket: aws.String(st.bucket), Key: aws.String(strings.TrimPrefix(u.Path, "/"+st.bucket+"/"))})
		require.NoError(t, err)
		data, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		require.NoError(t, err)
		rows = append(rows, parquetRows(t, data, false)...)
	}
	assert.Equal(t, sortOrders(orders(0, 12)), sortOrders(rows))
}
