package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"github.com/caddyserver/caddy/v2"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/identity"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// idp signs JWTs the gateway accepts through its static JWKS.
type idp struct {
	key  *ecdsa.PrivateKey
	jwks string
}

func newIDP(t *testing.T) *idp {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}
	b, err := json.Marshal(set)
	require.NoError(t, err)
	return &idp{key: key, jwks: string(b)}
}

func (p *idp) token(t *testing.T, sub string, groups []string, aud string, exp time.Duration) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: p.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	require.NoError(t, err)
	now := time.Now()
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{
		Subject: sub, Issuer: "https://idp.test", Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(exp)),
	}).Claims(map[string]any{"groups": groups}).Serialize()
	require.NoError(t, err)
	return tok
}

// policyGateway fronts an embedded catalog that vends storage credentials,
// with required authentication (lakegate-issued tokens for reader, writer
// and admin; JWTs from a test IdP) and the role-based policy.
func policyGateway(t *testing.T, p *idp) string {
	cfg := embeddedtest.Config(t, embedded.SQLite)
	cfg.Properties = map[string]string{"s3.access-key-id": "AKID", "s3.secret-access-key": "SECRET", "s3.region": "us-east-1"}
	backend := embeddedtest.Serve(t, cfg)
	return gateway(t, map[string]any{
		"catalogs": []any{remote("lake", backend.URL, nil)},
		"identity": map[string]any{
			"required": true,
			"issuer": map[string]any{"clients": []any{
				map[string]any{"id": "reader", "secret_bcrypt": bcryptHash(t, "reader-secret"), "groups": []string{"reader"}},
				map[string]any{"id": "writer", "secret_bcrypt": bcryptHash(t, "writer-secret"), "groups": []string{"writer"}},
				map[string]any{"id": "admin", "secret_bcrypt": bcryptHash(t, "admin-secret"), "groups": []string{"admin"}},
			}},
			"jwt": []any{map[string]any{"static_jwks": p.jwks, "issuer": "https://idp.test", "audience": "lakegate"}},
		},
		"policy": map[string]any{"dir": "../../policies", "package": "lakegate.roles"},
	})
}

// bcryptHash is secret's secret_bcrypt.
func bcryptHash(t testing.TB, secret string) string {
	t.Helper()
	h, err := identity.HashSecretBcrypt(secret)
	require.NoError(t, err)
	return h
}

func asClient(t *testing.T, base string, opts ...rest.Option) *rest.Catalog {
	return embeddedtest.Client(t, base, append([]rest.Option{rest.WithWarehouseLocation("lake")}, opts...)...)
}

