package gateway_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lakegate "github.com/lakegate/lakegate/modules/gateway"
	"github.com/lakegate/lakegate/translate"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// s3Store is an S3 the tests write a table to and send signed requests
// to: its endpoint, region, bucket and the keys only the gateway (and the
// embedded backend behind it) hold.
type s3Store struct {
	endpoint, region, bucket, keyID, secret string
}

// fakeStore is the in-process gofakes3 of sharing_s3_test.go (it checks
// the key id of signed requests, not their signatures).
func fakeStore(t testing.TB) s3Store {
	return s3Store{endpoint: newFakeS3(t).URL, region: s3TestRegion, bucket: s3TestBucket,
		keyID: s3TestKeyID, secret: s3TestSecret}
}

// motoStore is moto's S3 with every signature checked
// (interop/storage/moto.sh: LAKEGATE_TEST_S3 is
// http://<key id>:<secret>@host:port), with a fresh bucket; the test skips
// without it.
func motoStore(t *testing.T) s3Store {
	return envStore(t, "LAKEGATE_TEST_S3", "interop/storage/moto.sh")
}

// minioStore is MinIO, which evaluates STS session policies
// (interop/storage/minio.sh: LAKEGATE_TEST_MINIO is
// http://<root user>:<password>@host:port), with a fresh bucket; the test
// skips without it.
func minioStore(t *testing.T) s3Store {
	return envStore(t, "LAKEGATE_TEST_MINIO", "interop/storage/minio.sh")
}

// envStore is the S3 at the URL in the environment variable env
// (http://<key id>:<secret>@host:port, set by script), with a fresh
// bucket created with that key; the test skips when env is unset.
func envStore(t *testing.T, env, script string) s3Store {
	raw := os.Getenv(env)
	if raw == "" {
		t.Skipf("%s is not set (%s start sets it)", env, script)
	}
	u, err := url.Parse(raw)
	require.NoError(t, err, env)
	secret, _ := u.User.Password()
	require.NotEmpty(t, secret, "%s carries no secret", env)
	st := s3Store{endpoint: u.Scheme + "://" + u.Host, region: "us-east-1", keyID: u.User.Username(), secret: secret}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	st.bucket = "lakegate-sign-" + hex.EncodeToString(b)
	_, err = st.client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(st.bucket)})
	require.NoError(t, err, "creating a bucket with the key of %s", env)
	return st
}

func (st s3Store) client() *s3.Client {
	return s3.New(s3.Options{Region: st.region, BaseEndpoint: aws.String(st.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(st.keyID, st.secret, "")})
}

// storageGateway fronts an embedded catalog whose warehouse is on st
// with the roles policy, issued tokens for reader and writer, and the
// catalog's storage keys held by the gateway with remote signing on. It
// returns the gateway's URL and counts the backend's loadTable calls.
func storageGateway(t testing.TB, st s3Store) (string, *atomic.Int64) {
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/wh"
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	backend := embeddedtest.Serve(t, cfg)
	var loads atomic.Int64
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/tables/") {
			loads.Add(1)
		}
		backend.Catalog.ServeHTTP(w, r)
	}))
	t.Cleanup(counting.Close)
	lake := remote("lake", counting.URL, nil)
	lake["allowed_locations"] = []string{cfg.Warehouse}
	lake["storage"] = map[string]any{
		"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
			"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
		"remote_signing": true,
	}
	base := gateway(t, map[string]any{
		"catalogs": []any{lake},
		"identity": map[string]any{"required": true, "issuer": map[string]any{"clients": []any{
			map[string]any{"id": "reader", "secret_bcrypt": bcryptHash(t, "reader-secret"), "groups": []string{"reader"}},
			map[string]any{"id": "writer", "secret_bcrypt": bcryptHash(t, "writer-secret"), "groups": []string{"writer"}},
		}}},
		"policy": map[string]any{"dir": "../../policies", "package": "lakegate.roles"},
	})
	return base, &loads
}

