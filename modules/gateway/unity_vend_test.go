package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ucVendGateway serves UC's API (lakegate_delta) and the Iceberg door in
// front of catalog lake, embedded in the gateway, its warehouse
// s3://<bucket>/wh on st, whose storage block vends credentials from sts
// as roleARN, then the extra catalogs; clients reader, writer and nobody
// under vendPolicy.
func ucVendGateway(t *testing.T, st s3Store, sts, roleARN string, extra ...any) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vend.rego"), []byte(vendPolicy), 0o600))
	addr := freeAddr(t)
	return serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{
		"catalogs": append([]any{map[string]any{
			"name":     "lake",
			"embedded": map[string]any{"dsn": filepath.Join(t.TempDir(), "catalog.db"), "warehouse": "s3://" + st.bucket + "/wh"},
			"storage": map[string]any{
				"s3": map[string]any{"endpoint": st.endpoint, "region": st.region, "path_style": true,
					"access_key_id": st.keyID, "secret_access_key": secretRef(t, st.secret)},
				"vended_credentials": map[string]any{"role_arn": roleARN, "sts_endpoint": sts, "duration": "15m"},
			},
		}}, extra...),
		"identity": map[string]any{"required": true, "issuer": map[string]any{"clients": []any{
			map[string]any{"id": "reader", "secret_bcrypt": bcryptHash(t, "reader-secret"), "groups": []string{"reader"}},
			map[string]any{"id": "writer", "secret_bcrypt": bcryptHash(t, "writer-secret"), "groups": []string{"writer"}},
			map[string]any{"id": "nobody", "secret_bcrypt": bcryptHash(t, "nobody-secret"), "groups": []string{"none"}},
		}}},
		"policy": map[string]any{"dir": dir, "package": "lakegate.vendtest"},
	}, map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
}

// putDeltaLog writes version 0 of a Delta log at key (a table's folder in
// st's bucket) with the store's own keys, as the data platform's writer
// (an engine with keys of its own) does before registering the table.
func putDeltaLog(t *testing.T, st s3Store, key string) string {
	t.Helper()
	commit := `{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE"}}` + "\n" + protocolLine + "\n" + metaLine(idRegion) + "\n"
	logKey := key + "/_delta_log/00000000000000000000.json"
	_, err := st.client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(st.bucket),
		Key: aws.String(logKey), Body: strings.NewReader(commit)})
	require.NoError(t, err)
	return logKey
}

// ucTempCreds is UC's TemporaryCredentials as the tests read it.
type ucTempCreds struct {
	AWS *struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
		SessionToken    string `json:"session_token"`
	} `json:"aws_temp_credentials"`
	ExpirationTime int64  `json:"expiration_time"`
	URL            string `json:"url"`
}

func ucVended(t *testing.T, base, token, tableID, op string) (int, ucTempCreds, map[string]any) {
	t.Helper()
	code, out := tableCreds(t, base, token, map[string]any{"table_id": tableID, "operation": op})
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	var c ucTempCreds
	require.NoError(t, json.Unmarshal(raw, &c), "%s", raw)
	return code, c, out
}

