package gateway_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// stsRecorder is an STS endpoint that records every AssumeRole asked of
// it (its form: RoleArn, RoleSessionName, DurationSeconds, Policy) and
// either forwards it to a real STS (moto), keeping the Host the caller
// signed, or answers with made-up credentials.
type stsRecorder struct {
	*httptest.Server
	mu    sync.Mutex
	calls []url.Values
}

// fakeVendedSecret is the secret the made-up STS vends.
const fakeVendedSecret = "vended-secret-from-sts"

func newSTSRecorder(t *testing.T, forward string) *stsRecorder {
	rec := &stsRecorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		rec.mu.Lock()
		rec.calls = append(rec.calls, form)
		n := len(rec.calls)
		rec.mu.Unlock()
		if forward == "" {
			w.Header().Set("Content-Type", "text/xml")
			fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>ASIAFAKE%04d</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>
<SessionToken>token-%d</SessionToken><Expiration>%s</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/r/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></AssumeRoleResponse>`,
				n, fakeVendedSecret, n, time.Now().Add(15*time.Minute).UTC().Format(time.RFC3339))
			return
		}
		req, err := http.NewRequest(r.Method, forward+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Host = r.Host // the caller signed this host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (s *stsRecorder) recorded() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.calls...)
}

// vendPolicy lets readers load tables and credentials with no
// strip_credentials and read the table's files, writers everything, and
// nobody nothing: the read-only outcome under a policy that vends to
// readers (the roles policy withholds vended keys from readers).
const vendPolicy = `package lakegate.vendtest

groups := {g | some g in input.principal.groups}

access := object.get(input, ["request", "storage_access"], "")

decision := {"allow": true} if {
	"writer" in groups
} else := {"allow": true} if {
	"reader" in groups
	input.operation != "signRequest"
	not input.operation in {"createTable", "createNamespace", "updateTable", "dropTable"}
} else := {"allow": true} if {
	"reader" in groups
	input.operation == "signRequest"
	access == "read"
} else := {"allow": false, "reason": sprintf("%s may not %s", [input.principal.id, input.operation])}
`

// vendGateway fronts an embedded catalog on st whose storage block vends
// credentials from sts as roleARN, with clients reader, writer and
// nobody (no group), under the roles policy or vendPolicy.
func vendGateway(t *testing.T, st s3Store, sts, roleARN string, roles bool) string {
	policy := map[string]any{"dir": "../../policies", "package": "lakegate.roles"}
	if !roles {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "vend.rego"), []byte(vendPolicy), 0o600))
		policy = map[string]any{"dir": dir, "package": "lakegate.vendtest"}
	}
	return vendGatewayUnder(t, st, sts, roleARN, policy)
}

// vendGatewayUnder is vendGateway under the gateway policy block policy.
func vendGatewayUnder(t *testing.T, st s3Store, sts, roleARN string, policy map[string]any) string {
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Warehouse = "s3://" + st.bucket + "/wh"
	cfg.Properties = map[string]string{"s3.endpoint": st.endpoint, "s3.region": st.region,
		"s3.access-key-id": st.keyID, "s3.secret-access-key": st.secret, "s3.path-style-access": "true"}
	backend := embeddedtest.Serve(t, cfg)
	lake := remote("lake", backend.URL, nil)
	lake["allowed_locations"] = []string{cfg.Warehouse}
	lake["storage"] = map[string]any{
		"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
			"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
		"vended_credentials": map[string]any{"role_arn": roleARN, "sts_endpoint": sts, "duration": "15m"},
		"remote_signing":     true,
	}
	return gateway(t, map[string]any{
		"catalogs": []any{lake},
		"identity": map[string]any{"required": true, "issuer": map[string]any{"clients": []any{
			map[string]any{"id": "reader", "secret_bcrypt": bcryptHash(t, "reader-secret"), "groups": []string{"reader"}},
			map[string]any{"id": "writer", "secret_bcrypt": bcryptHash(t, "writer-secret"), "groups": []string{"writer"}},
			map[string]any{"id": "nobody", "secret_bcrypt": bcryptHash(t, "nobody-secret"), "groups": []string{"none"}},
		}}},
		"policy": policy,
	})
}

const testRoleARN = "arn:aws:iam::123456789012:role/lakegate-vend"

// vendedAnswer is what a table answer or loadCredentials carries.
type vendedAnswer struct {
	Config      map[string]string `json:"config"`
	Credentials []struct {
		Prefix string            `json:"prefix"`
		Config map[string]string `json:"config"`
	} `json:"storage-credentials"`
}

func loadVended(t *testing.T, base, tok string) (int, vendedAnswer, []byte) {
	status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", tok, "",
		map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
	var res vendedAnswer
	if status == http.StatusOK {
		require.NoError(t, json.Unmarshal(body, &res), "%s", body)
	}
	return status, res, body
}

// wantSessionPolicy is the exact session policy for lakegate.sales.t in
// bucket, read-only or read-write.
func wantSessionPolicy(bucket string, write bool) map[string]any {
	return sessionPolicyFor(bucket, tableKey, write)
}

// sessionPolicyFor is the exact session policy for the table at prefix
// in bucket, read-only or read-write.
func sessionPolicyFor(bucket, prefix string, write bool) map[string]any {
	actions := []any{"s3:GetObject"}
	if write {
		actions = append(actions, "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload")
	}
	return map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Effect": "Allow", "Action": actions, "Resource": []any{"arn:aws:s3:::" + bucket + "/" + prefix + "/*"}},
		map[string]any{"Effect": "Allow", "Action": []any{"s3:ListBucket"}, "Resource": []any{"arn:aws:s3:::" + bucket},
			"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []any{prefix + "/*"}}}},
	}}
}

func sessionPolicyOf(t *testing.T, call url.Values) map[string]any {
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(call.Get("Policy")), &doc), "the session policy is JSON: %q", call.Get("Policy"))
	return doc
}

// With a made-up STS: writers get read-write keys, readers read-only
// ones, each scoped to the table by the session policy sent to STS
// (checked exactly); the keys travel in storage-credentials and config,
// the gateway's own never; credentials are reused for the same principal
// and access only; loadCredentials is decided by the policy; nobody gets
// nothing.
func TestVendedCredentials(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	base := vendGateway(t, st, sts.URL, testRoleARN, false)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	nobody := issuedToken(t, base, "nobody", "nobody-secret")
	createSignTable(t, base, writer)
	require.Empty(t, sts.recorded(), "nothing vended unasked")

	check := func(t *testing.T, res vendedAnswer, body []byte, n int) {
		require.Len(t, res.Credentials, 1, "%s", body)
		c := res.Credentials[0]
		assert.Equal(t, "s3://"+st.bucket+"/"+tableKey, c.Prefix)
		assert.Equal(t, fmt.Sprintf("ASIAFAKE%04d", n), c.Config["s3.access-key-id"])
		assert.Equal(t, fakeVendedSecret, c.Config["s3.secret-access-key"])
		assert.Equal(t, fmt.Sprintf("token-%d", n), c.Config["s3.session-token"])
		assert.NotEmpty(t, c.Config["s3.session-token-expires-at-ms"])
		assert.Equal(t, st.endpoint, c.Config["s3.endpoint"])
		assert.Equal(t, "true", c.Config["s3.path-style-access"])
		assert.Equal(t, st.region, c.Config["client.region"])
		for k, v := range c.Config {
			assert.Equal(t, v, res.Config[k], "config carries %s too, for clients that read only config", k)
		}
		assert.NotContains(t, string(body), st.secret)
		assert.NotContains(t, string(body), st.keyID)
	}

	status, res, body := loadVended(t, base, writer)
	require.Equal(t, http.StatusOK, status, "%s", body)
	check(t, res, body, 1)
	calls := sts.recorded()
	require.Len(t, calls, 1)
	assert.Equal(t, "AssumeRole", calls[0].Get("Action"))
	assert.Equal(t, testRoleARN, calls[0].Get("RoleArn"))
	assert.Equal(t, "lakegate-writer", calls[0].Get("RoleSessionName"))
	assert.Equal(t, "900", calls[0].Get("DurationSeconds"))
	assert.Equal(t, wantSessionPolicy(st.bucket, true), sessionPolicyOf(t, calls[0]))

	status, res, body = loadVended(t, base, reader)
	require.Equal(t, http.StatusOK, status, "%s", body)
	check(t, res, body, 2)
	calls = sts.recorded()
	require.Len(t, calls, 2)
	assert.Equal(t, "lakegate-reader", calls[1].Get("RoleSessionName"))
	assert.Equal(t, wantSessionPolicy(st.bucket, false), sessionPolicyOf(t, calls[1]), "readers get read-only keys")

	t.Run("reused per principal and access", func(t *testing.T) {
		status, res, body := loadVended(t, base, writer)
		require.Equal(t, http.StatusOK, status)
		check(t, res, body, 1)
		status, res, body = loadVended(t, base, reader)
		require.Equal(t, http.StatusOK, status)
		check(t, res, body, 2)
		assert.Len(t, sts.recorded(), 2, "no STS call for keys vended moments ago")
	})

	t.Run("loadCredentials", func(t *testing.T) {
		path := base + "/v1/lake/namespaces/sales/tables/t/credentials"
		for _, c := range []struct {
			tok string
			n   int
		}{{writer, 1}, {reader, 2}} {
			status, body := do(t, http.MethodGet, path, c.tok, "", nil)
			require.Equal(t, http.StatusOK, status, "%s", body)
			var res vendedAnswer
			require.NoError(t, json.Unmarshal(body, &res))
			check(t, vendedAnswer{Config: res.Credentials[0].Config, Credentials: res.Credentials}, body, c.n)
		}
		status, body := do(t, http.MethodGet, path, nobody, "", nil)
		assert.Equal(t, http.StatusForbidden, status, "%s", body)
		assert.Equal(t, "ForbiddenException", errorType(body))
		status, body = do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/nope/credentials", writer, "", nil)
		assert.Equal(t, http.StatusNotFound, status, "%s", body)
		assert.Equal(t, "NoSuchTableException", errorType(body))
		assert.Len(t, sts.recorded(), 2, "nothing vended for the refused")
	})

	t.Run("nobody", func(t *testing.T) {
		status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", nobody, "",
			map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
		assert.Equal(t, http.StatusForbidden, status, "%s", body)
	})

	t.Run("not asked", func(t *testing.T) {
		status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", writer, "", nil)
		require.Equal(t, http.StatusOK, status)
		assert.NotContains(t, string(body), "storage-credentials")
		assert.NotContains(t, string(body), fakeVendedSecret)
		assert.NotContains(t, string(body), st.secret)
	})

	t.Run("a location no session policy can scope", func(t *testing.T) {
		status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables", writer,
			`{"name":"w","location":"s3://`+st.bucket+`/wh/sales.db/w*","schema":{"type":"struct","schema-id":0,"fields":[]}}`, nil)
		require.Equal(t, http.StatusOK, status, "%s", body)
		n := len(sts.recorded())
		for _, path := range []string{"/v1/lake/namespaces/sales/tables/w", "/v1/lake/namespaces/sales/tables/w/credentials"} {
			status, body = do(t, http.MethodGet, base+path, writer, "",
				map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
			assert.Equal(t, http.StatusForbidden, status, "%s", body)
			assert.Contains(t, string(body), "wildcard")
		}
		assert.Len(t, sts.recorded(), n, "STS not asked")
	})

	t.Run("createTable", func(t *testing.T) {
		status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables", writer,
			`{"name":"t3","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}}`,
			map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"})
		require.Equal(t, http.StatusOK, status, "%s", body)
		var res vendedAnswer
		require.NoError(t, json.Unmarshal(body, &res))
		require.Len(t, res.Credentials, 1)
		assert.Equal(t, "s3://"+st.bucket+"/wh/sales.db/t3", res.Credentials[0].Prefix)
		calls := sts.recorded()
		assert.Contains(t, calls[len(calls)-1].Get("Policy"), `"arn:aws:s3:::`+st.bucket+`/wh/sales.db/t3/*"`)
		assert.NotContains(t, string(body), st.secret)
	})
}