func do(t testing.TB, method, url, token, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func errorType(b []byte) string { return readIcebergError(b).Type }

// icebergError is the error object of an Iceberg error body.
type icebergError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func readIcebergError(b []byte) icebergError {
	var body struct {
		Error icebergError `json:"error"`
	}
	_ = json.Unmarshal(b, &body)
	return body.Error
}

// Three principals, through lakegate-issued tokens (credential=id:secret,
// as Spark and PyIceberg send it) and through IdP-signed JWTs, are allowed
// and denied exactly as policies/roles.rego says.
func TestPolicyRolesEndToEnd(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t)
	base := policyGateway(t, p)

	admin := asClient(t, base, rest.WithCredential("admin:admin-secret"))
	writer := asClient(t, base, rest.WithCredential("writer:writer-secret"))
	reader := asClient(t, base, rest.WithCredential("reader:reader-secret"))

	// writer creates namespaces and tables and commits
	require.NoError(t, writer.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	require.NoError(t, writer.CreateNamespace(ctx, table.Identifier{"hr"}, nil))
	tbl, err := writer.CreateTable(ctx, table.Identifier{"sales", "orders"}, embeddedtest.EventSchema)
	require.NoError(t, err)
	data, _ := embeddedtest.Batch(t, tbl, 0, 10)
	_, err = tbl.AppendTable(ctx, data, 16, nil)
	require.NoError(t, err)
	_, err = writer.CreateTable(ctx, table.Identifier{"hr", "salaries"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	// reader reads, and is refused every write
	loaded, err := reader.LoadTable(ctx, table.Identifier{"sales", "orders"})
	require.NoError(t, err)
	assert.Len(t, embeddedtest.ScanAll(t, loaded), 10)
	assert.ErrorIs(t, reader.CreateNamespace(ctx, table.Identifier{"nope"}, nil), rest.ErrForbidden)
	_, err = reader.CreateTable(ctx, table.Identifier{"sales", "nope"}, embeddedtest.EventSchema)
	assert.ErrorIs(t, err, rest.ErrForbidden)
	assert.ErrorIs(t, reader.DropTable(ctx, table.Identifier{"sales", "orders"}), rest.ErrForbidden)

	// views: only admin may change them
	version := &view.Version{VersionID: 1, SchemaID: 0, TimestampMS: time.Now().UnixMilli(),
		Summary: map[string]string{}, DefaultNamespace: []string{"sales"},
		Representations: []view.Representation{{Type: "sql", Sql: "select 1", Dialect: "spark"}}}
	_, err = writer.CreateView(ctx, table.Identifier{"sales", "v"}, version, embeddedtest.EventSchema)
	assert.ErrorIs(t, err, rest.ErrForbidden)
	_, err = admin.CreateView(ctx, table.Identifier{"sales", "v"}, version, embeddedtest.EventSchema)
	require.NoError(t, err)
	_, err = reader.LoadView(ctx, table.Identifier{"sales", "v"})
	require.NoError(t, err, "readers read views")
	var views []table.Identifier
	for id, err := range reader.ListViews(ctx, table.Identifier{"sales"}) {
		require.NoError(t, err)
		views = append(views, id)
	}
	assert.Equal(t, []table.Identifier{{"sales", "v"}}, views)
	assert.ErrorIs(t, writer.DropView(ctx, table.Identifier{"sales", "v"}), rest.ErrForbidden)
	assert.ErrorIs(t, writer.DropTable(ctx, table.Identifier{"hr", "nope"}), catalog.ErrNoSuchTable,
		"a writer's drop reaches the backend")
	require.NoError(t, admin.DropView(ctx, table.Identifier{"sales", "v"}))
	require.NoError(t, admin.DropTable(ctx, table.Identifier{"hr", "salaries"}))
	// namespaces: the reader may load, not drop
	_, err = reader.LoadNamespaceProperties(ctx, table.Identifier{"hr"})
	require.NoError(t, err)
	assert.ErrorIs(t, reader.DropNamespace(ctx, table.Identifier{"hr"}), rest.ErrForbidden)
	require.NoError(t, writer.DropNamespace(ctx, table.Identifier{"hr"}))

	// the deny carries the policy's reason, in the Iceberg error model
	readerTok := p.token(t, "rita", []string{"reader"}, "lakegate", time.Minute)
	status, body := do(t, http.MethodPost, base+"/v1/lake/namespaces", readerTok, `{"namespace":["x"]}`, nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "ForbiddenException", errorType(body))
	assert.Contains(t, string(body), "reader may not createNamespace")

	// JWTs from the IdP work like issued tokens
	writerTok := p.token(t, "walt", []string{"writer"}, "lakegate", time.Minute)
	status, _ = do(t, http.MethodPost, base+"/v1/lake/namespaces", writerTok, `{"namespace":["from_jwt"]}`, nil)
	assert.Equal(t, http.StatusOK, status)
}

// Readers never receive vended credentials; writers do.
func TestPolicyStripsCredentials(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t)
	base := policyGateway(t, p)
	admin := asClient(t, base, rest.WithCredential("admin:admin-secret"))
	require.NoError(t, admin.CreateNamespace(ctx, table.Identifier{"ns"}, nil))
	_, err := admin.CreateTable(ctx, table.Identifier{"ns", "t"}, embeddedtest.EventSchema)
	require.NoError(t, err)

	vended := map[string]string{"X-Iceberg-Access-Delegation": "vended-credentials"}
	url := base + "/v1/lake/namespaces/ns/tables/t"
	status, body := do(t, http.MethodGet, url, p.token(t, "walt", []string{"writer"}, "lakegate", time.Minute), "", vended)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(body), "storage-credentials", "a writer receives vended credentials")
	assert.Contains(t, string(body), "SECRET")

	readerTok := p.token(t, "rita", []string{"reader"}, "lakegate", time.Minute)
	status, body = do(t, http.MethodGet, url, readerTok, "", vended)
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, string(body), "storage-credentials")
	assert.NotContains(t, string(body), "SECRET")

	status, body = do(t, http.MethodGet, url+"/credentials", readerTok, "", nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "ForbiddenException", errorType(body))
}