// s3With is an S3 client on st holding c's keys.
func s3With(st s3Store, c ucTempCreds) *s3.Client {
	return s3.New(s3.Options{Region: st.region, BaseEndpoint: aws.String(st.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(c.AWS.AccessKeyID, c.AWS.SecretAccessKey, c.AWS.SessionToken)})
}

// ucVendFixture is a vending gateway (ucVendGateway) on st with its
// three principals' tokens and schema lake.sales holding the EXTERNAL
// Delta table orders at wh/ext/orders, registered through UC without
// columns (the gateway reads its log).
type ucVendFixture struct {
	base, writer, reader, nobody string
	key, logKey, loc, id         string
}

func newUCVendFixture(t *testing.T, st s3Store, sts, roleARN string) ucVendFixture {
	t.Helper()
	f := ucVendFixture{base: ucVendGateway(t, st, sts, roleARN), key: "wh/ext/orders"}
	f.writer = issuedToken(t, f.base, "writer", "writer-secret")
	f.reader = issuedToken(t, f.base, "reader", "reader-secret")
	f.nobody = issuedToken(t, f.base, "nobody", "nobody-secret")
	code, out := ucCall(t, http.MethodPost, f.base+unityAPI+"/schemas", f.writer, map[string]any{"name": "sales", "catalog_name": "lake"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	f.logKey = putDeltaLog(t, st, f.key)
	f.loc = "s3://" + st.bucket + "/" + f.key
	code, info := ucCall(t, http.MethodPost, f.base+unityAPI+"/tables", f.writer, map[string]any{
		"name": "orders", "catalog_name": "lake", "schema_name": "sales", "table_type": "EXTERNAL",
		"data_source_format": "DELTA", "storage_location": f.loc})
	require.Equal(t, http.StatusOK, code, "%v", info)
	f.id = info["table_id"].(string)
	return f
}

// UC's temporary table credentials for an EXTERNAL Delta table on S3 in
// a catalog that vends (storage vended_credentials): STS keys, the same
// vending as the Iceberg door's, scoped by the session policy to exactly
// the table's folder, read-only for READ and read-write for READ_WRITE,
// which a reader is refused in UC's error model. Through moto (STS and
// S3, every signature checked): the vended keys read the table's log, and
// the writer's write inside the table.
func TestUnityTemporaryTableCredentialsVendedOnMoto(t *testing.T) {
	st := motoStore(t)
	role := motoRole(t, st)
	sts := newSTSRecorder(t, st.endpoint)
	// Registered as engines register an EXTERNAL table: no columns, the
	// log holds them (read by the gateway with its storage keys).
	f := newUCVendFixture(t, st, sts.URL, role)
	base, writer, reader, nobody := f.base, f.writer, f.reader, f.nobody
	key, logKey, loc, id := f.key, f.logKey, f.loc, f.id
	code, info := ucCall(t, http.MethodGet, base+unityAPI+"/tables/lake.sales.orders", reader, nil)
	require.Equal(t, http.StatusOK, code, "%v", info)
	cols, _ := info["columns"].([]any)
	require.Len(t, cols, 2, "the log's columns: %v", info)
	require.Equal(t, id, info["table_id"])

	ctx := context.Background()
	code, rc, out := ucVended(t, base, reader, id, "READ")
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.NotNil(t, rc.AWS, "aws_temp_credentials: %v", out)
	assert.Equal(t, loc, rc.URL)
	assert.NotEqual(t, st.keyID, rc.AWS.AccessKeyID, "temporary keys, not the gateway's")
	assert.NotEmpty(t, rc.AWS.SessionToken)
	raw, _ := json.Marshal(out)
	assert.NotContains(t, string(raw), st.secret)
	assert.Greater(t, rc.ExpirationTime, time.Now().Add(10*time.Minute).UnixMilli(), "the STS keys' own expiry")
	got, err := s3With(st, rc).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(logKey)})
	require.NoError(t, err, "the reader's vended keys read the table's log")
	b, _ := io.ReadAll(got.Body)
	got.Body.Close()
	assert.Contains(t, string(b), `"protocol"`)

	// A reader asking to write is refused, in UC's model; nobody reads.
	code, _, out = ucVended(t, base, reader, id, "READ_WRITE")
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, _, out = ucVended(t, base, nobody, id, "READ")
	require.NotEqual(t, http.StatusOK, code, "%v", out)

	code, wc, out := ucVended(t, base, writer, id, "READ_WRITE")
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.NotNil(t, wc.AWS, "aws_temp_credentials: %v", out)
	_, err = s3With(st, wc).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.bucket),
		Key: aws.String(key + "/part-00000.parquet"), Body: bytes.NewReader([]byte("data"))})
	require.NoError(t, err, "the writer's vended keys write inside the table")

	calls := sts.recorded()
	require.Len(t, calls, 2, "one AssumeRole per principal and access")
	assert.Equal(t, role, calls[0].Get("RoleArn"))
	assert.Equal(t, "lakegate-reader", calls[0].Get("RoleSessionName"))
	assert.Equal(t, sessionPolicyFor(st.bucket, key, false), sessionPolicyOf(t, calls[0]))
	assert.Equal(t, "lakegate-writer", calls[1].Get("RoleSessionName"))
	assert.Equal(t, sessionPolicyFor(st.bucket, key, true), sessionPolicyOf(t, calls[1]))
}