// Under the roles policy a reader's allow carries strip_credentials and
// its loadCredentials is denied: it is vended nothing (remote signing is
// its way to the files); a writer is vended read-write keys.
func TestVendedCredentialsRolesPolicy(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	base := vendGateway(t, st, sts.URL, testRoleARN, true)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	createSignTable(t, base, writer)

	status, res, body := loadVended(t, base, reader)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Empty(t, res.Credentials)
	assert.NotContains(t, string(body), "s3.secret-access-key")
	status, body = do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t/credentials", reader, "", nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", body)
	assert.Empty(t, sts.recorded())

	// Asked for either, the reader gets remote signing, the writer (who
	// may have keys) the first it lists.
	both := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials, remote-signing"}
	status, body = do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", reader, "", both)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &res))
	assert.Equal(t, "true", res.Config["s3.remote-signing-enabled"])
	assert.Empty(t, res.Credentials)
	assert.Empty(t, sts.recorded())

	status, body = do(t, http.MethodGet, base+"/v1/lake/namespaces/sales/tables/t", writer, "", both)
	require.Equal(t, http.StatusOK, status, "%s", body)
	res = vendedAnswer{}
	require.NoError(t, json.Unmarshal(body, &res))
	require.Len(t, res.Credentials, 1)
	assert.Empty(t, res.Config["s3.remote-signing-enabled"])
	require.Len(t, sts.recorded(), 1)
	assert.Equal(t, wantSessionPolicy(st.bucket, true), sessionPolicyOf(t, sts.recorded()[0]))
}