// createSignTable creates lake.sales.t as the writer.
func createSignTable(t testing.TB, base, writer string) {
	status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces", writer, `{"namespace":["sales"]}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, body = do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables", writer,
		`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
}

const (
	signPath = "/v1/lake/namespaces/sales/tables/t/sign"
	// tableKey is where the embedded catalog puts lake.sales.t in its
	// warehouse, s3://<bucket>/wh.
	tableKey = "wh/sales.db/t"
)

// signReq is a RemoteSignRequest body.
func signReq(method, uri string) string {
	b, _ := json.Marshal(map[string]any{"region": "us-east-1", "method": method, "uri": uri,
		"headers": map[string][]string{"User-Agent": {"test"}}})
	return string(b)
}

// signed is a RemoteSignResult.
type signed struct {
	URI     string              `json:"uri"`
	Headers map[string][]string `json:"headers"`
}

// A table answer asked for remote signing names the signer and carries no
// keys; signRequest refuses what lies outside the table, what the policy
// does not allow and what it cannot read exactly, in the Iceberg error
// model; decisions are reused.
func TestSignRequestChecks(t *testing.T) {
	st := fakeStore(t)
	base, loads := storageGateway(t, st)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	createSignTable(t, base, writer)
	obj := st.endpoint + "/" + st.bucket + "/" + tableKey + "/data/f.parquet"

	t.Run("loadTable names the signer, no keys", func(t *testing.T) {
		for _, tok := range []string{reader, writer} {
			status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", tok, "",
				map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials,remote-signing"})
			require.Equal(t, http.StatusOK, status, "%s", body)
			var res struct {
				Config      map[string]string `json:"config"`
				Credentials []any             `json:"storage-credentials"`
			}
			require.NoError(t, json.Unmarshal(body, &res))
			assert.Equal(t, "true", res.Config["s3.remote-signing-enabled"])
			assert.Equal(t, "S3V4RestSigner", res.Config["s3.signer"])
			assert.Equal(t, base, res.Config["s3.signer.uri"])
			assert.Equal(t, strings.TrimPrefix(signPath, "/"), res.Config["s3.signer.endpoint"])
			// Iceberg Java 1.11's names (s3.signer.* are deprecated there).
			assert.Equal(t, base, res.Config["signer.uri"])
			assert.Equal(t, strings.TrimPrefix(signPath, "/"), res.Config["signer.endpoint"])
			assert.Equal(t, st.endpoint, res.Config["s3.endpoint"])
			assert.Empty(t, res.Credentials)
			assert.NotContains(t, string(body), st.secret)
			assert.NotContains(t, string(body), st.keyID)
		}
	})

	sign := func(tok, body string) (int, []byte) {
		return do(t, http.MethodPost, base+signPath, tok, body, nil)
	}
	t.Run("allowed", func(t *testing.T) {
		for _, c := range []struct{ tok, method string }{{writer, "PUT"}, {writer, "GET"}, {writer, "DELETE"}, {reader, "GET"}, {reader, "HEAD"}} {
			status, body := sign(c.tok, signReq(c.method, obj))
			require.Equal(t, http.StatusOK, status, "%s %s", c.method, body)
			var res signed
			require.NoError(t, json.Unmarshal(body, &res))
			assert.Equal(t, obj, res.URI)
			auth := strings.Join(res.Headers["Authorization"], "")
			assert.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+st.keyID+"/"), auth)
			assert.NotContains(t, string(body), st.secret)
		}
	})
	before := loads.Load()
	status, _ := sign(writer, signReq("GET", obj+"2"))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, before, loads.Load(), "a decision made for writer's reads is reused, the table not loaded again")

	t.Run("refused", func(t *testing.T) {
		other := st.endpoint + "/" + st.bucket + "/wh/sales.db/"
		for name, c := range map[string]struct {
			tok, body string
			status    int
			typ       string
		}{
			"reader PUT":         {reader, signReq("PUT", obj), 403, "ForbiddenException"},
			"reader DELETE":      {reader, signReq("DELETE", obj), 403, "ForbiddenException"},
			"reader multipart":   {reader, signReq("POST", obj+"?uploads"), 403, "ForbiddenException"},
			"other table":        {writer, signReq("GET", other+"t2/data/f"), 403, "ForbiddenException"},
			"table's neighbour":  {writer, signReq("GET", other+"tt/f"), 403, "ForbiddenException"},
			"other bucket":       {writer, signReq("GET", st.endpoint+"/other-bucket/"+tableKey+"/f"), 403, "ForbiddenException"},
			"traversal":          {writer, signReq("GET", other+"t/../t2/f"), 403, "ForbiddenException"},
			"encoded traversal":  {writer, signReq("GET", other+"t/%2e%2e/t2/f"), 403, "ForbiddenException"},
			"other host":         {writer, signReq("GET", "http://example.com/"+st.bucket+"/"+tableKey+"/f"), 403, "ForbiddenException"},
			"OPTIONS":            {writer, signReq("OPTIONS", obj), 403, "ForbiddenException"},
			"unknown method":     {writer, signReq("BREW", obj), 400, "BadRequestException"},
			"malformed body":     {writer, `{"region":`, 400, "BadRequestException"},
			"repeated key":       {writer, `{"region":"r","uri":"` + obj + `","uri":"` + other + `x","method":"GET","headers":{}}`, 400, "BadRequestException"},
			"missing headers":    {writer, `{"region":"r","uri":"` + obj + `","method":"GET"}`, 400, "BadRequestException"},
			"unauthenticated":    {"", signReq("GET", obj), 401, "NotAuthorizedException"},
			"bucket listing all": {writer, signReq("GET", st.endpoint+"/"+st.bucket+"?list-type=2&prefix=wh/"), 403, "ForbiddenException"},
		} {
			status, body := sign(c.tok, c.body)
			assert.Equal(t, c.status, status, "%s: %s", name, body)
			assert.Equal(t, c.typ, errorType(body), "%s: %s", name, body)
			assert.NotContains(t, string(body), "Credential=", name)
		}
	})

	t.Run("no such table", func(t *testing.T) {
		status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables/nope/sign", writer, signReq("GET", obj), nil)
		assert.Equal(t, http.StatusNotFound, status, "%s", body)
		assert.Equal(t, "NoSuchTableException", errorType(body))
	})
}

// Through moto, which checks every signature: what the gateway signs for
// the writer is accepted (a PUT, then a GET of the same file), the same
// signature does not open another object, and the reader's PUT is never
// signed.
func TestRemoteSigningRoundTripOnMoto(t *testing.T) {
	st := motoStore(t)
	base, _ := storageGateway(t, st)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	createSignTable(t, base, writer)
	obj := st.endpoint + "/" + st.bucket + "/" + tableKey + "/data/roundtrip.parquet"
	content := []byte("parquet bytes, as far as S3 knows")

	signAs := func(tok, method, uri string, hdr map[string][]string) signed {
		if hdr == nil {
			hdr = map[string][]string{}
		}
		b, _ := json.Marshal(map[string]any{"region": st.region, "method": method, "uri": uri, "headers": hdr})
		status, body := do(t, http.MethodPost, base+signPath, tok, string(b), nil)
		require.Equal(t, http.StatusOK, status, "%s %s: %s", method, uri, body)
		var res signed
		require.NoError(t, json.Unmarshal(body, &res))
		return res
	}
	send := func(method string, s signed, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, s.URI, bytes.NewReader(body))
		require.NoError(t, err)
		for k, vs := range s.Headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	put := signAs(writer, "PUT", obj, map[string][]string{"Content-Type": {"application/octet-stream"}})
	status, body := send("PUT", put, content)
	require.Equal(t, http.StatusOK, status, "moto refused the signed PUT: %s", body)

	get := signAs(reader, "GET", obj, nil)
	status, body = send("GET", get, nil)
	require.Equal(t, http.StatusOK, status, "moto refused the signed GET: %s", body)
	assert.Equal(t, content, body)

	// The signature binds the key: sent for another object, moto refuses it.
	moved := get
	moved.URI = st.endpoint + "/" + st.bucket + "/wh/sales.db/other/secret.parquet"
	status, body = send("GET", moved, nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", body)
	assert.Contains(t, string(body), "SignatureDoesNotMatch")

	// The reader's write and anyone's request outside the table are not signed.
	b, _ := json.Marshal(map[string]any{"region": st.region, "method": "PUT", "uri": obj, "headers": map[string][]string{}})
	status, body = do(t, http.MethodPost, base+signPath, reader, string(b), nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", body)
	b, _ = json.Marshal(map[string]any{"region": st.region, "method": "GET", "uri": moved.URI, "headers": map[string][]string{}})
	status, body = do(t, http.MethodPost, base+signPath, writer, string(b), nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", body)

	// DELETE, signed for the writer, removes the file.
	del := signAs(writer, "DELETE", obj, nil)
	status, body = send("DELETE", del, nil)
	require.Equal(t, http.StatusNoContent, status, "%s", body)
	_, err := st.client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(st.bucket),
		Key: aws.String(tableKey + "/data/roundtrip.parquet")})
	assert.Error(t, err, "the object is gone")
}

// storageCatalog is a remote catalog r with storage s3 (remote signing
// on), its tables allowed under s3://lake/wh.
func storageCatalog(s3cfg map[string]any) map[string]any {
	c := remote("r", "http://127.0.0.1:9", nil)
	c["allowed_locations"] = []string{"s3://lake/wh"}
	c["storage"] = map[string]any{"s3": s3cfg, "remote_signing": true}
	return c
}

func TestAdaptStorage(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		catalog lake {
			remote http://127.0.0.1:9
			storage {
				s3 {
					endpoint http://127.0.0.1:9000
					region us-east-1
					path_style
					access_key_id {env.AWS_ACCESS_KEY_ID}
					secret_access_key {env.AWS_SECRET_ACCESS_KEY}
				}
				remote_signing
				decision_ttl 1m
			}
		}
	}
}
:8080 {
	lakegate_iceberg
}`))
	assert.JSONEq(t, `{"catalogs": [{"name": "lake", "remote": {"url": "http://127.0.0.1:9"},
		"storage": {"s3": {"endpoint": "http://127.0.0.1:9000", "region": "us-east-1", "path_style": true,
			"access_key_id": "{env.AWS_ACCESS_KEY_ID}", "secret_access_key": "{env.AWS_SECRET_ACCESS_KEY}"},
			"remote_signing": true, "decision_ttl": "1m0s"}}]}`, appJSON(t, out, "lakegate"))
}