// The same without moto (gofakes3 and a made-up STS, so it runs in every
// go test): the exact session policies, read-only for READ and read-write
// for READ_WRITE; keys reused per principal and access, never across
// them; the refusals in UC's model; no answer carries the gateway's
// secret.
func TestUnityTemporaryTableCredentialsVended(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	f := newUCVendFixture(t, st, sts.URL, testRoleARN)
	base, reader, writer, nobody, key, id := f.base, f.reader, f.writer, f.nobody, f.key, f.id

	for _, c := range []struct{ token, op string }{{reader, "READ"}, {reader, "READ"}, {writer, "READ_WRITE"}, {writer, "READ"}} {
		code, got, out := ucVended(t, base, c.token, id, c.op)
		require.Equal(t, http.StatusOK, code, "%v", out)
		require.NotNil(t, got.AWS, "%v", out)
		assert.Equal(t, fakeVendedSecret, got.AWS.SecretAccessKey)
		assert.Equal(t, "s3://"+st.bucket+"/"+key, got.URL)
		raw, _ := json.Marshal(out)
		assert.NotContains(t, string(raw), st.secret)
	}
	code, _, out := ucVended(t, base, reader, id, "READ_WRITE")
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")
	code, _, out = ucVended(t, base, nobody, id, "READ")
	ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED")

	// reader READ (reused the second time), writer READ_WRITE, writer READ:
	// one AssumeRole per principal and access.
	calls := sts.recorded()
	require.Len(t, calls, 3)
	for i, want := range []struct {
		session string
		write   bool
	}{{"lakegate-reader", false}, {"lakegate-writer", true}, {"lakegate-writer", false}} {
		assert.Equal(t, testRoleARN, calls[i].Get("RoleArn"))
		assert.Equal(t, want.session, calls[i].Get("RoleSessionName"))
		assert.Equal(t, sessionPolicyFor(st.bucket, key, want.write), sessionPolicyOf(t, calls[i]), "call %d", i)
	}
}

// The Delta API's getTableCredentials for a catalog that vends is the
// same vending as UC's table credentials (gofakes3 and a made-up STS):
// read-only keys for READ, read-write for READ_WRITE, under the exact
// session policies, reused across the two APIs for the same principal
// and access; in the Delta API's model (one credential, the table's
// folder as its prefix, the operation asked, the keys' own expiry); a
// reader's READ_WRITE and a stranger's READ refused (403
// PermissionDeniedException), no answer holding the gateway's secret.
// Before, the translator asked the storage catalog for keys it never
// vends (403).
func TestDeltaTableCredentialsVended(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	f := newUCVendFixture(t, st, sts.URL, testRoleARN)
	base, reader, writer, nobody, key := f.base, f.reader, f.writer, f.nobody, f.key

	creds := func(token, op string) (int, map[string]any) {
		return ucCall(t, http.MethodGet, base+deltaAPI+"/catalogs/lake/schemas/sales/tables/orders/credentials?operation="+op, token, nil)
	}
	for _, c := range []struct{ token, op string }{{reader, "READ"}, {writer, "READ_WRITE"}, {reader, "READ"}} {
		code, out := creds(c.token, c.op)
		require.Equal(t, http.StatusOK, code, "%v", out)
		list, _ := out["storage-credentials"].([]any)
		require.Len(t, list, 1, "%v", out)
		sc := list[0].(map[string]any)
		assert.Equal(t, "s3://"+st.bucket+"/"+key+"/", sc["prefix"], "the table's folder, no sibling")
		assert.Equal(t, c.op, sc["operation"])
		cfg := sc["config"].(map[string]any)
		assert.Equal(t, fakeVendedSecret, cfg["s3.secret-access-key"])
		assert.NotEmpty(t, cfg["s3.session-token"])
		assert.Equal(t, st.endpoint, cfg["s3.endpoint"])
		assert.NotContains(t, cfg, "s3.session-token-expires-at-ms", "the expiry is the credential's own field")
		exp, _ := sc["expiration-time-ms"].(float64)
		assert.Greater(t, int64(exp), time.Now().Add(10*time.Minute).UnixMilli(), "the STS keys' own expiry")
		raw, _ := json.Marshal(out)
		assert.NotContains(t, string(raw), st.secret)
	}
	// UC's table credentials for the same principal and access reuse the keys.
	code, rc, out := ucVended(t, base, reader, f.id, "READ")
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.NotNil(t, rc.AWS)

	for _, c := range []struct{ token, op string }{{reader, "READ_WRITE"}, {nobody, "READ"}} {
		code, out := creds(c.token, c.op)
		assert.Equal(t, http.StatusForbidden, code, "%v", out)
		e, _ := out["error"].(map[string]any)
		assert.Equal(t, "PermissionDeniedException", e["type"], "%v", out)
	}
	code, out = creds(writer, "WRITE")
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)

	calls := sts.recorded()
	require.Len(t, calls, 2, "one AssumeRole per principal and access, shared by both APIs")
	assert.Equal(t, "lakegate-reader", calls[0].Get("RoleSessionName"))
	assert.Equal(t, sessionPolicyFor(st.bucket, key, false), sessionPolicyOf(t, calls[0]))
	assert.Equal(t, "lakegate-writer", calls[1].Get("RoleSessionName"))
	assert.Equal(t, sessionPolicyFor(st.bucket, key, true), sessionPolicyOf(t, calls[1]))
}