// motoRole creates, with the gateway's key, an IAM role on moto that may
// do anything on S3 (the session policy narrows it), and returns its ARN.
func motoRole(t *testing.T, st s3Store) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "lakegate-vend-" + hex.EncodeToString(b)
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}`
	perms := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`
	iam := func(form url.Values) string {
		form.Set("Version", "2010-05-08")
		body := form.Encode()
		req, err := http.NewRequest(http.MethodPost, st.endpoint+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sum := sha256Hex(body)
		require.NoError(t, v4.NewSigner().SignHTTP(context.Background(),
			aws.Credentials{AccessKeyID: st.keyID, SecretAccessKey: st.secret}, req, sum, "iam", st.region, time.Now()))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "IAM %s: %s", form.Get("Action"), out)
		return string(out)
	}
	out := iam(url.Values{"Action": {"CreateRole"}, "RoleName": {name}, "AssumeRolePolicyDocument": {trust}})
	iam(url.Values{"Action": {"PutRolePolicy"}, "RoleName": {name}, "PolicyName": {"s3"}, "PolicyDocument": {perms}})
	i, j := strings.Index(out, "<Arn>"), strings.Index(out, "</Arn>")
	require.True(t, i >= 0 && j > i, "%s", out)
	return out[i+len("<Arn>") : j]
}