// Listings contain only what the principal may see, decided per page.
func TestPolicyFiltersListings(t *testing.T) {
	ctx := context.Background()
	p := newIDP(t)
	base := policyGateway(t, p)
	admin := asClient(t, base, rest.WithCredential("admin:admin-secret"))
	for _, ns := range []string{"sales", "hr", "ops"} {
		require.NoError(t, admin.CreateNamespace(ctx, table.Identifier{ns}, nil))
		_, err := admin.CreateTable(ctx, table.Identifier{ns, "t"}, embeddedtest.EventSchema)
		require.NoError(t, err)
	}
	salesReader := asClient(t, base, rest.WithOAuthToken(p.token(t, "sam", []string{"reader:sales"}, "lakegate", time.Minute)))
	nss, err := salesReader.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []table.Identifier{{"sales"}}, nss)

	all, err := admin.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, all, 3)

	// page by page, the filtered listing still ends, and shows only sales
	tok := p.token(t, "sam", []string{"reader:sales"}, "lakegate", time.Minute)
	var seen []any
	next := ""
	for pages := 0; pages < 10; pages++ {
		status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces?pageSize=1"+tokenParam(next), tok, "", nil)
		require.Equal(t, http.StatusOK, status)
		var page struct {
			Namespaces []any  `json:"namespaces"`
			Next       string `json:"next-page-token"`
		}
		require.NoError(t, json.Unmarshal(body, &page))
		seen = append(seen, page.Namespaces...)
		if next = page.Next; next == "" {
			break
		}
	}
	assert.Equal(t, []any{[]any{"sales"}}, seen)

	// returnUuids and returnProtectionStatus pass through to the backend,
	// and their entries are filtered with the page's: sales keeps its own
	// UUID, no hidden namespace's UUID shows.
	type uuidPage struct {
		Namespaces       [][]string `json:"namespaces"`
		NamespaceUUIDs   []string   `json:"namespace-uuids"`
		ProtectionStatus []bool     `json:"protection-status"`
	}
	const extras = "/v1/lake/namespaces?returnUuids=true&returnProtectionStatus=true"
	adminTok := issuedToken(t, base, "admin", "admin-secret")
	var full, filtered uuidPage
	status, body := do(t, http.MethodGet, base+extras, adminTok, "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &full))
	require.Len(t, full.NamespaceUUIDs, 3)
	status, body = do(t, http.MethodGet, base+extras, tok, "", nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &filtered))
	require.Equal(t, [][]string{{"sales"}}, filtered.Namespaces)
	i := slices.IndexFunc(full.Namespaces, func(ns []string) bool { return ns[0] == "sales" })
	assert.Equal(t, []string{full.NamespaceUUIDs[i]}, filtered.NamespaceUUIDs)
	assert.Equal(t, []bool{false}, filtered.ProtectionStatus)

	status, _ = do(t, http.MethodGet, base+"/v1/lake/namespaces/hr/tables/t", tok, "", nil)
	assert.Equal(t, http.StatusForbidden, status, "no role on hr")
}