// pathVendTables creates, through the Iceberg door as writer, the tables
// path credentials are decided against: sales.t1 and sales.t10 (sibling
// prefixes) under wh/ext, and sales.sub.deep (a nested namespace) at
// wh/nested/deep whose data lie at wh/datadeep (write.data.path).
func pathVendTables(t *testing.T, st s3Store, base, writer string) {
	t.Helper()
	for _, ns := range []string{`["sales"]`, `["sales","sub"]`} {
		status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces", writer, `{"namespace":`+ns+`}`, nil)
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	const schema = `"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]}`
	b := "s3://" + st.bucket
	for _, c := range []struct{ ns, table, extra string }{
		{"sales", `"name":"t1","location":"` + b + `/wh/ext/t1"`, ""},
		{"sales", `"name":"t10","location":"` + b + `/wh/ext/t10"`, ""},
		{"sales%1Fsub", `"name":"deep","location":"` + b + `/wh/nested/deep"`,
			`,"properties":{"write.data.path":"` + b + `/wh/datadeep"}`},
	} {
		status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/"+c.ns+"/tables", writer,
			"{"+c.table+","+schema+c.extra+"}", nil)
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
}

// Temporary path credentials of a catalog that vends: the catalog's
// tables enumerated as the gateway, a url inside exactly one table is
// decided as that table's files (signRequest read or write) and keyed to
// the url alone; a new table's place (in no table, holding none) as
// createTable on the catalog; a parent of tables, the warehouse root, a
// url in no table for reading, and a new table inside a table are
// refused (PERMISSION_DENIED), as is a url inside a view or holding one;
// dry_run decides and vends nothing. The
// session policy sent to STS for each is exact. In the Delta API's model
// alike. An enumeration that fails (a table that cannot be loaded)
// refuses every path of the catalog.
func TestUnityTemporaryPathCredentialsVended(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	base := ucVendGateway(t, st, sts.URL, testRoleARN)
	writer := issuedToken(t, base, "writer", "writer-secret")
	reader := issuedToken(t, base, "reader", "reader-secret")
	pathVendTables(t, st, base, writer)
	require.Empty(t, sts.recorded())

	b := "s3://" + st.bucket
	ask := func(token, url, op string, dryRun bool) (int, ucTempCreds, map[string]any) {
		t.Helper()
		code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", token,
			map[string]any{"url": url, "operation": op, "dry_run": dryRun})
		raw, err := json.Marshal(out)
		require.NoError(t, err)
		var c ucTempCreds
		require.NoError(t, json.Unmarshal(raw, &c), "%s", raw)
		return code, c, out
	}
	// vended asks and checks the answer and the one STS call it made.
	vended := func(token, url, op, prefix string, write bool) {
		t.Helper()
		n := len(sts.recorded())
		code, c, out := ask(token, url, op, false)
		require.Equal(t, http.StatusOK, code, "%s %s: %v", op, url, out)
		require.NotNil(t, c.AWS, "%v", out)
		assert.Equal(t, strings.TrimSuffix(url, "/"), c.URL)
		assert.True(t, strings.HasPrefix(c.AWS.AccessKeyID, "ASIAFAKE"), "%v", out)
		assert.NotEqual(t, st.secret, c.AWS.SecretAccessKey)
		calls := sts.recorded()
		require.Len(t, calls, n+1, "one STS call for %s %s", op, url)
		assert.Equal(t, sessionPolicyFor(st.bucket, prefix, write), sessionPolicyOf(t, calls[n]), "%s %s", op, url)
	}
	refused := func(token, url, op string, dryRun bool, why string) {
		t.Helper()
		n := len(sts.recorded())
		code, _, out := ask(token, url, op, dryRun)
		ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED", op, url)
		assert.Contains(t, out["message"], why, "%s %s", op, url)
		assert.Len(t, sts.recorded(), n, "STS not asked for %s %s", op, url)
	}

	// A table's own location: the reader reads, only the writer writes.
	vended(reader, b+"/wh/ext/t1", "PATH_READ", "wh/ext/t1", false)
	refused(reader, b+"/wh/ext/t1", "PATH_READ_WRITE", false, "may not signRequest")
	vended(writer, b+"/wh/ext/t1/", "PATH_READ_WRITE", "wh/ext/t1", true)
	// Inside a table: keys for that path only; t1 does not hold t10's.
	vended(reader, b+"/wh/ext/t1/data/part-0", "PATH_READ", "wh/ext/t1/data/part-0", false)
	vended(reader, b+"/wh/ext/t10/data", "PATH_READ", "wh/ext/t10/data", false)
	// A nested namespace's table, by its location and its write.data.path.
	vended(reader, b+"/wh/nested/deep", "PATH_READ", "wh/nested/deep", false)
	vended(writer, b+"/wh/datadeep/x", "PATH_READ_WRITE", "wh/datadeep/x", true)
	// Parents of tables, the warehouse root, a url in no table.
	refused(writer, b+"/wh/ext", "PATH_READ", false, "credentials for a parent of tables are never vended")
	refused(writer, b+"/wh/ext/t", "PATH_READ_WRITE", false, "lies inside no table")
	refused(writer, b+"/wh", "PATH_CREATE_TABLE", false, "parent of tables")
	refused(writer, b+"/wh/nested", "PATH_CREATE_TABLE", false, "holds table sales.sub.deep")
	refused(writer, b+"/wh/new/t", "PATH_READ", false, "lies inside no table")
	// A view's metadata is no new table's place, nor a table's files;
	// its parent is a parent of views.
	status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces/sales/views", writer, `{"name":"v1","location":"`+b+`/wh/views/v1",`+
		`"schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","type":"int","required":false}]},`+
		`"view-version":{"version-id":1,"timestamp-ms":1700000000000,"schema-id":0,"summary":{},`+
		`"representations":[{"type":"sql","sql":"select 1 as a","dialect":"spark"}],"default-namespace":["sales"]},"properties":{}}`, nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	refused(writer, b+"/wh/views/v1/metadata/x", "PATH_CREATE_TABLE", false, "lies inside view sales.v1")
	refused(writer, b+"/wh/views/v1", "PATH_READ", false, "lies inside view sales.v1")
	refused(writer, b+"/wh/views", "PATH_CREATE_TABLE", false, "holds view sales.v1")
	// A new table's place: the writer creates, the reader may not.
	vended(writer, b+"/wh/new/t", "PATH_CREATE_TABLE", "wh/new/t", true)
	vended(writer, b+"/wh/ext/t100", "PATH_CREATE_TABLE", "wh/ext/t100", true)
	refused(reader, b+"/wh/new/t", "PATH_CREATE_TABLE", false, "reader may not createTable")
	refused(writer, b+"/wh/ext/t1/inner", "PATH_CREATE_TABLE", false, "lies inside table sales.t1")
	// dry_run: decided, nothing vended.
	n := len(sts.recorded())
	code, c, out := ask(writer, b+"/wh/new/u", "PATH_CREATE_TABLE", true)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Nil(t, c.AWS, "%v", out)
	assert.Equal(t, b+"/wh/new/u", c.URL)
	assert.Len(t, sts.recorded(), n)
	refused(reader, b+"/wh/new/u", "PATH_CREATE_TABLE", true, "reader may not createTable")
	refused(reader, b+"/wh/ext", "PATH_READ", true, "parent of tables")

	// The Delta API: READ inside a table, READ_WRITE inside a table or at
	// a new table's place.
	delta := func(token, loc, op string) (int, map[string]any) {
		t.Helper()
		code, out := ucCall(t, http.MethodGet, base+deltaAPI+"/temporary-path-credentials?operation="+op+"&location="+loc, token, nil)
		return code, out
	}
	deltaVended := func(token, loc, op, prefix string, write bool) {
		t.Helper()
		n := len(sts.recorded())
		code, out := delta(token, loc, op)
		require.Equal(t, http.StatusOK, code, "%s %s: %v", op, loc, out)
		creds, _ := out["storage-credentials"].([]any)
		require.Len(t, creds, 1, "%v", out)
		cred := creds[0].(map[string]any)
		assert.Equal(t, b+"/"+prefix+"/", cred["prefix"], "the folder, as for a table: %v", out)
		assert.Equal(t, op, cred["operation"], "%v", out)
		calls := sts.recorded()
		require.Len(t, calls, n+1, "%v", out)
		assert.Equal(t, sessionPolicyFor(st.bucket, prefix, write), sessionPolicyOf(t, calls[n]))
	}
	deltaRefused := func(token, loc, op, why string) {
		t.Helper()
		n := len(sts.recorded())
		code, out := delta(token, loc, op)
		assert.Equal(t, http.StatusForbidden, code, "%v", out)
		e, _ := out["error"].(map[string]any)
		assert.Equal(t, "PermissionDeniedException", e["type"], "%v", out)
		assert.Contains(t, e["message"], why, "%v", out)
		assert.Len(t, sts.recorded(), n)
	}
	deltaVended(reader, b+"/wh/ext/t10", "READ", "wh/ext/t10", false)
	deltaVended(writer, b+"/wh/ext/t10/data", "READ_WRITE", "wh/ext/t10/data", true)
	deltaVended(writer, b+"/wh/new/v", "READ_WRITE", "wh/new/v", true)
	deltaRefused(reader, b+"/wh/new/v", "READ_WRITE", "reader may not createTable")
	deltaRefused(reader, b+"/wh/ext/t10", "READ_WRITE", "may not signRequest")
	deltaRefused(writer, b+"/wh/ext", "READ", "parent of tables")
	deltaRefused(writer, b+"/wh/new/v", "READ", "lies inside no table")

	// A table the gateway cannot load (its metadata gone): no view of
	// the catalog, so no path is vended, even one in another table.
	ctx := context.Background()
	list, err := st.client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(st.bucket), Prefix: aws.String("wh/ext/t10/metadata/")})
	require.NoError(t, err)
	require.NotEmpty(t, list.Contents)
	for _, o := range list.Contents {
		_, err := st.client().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(st.bucket), Key: o.Key})
		require.NoError(t, err)
	}
	n = len(sts.recorded())
	code, _, out = ask(writer, b+"/wh/new/w", "PATH_CREATE_TABLE", false)
	assert.Equal(t, http.StatusServiceUnavailable, code, "%v", out)
	assert.Contains(t, out["message"], `enumerating catalog "lake"'s tables`, "%v", out)
	assert.Contains(t, out["message"], "sales.t10", "%v", out)
	code, out = delta(reader, b+"/wh/ext/t1", "READ")
	assert.Equal(t, http.StatusServiceUnavailable, code, "%v", out)
	assert.Len(t, sts.recorded(), n, "nothing vended on a partial view")
}