// Through moto (STS and S3, every signature checked): the writer's vended
// keys PUT and GET a file inside the table; the reader's GET it. moto
// 5.2.6 does not evaluate session policies (its access control collects
// only the role's own policies), so the reader's PUT is not refused
// there: what keeps it read-only on AWS is the session policy, checked
// exactly as sent to STS.
func TestVendedCredentialsOnMoto(t *testing.T) {
	st := motoStore(t)
	role := motoRole(t, st)
	sts := newSTSRecorder(t, st.endpoint)
	base := vendGateway(t, st, sts.URL, role, false)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	createSignTable(t, base, writer)

	client := func(res vendedAnswer) *s3.Client {
		require.Len(t, res.Credentials, 1)
		c := res.Credentials[0].Config
		return s3.New(s3.Options{Region: c["client.region"], BaseEndpoint: aws.String(c["s3.endpoint"]),
			UsePathStyle: c["s3.path-style-access"] == "true",
			Credentials:  credentials.NewStaticCredentialsProvider(c["s3.access-key-id"], c["s3.secret-access-key"], c["s3.session-token"])})
	}
	ctx := context.Background()
	key := tableKey + "/data/vended.parquet"
	content := []byte("written with vended keys")

	status, wres, body := loadVended(t, base, writer)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.NotContains(t, string(body), st.secret)
	assert.NotEqual(t, st.keyID, wres.Credentials[0].Config["s3.access-key-id"], "temporary keys, not the gateway's")
	w := client(wres)
	_, err := w.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key), Body: bytes.NewReader(content)})
	require.NoError(t, err, "the writer's vended keys PUT inside the table")
	got, err := w.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key)})
	require.NoError(t, err)
	b, _ := io.ReadAll(got.Body)
	got.Body.Close()
	assert.Equal(t, content, b)

	status, rres, body := loadVended(t, base, reader)
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.NotContains(t, string(body), st.secret)
	got, err = client(rres).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key)})
	require.NoError(t, err, "the reader's vended keys GET inside the table")
	b, _ = io.ReadAll(got.Body)
	got.Body.Close()
	assert.Equal(t, content, b)

	// A wrong secret with the vended key id is refused: moto checks the
	// vended keys' signatures like any other.
	c := rres.Credentials[0].Config
	bad := s3.New(s3.Options{Region: st.region, BaseEndpoint: aws.String(st.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(c["s3.access-key-id"], c["s3.secret-access-key"]+"x", c["s3.session-token"])})
	_, err = bad.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SignatureDoesNotMatch")

	calls := sts.recorded()
	require.Len(t, calls, 2)
	assert.Equal(t, role, calls[0].Get("RoleArn"))
	assert.Equal(t, wantSessionPolicy(st.bucket, true), sessionPolicyOf(t, calls[0]))
	assert.Equal(t, wantSessionPolicy(st.bucket, false), sessionPolicyOf(t, calls[1]))
}

