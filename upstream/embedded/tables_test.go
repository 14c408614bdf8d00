package embedded_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream/embedded"
)

// A multi-table transaction through the REST client commits both tables.
func TestTransactionCommitsBothTables(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"tx"}, nil))
	a, err := cat.CreateTable(ctx, table.Identifier{"tx", "a"}, eventSchema)
	require.NoError(t, err)
	b, err := cat.CreateTable(ctx, table.Identifier{"tx", "b"}, eventSchema)
	require.NoError(t, err)

	var commits []table.TableCommit
	for _, tbl := range []*table.Table{a, b} {
		txn := tbl.NewTransaction()
		require.NoError(t, txn.SetProperties(iceberg.Properties{"owner": "tx-test"}))
		data, _ := batch(t, tbl, 0, 5)
		require.NoError(t, txn.AppendTable(ctx, data, 64, nil))
		tc, err := txn.TableCommit()
		require.NoError(t, err)
		commits = append(commits, tc)
	}
	require.NoError(t, cat.CommitTransaction(ctx, commits))

	for _, name := range []string{"a", "b"} {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"tx", name})
		require.NoError(t, err)
		assert.Equal(t, "tx-test", tbl.Properties()["owner"])
		assert.Len(t, scanAll(t, tbl), 5)
	}
}

// Stage-create followed by a commit with assert-create (the client's
// create-table transaction) creates the table once.
func TestStagedCreate(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"st"}, nil))
	id := table.Identifier{"st", "t"}
	tbl, err := cat.CreateTable(ctx, id, eventSchema,
		catalog.WithStagedUpdates(table.NewSetPropertiesUpdate(iceberg.Properties{"staged": "yes"})))
	require.NoError(t, err)
	assert.Equal(t, "yes", tbl.Properties()["staged"])
	loaded, err := cat.LoadTable(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "yes", loaded.Properties()["staged"])
	assert.Equal(t, tbl.MetadataLocation(), loaded.MetadataLocation())
}

// LoadTable's ETag differs per representation, and If-None-Match gives 304.
func TestLoadTableETagAndSnapshotsRefs(t *testing.T) {
	ctx := context.Background()
	c, url := serve(t, testConfig(t, embedded.SQLite))
	cat := client(t, url)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"e"}, nil))
	tbl, err := cat.CreateTable(ctx, table.Identifier{"e", "t"}, eventSchema)
	require.NoError(t, err)
	for i := int64(0); i < 2; i++ { // two snapshots; then the branch drops one
		data, _ := batch(t, tbl, i*10, i*10+10)
		tbl, err = tbl.AppendTable(ctx, data, 64, nil)
		require.NoError(t, err)
	}
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	_, _, err = cat.CommitTable(ctx, table.Identifier{"e", "t"}, nil,
		[]table.Update{table.NewSetSnapshotRefUpdate("main", first, table.BranchRef, -1, -1, -1)})
	require.NoError(t, err)

	tableURL := url + "/v1/" + c.Name() + "/namespaces/e/tables/t"
	all, allTag := loadRaw(t, tableURL, "")
	refs, refsTag := loadRaw(t, tableURL+"?snapshots=refs", "")
	assert.NotEqual(t, allTag, refsTag, "one ETag per representation")
	assert.Len(t, all["metadata"].(map[string]any)["snapshots"], 2)
	assert.Len(t, refs["metadata"].(map[string]any)["snapshots"], 1, "refs: only referenced snapshots")

	req, _ := http.NewRequest(http.MethodGet, tableURL, nil)
	req.Header.Set("If-None-Match", allTag)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	assert.Equal(t, allTag, resp.Header.Get("ETag"))

	req.Header.Set("If-None-Match", refsTag)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "another representation's ETag does not match")
}

func loadRaw(t *testing.T, url, inm string) (map[string]any, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(b, &body))
	return body, resp.Header.Get("ETag")
}

// Register puts an existing metadata file under a new name; rename moves
// a table; purge drops it.
func TestRegisterRenameDrop(t *testing.T) {
	ctx := context.Background()
	cat := newCatalog(t)
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"r"}, nil))
	src, err := cat.CreateTable(ctx, table.Identifier{"r", "src"}, eventSchema)
	require.NoError(t, err)
	reg, err := cat.RegisterTable(ctx, table.Identifier{"r", "copy"}, src.MetadataLocation())
	require.NoError(t, err)
	assert.Equal(t, src.MetadataLocation(), reg.MetadataLocation())
	_, err = cat.RegisterTable(ctx, table.Identifier{"r", "copy"}, src.MetadataLocation())
	assert.ErrorIs(t, err, catalog.ErrTableAlreadyExists)

	_, err = cat.RenameTable(ctx, table.Identifier{"r", "copy"}, table.Identifier{"r", "moved"})
	require.NoError(t, err)
	ok, err := cat.CheckTableExists(ctx, table.Identifier{"r", "copy"})
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, cat.PurgeTable(ctx, table.Identifier{"r", "moved"}))
	ok, err = cat.CheckTableExists(ctx, table.Identifier{"r", "moved"})
	require.NoError(t, err)
	assert.False(t, ok)
}

// Namespace listing returns direct children only, paginated.
func TestListNamespacesChildrenAndPages(t *testing.T) {
	ctx := context.Background()
	_, url := serve(t, testConfig(t, embedded.SQLite))
	cat := client(t, url)
	for _, ns := range []table.Identifier{{"a"}, {"a", "x"}, {"a", "x", "deep"}, {"a", "y"}, {"b"}} {
		require.NoError(t, cat.CreateNamespace(ctx, ns, nil))
	}
	top, err := cat.ListNamespaces(ctx, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []table.Identifier{{"a"}, {"b"}}, top)
	under, err := cat.ListNamespaces(ctx, table.Identifier{"a"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []table.Identifier{{"a", "x"}, {"a", "y"}}, under)

	var pages [][]any
	next := ""
	for {
		resp, err := http.Get(url + "/v1/namespaces?parent=a&pageSize=1" + tokenParam(next))
		require.NoError(t, err)
		var body struct {
			Namespaces []any  `json:"namespaces"`
			Next       string `json:"next-page-token"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		pages = append(pages, body.Namespaces)
		if next = body.Next; next == "" {
			break
		}
	}
	assert.Equal(t, [][]any{{[]any{"a", "x"}}, {[]any{"a", "y"}}}, pages)
}

func tokenParam(tok string) string {
	if tok == "" {
		return ""
	}
	return "&pageToken=" + tok
}

// With auth configured, requests need a bearer token, which the OAuth2
// client-credentials endpoint issues.
func TestAuthRequiredAndOAuthTokens(t *testing.T) {
	cfg := testConfig(t, embedded.SQLite)
	cfg.Auth = embedded.AuthConfig{Clients: map[string]string{"spark": "s3cret"}, Tokens: []string{"static-token"}}
	_, url := serve(t, cfg)

	resp, err := http.Get(url + "/v1/namespaces")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	resp, err = http.PostForm(url+"/v1/oauth/tokens", map[string][]string{
		"grant_type": {"client_credentials"}, "client_id": {"spark"}, "client_secret": {"wrong"}})
	require.NoError(t, err)
	var oerr map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&oerr))
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, "invalid_client", oerr["error"])

	// iceberg-go's client fetches a token with credential=id:secret
	ctx := context.Background()
	cat := clientWithCredential(t, url, "spark:s3cret")
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"authed"}, nil))

	req, _ := http.NewRequest(http.MethodGet, url+"/v1/namespaces", nil)
	req.Header.Set("Authorization", "Bearer static-token")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.Contains(string(b), "authed"))
}