// A storage block the gateway cannot use stops the config with an error
// naming the catalog and what is wrong.
func TestStorageConfigErrors(t *testing.T) {
	t.Setenv("LG_TEST_STORAGE_SECRET", "s3cret-value")
	ok := map[string]any{"region": "us-east-1", "access_key_id": "AKID", "secret_access_key": "{env.LG_TEST_STORAGE_SECRET}"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for name, tc := range map[string]struct {
		catalog map[string]any
		want    string
	}{
		"no region":       {storageCatalog(with("region", nil)), "storage s3: region is required"},
		"no secret":       {storageCatalog(with("secret_access_key", nil)), "access_key_id and secret_access_key are required"},
		"endpoint path":   {storageCatalog(with("endpoint", "http://minio:9000/bucket")), "must be http(s)://host[:port] with no path"},
		"endpoint scheme": {storageCatalog(with("endpoint", "s3://minio:9000")), "must be http(s)://host[:port]"},
		"no s3": {func() map[string]any {
			c := remote("r", "http://127.0.0.1:9", nil)
			c["storage"] = map[string]any{"remote_signing": true}
			return c
		}(), "storage: needs an s3 block"},
		// A remote backend's locations are confined to allowed_locations:
		// none configured is refused, not "sign anything".
		"remote, no allowed_locations": {func() map[string]any {
			c := storageCatalog(ok)
			delete(c, "allowed_locations")
			return c
		}(), "storage on a remote catalog needs allowed_locations"},
		"decision ttl": {func() map[string]any {
			c := storageCatalog(ok)
			c["storage"].(map[string]any)["decision_ttl"] = "1h"
			return c
		}(), "decision_ttl 1h0m0s is out of range"},
	} {
		t.Run(name, func(t *testing.T) { assertStorageRefused(t, tc.catalog, tc.want) })
	}
}

// assertStorageRefused: a config with catalog "r" does not load, the
// error names the catalog and want, and never the secret.
func assertStorageRefused(t *testing.T, catalog map[string]any, want string) {
	t.Helper()
	err := caddy.Load(caddyJSON(t, freeAddr(t), map[string]any{"catalogs": []any{catalog}}), true)
	t.Cleanup(func() { _ = caddy.Stop() })
	require.Error(t, err)
	assert.Contains(t, err.Error(), `catalog "r"`)
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, err.Error(), "s3cret-value")
}