// A path that another catalog's locations meet (a parent of its
// warehouse, or inside it) is refused: that catalog's tables are not
// enumerated. Paths apart from it are vended as before.
func TestUnityTemporaryPathCredentialsSharedLocations(t *testing.T) {
	st := fakeStore(t)
	sts := newSTSRecorder(t, "")
	b := "s3://" + st.bucket
	base := ucVendGateway(t, st, sts.URL, testRoleARN, map[string]any{
		"name":     "other",
		"embedded": map[string]any{"dsn": filepath.Join(t.TempDir(), "other.db"), "warehouse": b + "/wh/shared"},
	})
	writer := issuedToken(t, base, "writer", "writer-secret")
	for _, url := range []string{b + "/wh/shared/t", b + "/wh/shared"} {
		code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", writer,
			map[string]any{"url": url, "operation": "PATH_CREATE_TABLE"})
		ucError(t, code, out, http.StatusForbidden, "PERMISSION_DENIED", url)
		assert.Contains(t, out["message"], `meets the allowed locations of catalog "other" too`, url)
	}
	assert.Empty(t, sts.recorded())
	code, out := ucCall(t, http.MethodPost, base+unityAPI+"/temporary-path-credentials", writer,
		map[string]any{"url": b + "/wh/new", "operation": "PATH_CREATE_TABLE"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	calls := sts.recorded()
	require.Len(t, calls, 1)
	assert.Equal(t, sessionPolicyFor(st.bucket, "wh/new", true), sessionPolicyOf(t, calls[0]))
}