// Through MinIO, which evaluates AssumeRole's session policy (moto does
// not), under policies/storage_roles.rego: the reader's vended keys read
// the table's files but MinIO refuses their PUT and DELETE there and
// their read of another table; the writer's write inside the table and
// nowhere else. MinIO ignores RoleArn for AssumeRole with a user's keys
// (the keys inherit the user's, here root's, rights, narrowed by the
// session policy), so the gateway's well-formed testRoleARN is enough.
// Every refusal here comes from the session policy alone: widen it in
// storage.SessionPolicy (say, s3:PutObject for reads, or a resource at
// the bucket's root) and this test fails.
func TestVendedCredentialsOnMinIO(t *testing.T) {
	st := minioStore(t)
	base := vendGatewayUnder(t, st, st.endpoint, testRoleARN,
		map[string]any{"dir": "../../policies", "package": "lakegate.storage_roles"})
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	createSignTable(t, base, writer)
	status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/tables", writer,
		`{"name":"t2","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", body)

	ctx := context.Background()
	root := st.client()
	put := func(c *s3.Client, key, content string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key),
			Body: strings.NewReader(content)})
		return err
	}
	get := func(c *s3.Client, key string) (string, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		return string(b), err
	}
	vended := func(tok string) *s3.Client {
		status, res, body := loadVended(t, base, tok)
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Len(t, res.Credentials, 1, "%s", body)
		assert.NotContains(t, string(body), st.secret)
		c := res.Credentials[0].Config
		require.NotEqual(t, st.keyID, c["s3.access-key-id"], "temporary keys, not the gateway's")
		return s3.New(s3.Options{Region: c["client.region"], BaseEndpoint: aws.String(c["s3.endpoint"]),
			UsePathStyle: c["s3.path-style-access"] == "true",
			Credentials:  credentials.NewStaticCredentialsProvider(c["s3.access-key-id"], c["s3.secret-access-key"], c["s3.session-token"])})
	}
	// refused: MinIO answered 403 AccessDenied (not, say, a bad signature).
	refused := func(err error, what string) {
		t.Helper()
		var re *awshttp.ResponseError
		require.True(t, errors.As(err, &re), "%s: want AccessDenied, got %v", what, err)
		assert.Equal(t, http.StatusForbidden, re.HTTPStatusCode(), what)
		assert.Contains(t, err.Error(), "AccessDenied", what)
	}

	inside := tableKey + "/data/vended.parquet"
	other := "wh/sales.db/t2/data/other.parquet"
	require.NoError(t, put(root, other, "another table's file"))

	w := vended(writer)
	require.NoError(t, put(w, inside, "written with vended keys"), "the writer's vended keys PUT inside the table")
	refused(put(w, other, "x"), "the writer's vended keys PUT in another table")
	refused(put(w, "wh/outside.parquet", "x"), "the writer's vended keys PUT outside every table")

	r := vended(reader)
	got, err := get(r, inside)
	require.NoError(t, err, "the reader's vended keys GET inside the table")
	assert.Equal(t, "written with vended keys", got)
	refused(put(r, inside, "overwritten"), "the reader's vended keys PUT inside the table")
	refused(put(r, tableKey+"/data/new.parquet", "x"), "the reader's vended keys PUT a new file in the table")
	_, err = r.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(inside)})
	refused(err, "the reader's vended keys DELETE inside the table")
	_, err = get(r, other)
	refused(err, "the reader's vended keys GET another table's file")

	// What the refusals left: the file as the writer wrote it.
	got, err = get(root, inside)
	require.NoError(t, err)
	assert.Equal(t, "written with vended keys", got)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestAdaptVendedCredentials(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		catalog lake {
			remote http://127.0.0.1:9
			storage {
				s3 {
					region us-east-1
					access_key_id {env.AWS_ACCESS_KEY_ID}
					secret_access_key {env.AWS_SECRET_ACCESS_KEY}
				}
				vended_credentials {
					role_arn arn:aws:iam::123456789012:role/lakegate-vend
					duration 1h
					sts_endpoint http://127.0.0.1:5000
				}
			}
		}
	}
}
:8080 {
	lakegate_iceberg
}`))
	assert.JSONEq(t, `{"catalogs": [{"name": "lake", "remote": {"url": "http://127.0.0.1:9"},
		"storage": {"s3": {"region": "us-east-1",
			"access_key_id": "{env.AWS_ACCESS_KEY_ID}", "secret_access_key": "{env.AWS_SECRET_ACCESS_KEY}"},
			"vended_credentials": {"role_arn": "arn:aws:iam::123456789012:role/lakegate-vend", "duration": "1h0m0s",
				"sts_endpoint": "http://127.0.0.1:5000"}}}]}`, appJSON(t, out, "lakegate"))
}