// Every sign request is audited: the access log names the principal,
// catalog, table and access (never the signature, the URI or a key), and
// lakegate_storage_signs_total counts it by outcome.
func TestSignRequestAudit(t *testing.T) {
	st := fakeStore(t)
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/wh"
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	backend := embeddedtest.Serve(t, cfg)
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{cfg.Warehouse}
	lake["storage"] = map[string]any{"remote_signing": true, "s3": map[string]any{"endpoint": st.endpoint,
		"region": st.region, "path_style": true, "access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)}}
	g := startObserved(t, map[string]any{"catalogs": []any{lake}}, map[string]string{"alice": "alice-token"})
	createSignTable(t, g.base, "alice-token")

	counts := func() (signed, refused float64) {
		m := g.metrics(t)
		return sample(m, "lakegate_storage_signs_total", map[string]string{"catalog": "lake", "access": "read", "outcome": "signed"}),
			sample(m, "lakegate_storage_signs_total", map[string]string{"catalog": "lake", "access": "read", "outcome": "refused"})
	}
	signed0, refused0 := counts()
	obj := st.endpoint + "/" + st.bucket + "/" + tableKey + "/data/f.parquet"
	for range 2 { // the second on the decision the first made
		status, _ := g.call(t, http.MethodPost, signPath, "alice-token", signReq("GET", obj))
		require.Equal(t, http.StatusOK, status)
	}
	status, _ := g.call(t, http.MethodPost, signPath, "alice-token", signReq("GET", st.endpoint+"/"+st.bucket+"/wh/elsewhere/f"))
	require.Equal(t, http.StatusForbidden, status)
	signed1, refused1 := counts()
	assert.Equal(t, 2.0, signed1-signed0)
	assert.Equal(t, 1.0, refused1-refused0)

	var signs []map[string]any
	require.Eventually(t, func() bool {
		signs = signs[:0]
		for _, line := range accessLines(t, g.accessLog) {
			if lg, ok := line["lakegate"].(map[string]any); ok && lg["operation"] == "signRequest" {
				signs = append(signs, lg)
			}
		}
		return len(signs) == 3
	}, 5*time.Second, 20*time.Millisecond)
	for i, decision := range []string{"allow", "allow", "deny"} {
		assert.Equal(t, "alice", signs[i]["principal"])
		assert.Equal(t, "lake", signs[i]["catalog"])
		assert.Equal(t, "sales.t", signs[i]["table"])
		assert.Equal(t, "read", signs[i]["storage_access"])
		assert.Equal(t, decision, signs[i]["decision"], "%v", signs[i])
	}
	raw, err := os.ReadFile(g.accessLog)
	require.NoError(t, err)
	for _, leak := range []string{"Signature=", "Credential=", st.secret, "f.parquet"} {
		assert.NotContains(t, string(raw), leak)
	}
}

// An embedded catalog on S3 takes its FileIO keys from the catalog's
// storage block: configured once, held by the gateway, never answered
// with (not as vended credentials, not in /v1/config).
func TestEmbeddedCatalogUsesStorageKeys(t *testing.T) {
	st := fakeStore(t)
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{"catalogs": []any{map[string]any{
		"name": "lake",
		"embedded": map[string]any{"dsn": t.TempDir() + "/catalog.db",
			"warehouse": "s3://" + st.bucket + "/wh"},
		"storage": map[string]any{"remote_signing": true, "s3": map[string]any{"endpoint": st.endpoint,
			"region": st.region, "path_style": true, "access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)}},
	}}}, map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	createSignTable(t, base, "")
	status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", "", "",
		map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), `"metadata-location":"s3://`+st.bucket+`/wh/sales.db/t/metadata/`,
		"the embedded catalog wrote the table's metadata to S3 with the storage keys")
	assert.NotContains(t, string(body), st.secret)
	assert.NotContains(t, string(body), "storage-credentials")
	status, body = do(t, http.MethodGet, base+"/v1/config?warehouse=lake", "", "", nil)
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, string(body), st.secret)
	assert.NotContains(t, string(body), st.keyID)
	// loadCredentials would hand out the embedded catalog's keys: refused.
	status, body = do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t/credentials", "", "",
		map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
	assert.Equal(t, http.StatusForbidden, status, "%s", body)
	assert.Equal(t, "ForbiddenException", errorType(body))
	assert.NotContains(t, string(body), st.secret)
	// Neither does a scan plan carry them.
	status, body = do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables/t/plan", "", `{}`,
		map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.NotContains(t, string(body), st.secret)
	assert.NotContains(t, string(body), "storage-credentials")
	// Nor do the Delta doors, whose translators ask the pipeline for
	// vended credentials in process (translate.Pipelines).
	app, err := caddy.ActiveContext().App("lakegate")
	require.NoError(t, err)
	vended := http.Header{"X-Iceberg-Access-Delegation": {"vended-credentials"}}
	res, err := app.(*lakegate.App).Serve(context.Background(), "lake", translate.Call{
		Route: icerest.Route{Operation: icerest.OpLoadTable, Namespace: []string{"sales"}, Table: "t"}, Header: vended})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	assert.NotContains(t, string(res.Body), st.secret)
	assert.NotContains(t, string(res.Body), "storage-credentials")
	res, err = app.(*lakegate.App).Serve(context.Background(), "lake", translate.Call{
		Route: icerest.Route{Operation: icerest.OpLoadCredentials, Namespace: []string{"sales"}, Table: "t"}, Header: vended})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	assert.NotContains(t, string(res.Body), st.secret)
}