func tokenParam(tok string) string {
	if tok == "" {
		return ""
	}
	return "&pageToken=" + tok
}

// Missing and bad credentials get 401 in the Iceberg error model.
func TestPolicyRejectsBadCredentials(t *testing.T) {
	p := newIDP(t)
	base := policyGateway(t, p)
	other := newIDP(t)
	for name, tok := range map[string]string{
		"anonymous":       "",
		"garbage":         "not-a-token",
		"wrong signature": other.token(t, "eve", []string{"admin"}, "lakegate", time.Minute),
		"wrong audience":  p.token(t, "eve", []string{"admin"}, "someone-else", time.Minute),
		"expired":         p.token(t, "eve", []string{"admin"}, "lakegate", -10*time.Minute),
		"alg none":        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJldmUiLCJncm91cHMiOlsiYWRtaW4iXX0.",
	} {
		t.Run(name, func(t *testing.T) {
			status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces", tok, "", nil)
			assert.Equal(t, http.StatusUnauthorized, status)
			assert.Equal(t, "NotAuthorizedException", errorType(body))
		})
	}
	// the issuer's OAuth errors
	status, body := do(t, http.MethodPost, base+"/v1/oauth/tokens", "",
		"grant_type=client_credentials&client_id=reader&client_secret=wrong",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, string(body), "invalid_client")
}

// issuedToken gets a lakegate-issued access token for a client.
func issuedToken(t testing.TB, base, id, secret string) string {
	t.Helper()
	status, body := do(t, http.MethodPost, base+"/v1/oauth/tokens", "",
		"grant_type=client_credentials&client_id="+id+"&client_secret="+secret,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	require.Equal(t, http.StatusOK, status, "%s", body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.Unmarshal(body, &tok))
	require.NotEmpty(t, tok.AccessToken)
	return tok.AccessToken
}

// Verified tokens are remembered per config: a reload that removes a
// client refuses its token at once, and one that changes the audience an
// IdP's tokens must carry refuses theirs, although both were remembered.
func TestReloadForgetsVerifiedTokens(t *testing.T) {
	p := newIDP(t)
	backend := embeddedtest.Serve(t, embeddedtest.Config(t, embedded.SQLite))
	reader := map[string]any{"id": "reader", "secret_bcrypt": bcryptHash(t, "reader-secret"), "groups": []string{"reader"}}
	writer := map[string]any{"id": "writer", "secret_bcrypt": bcryptHash(t, "writer-secret"), "groups": []string{"writer"}}
	app := func(clients []any, audience string) map[string]any {
		return map[string]any{
			"catalogs": []any{remote("lake", backend.URL, nil)},
			"identity": map[string]any{"required": true,
				"issuer": map[string]any{"clients": clients},
				"jwt":    []any{map[string]any{"static_jwks": p.jwks, "issuer": "https://idp.test", "audience": audience}}},
			"policy": map[string]any{"dir": "../../policies", "package": "lakegate.roles"},
		}
	}
	addr := freeAddr(t)
	base := serveOn(t, addr, caddyJSON(t, addr, app([]any{reader, writer}, "lakegate")))
	issued := issuedToken(t, base, "writer", "writer-secret")
	fromIdP := p.token(t, "alice", []string{"reader"}, "lakegate", time.Hour)
	for range 2 { // verified, then remembered
		for _, tok := range []string{issued, fromIdP} {
			status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces", tok, "", nil)
			require.Equal(t, http.StatusOK, status, "%s", body)
		}
	}

	require.NoError(t, caddy.Load(caddyJSON(t, addr, app([]any{reader}, "another-gateway")), true))
	for name, tok := range map[string]string{"removed client": issued, "audience changed": fromIdP} {
		status, body := do(t, http.MethodGet, base+"/v1/lake/namespaces", tok, "", nil)
		assert.Equal(t, http.StatusUnauthorized, status, "%s: %s", name, body)
	}
}