// A vended_credentials block the gateway cannot use stops the config with
// an error naming the catalog and the field.
func TestVendedCredentialsConfigErrors(t *testing.T) {
	t.Setenv("LG_TEST_STORAGE_SECRET", "s3cret-value")
	s3cfg := map[string]any{"region": "us-east-1", "access_key_id": "AKID", "secret_access_key": "{env.LG_TEST_STORAGE_SECRET}"}
	for name, tc := range map[string]struct {
		vend map[string]any
		want string
	}{
		"no role":          {map[string]any{}, "role_arn"},
		"a user, no role":  {map[string]any{"role_arn": "arn:aws:iam::123456789012:user/lakegate"}, "is not an IAM role ARN"},
		"short duration":   {map[string]any{"role_arn": testRoleARN, "duration": "5m"}, "duration 5m0s is out of range"},
		"long duration":    {map[string]any{"role_arn": testRoleARN, "duration": "24h"}, "duration 24h0m0s is out of range"},
		"sts endpoint":     {map[string]any{"role_arn": testRoleARN, "sts_endpoint": "127.0.0.1:5000"}, "sts_endpoint"},
		"sts endpoint url": {map[string]any{"role_arn": testRoleARN, "sts_endpoint": "http://u:p@sts:5000"}, "sts_endpoint"},
	} {
		t.Run(name, func(t *testing.T) {
			c := remote("r", "http://127.0.0.1:9", nil)
			c["storage"] = map[string]any{"s3": s3cfg, "vended_credentials": tc.vend}
			assertStorageRefused(t, c, tc.want)
		})
	}
}

// Every vending is audited: the access log names the principal, catalog,
// table and access (never the keys), and lakegate_storage_vends_total
// counts it by outcome.
func TestVendedCredentialsAudit(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	backend, warehouse := storeBackend(t, st, "wh")
	lake := storeCatalog(t, "lake", backend, warehouse, st, sts.URL, false)
	g := startObserved(t, map[string]any{"catalogs": []any{lake}}, map[string]string{"alice": "alice-token"})
	createSignTable(t, g.base, "alice-token")

	count := func(outcome string) float64 {
		return sample(g.metrics(t), "lakegate_storage_vends_total", map[string]string{"catalog": "lake", "access": "write", "outcome": outcome})
	}
	vended0, reused0 := count("vended"), count("reused")
	vend := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"}
	for range 2 { // the second reuses the first's keys
		status, body := do(t, http.MethodGet, g.base+"/v1/lake/namespaces/sales/tables/t", "alice-token", "", vend)
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	status, body := g.call(t, http.MethodGet, "/v1/lake/namespaces/sales/tables/t/credentials", "alice-token", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Equal(t, 1.0, count("vended")-vended0)
	assert.Equal(t, 2.0, count("reused")-reused0)
	assert.Len(t, sts.recorded(), 1)

	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = lines[:0]
		for _, line := range accessLines(t, g.accessLog) {
			if lg, ok := line["lakegate"].(map[string]any); ok && lg["storage_access"] != nil {
				lines = append(lines, lg)
			}
		}
		return len(lines) == 3
	}, 5*time.Second, 20*time.Millisecond)
	for i, op := range []string{"loadTable", "loadTable", "loadCredentials"} {
		assert.Equal(t, op, lines[i]["operation"])
		assert.Equal(t, "alice", lines[i]["principal"])
		assert.Equal(t, "lake", lines[i]["catalog"])
		assert.Equal(t, "sales.t", lines[i]["table"])
		assert.Equal(t, "write", lines[i]["storage_access"])
	}
	raw, err := os.ReadFile(g.accessLog)
	require.NoError(t, err)
	for _, leak := range []string{fakeVendedSecret, "ASIAFAKE", "token-1", st.secret} {
		assert.NotContains(t, string(raw), leak)
	}
}
