package gateway_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/cache/redistest"
	"github.com/lakegate/lakegate/internal/uitest"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
)

// commitRecord is GET /lakegate/commits' answer.
type commitRecord struct {
	Commits []struct {
		Time             time.Time `json:"time"`
		Principal        string    `json:"principal"`
		Door             string    `json:"door"`
		Operation        string    `json:"operation"`
		Kinds            []string  `json:"kinds"`
		SnapshotIDs      []int64   `json:"snapshot-ids"`
		MetadataLocation string    `json:"metadata-location"`
		IdempotencyKey   string    `json:"idempotency-key"`
	} `json:"commits"`
	Shared bool `json:"shared"`
}

func commitsURL(base, catalog, ns, table string) string {
	return base + "/lakegate/commits?" + url.Values{"catalog": {catalog}, "namespace": {ns}, "table": {table}}.Encode()
}

// commitsOf asks base for a table's commits until it lists want of them
// (the record is written off the commit's path, a moment after it).
func commitsOf(t *testing.T, base, token, ns, table string, want int) commitRecord {
	t.Helper()
	var rec commitRecord
	var last []byte
	require.Eventually(t, func() bool {
		req, err := http.NewRequest(http.MethodGet, commitsURL(base, "lake", ns, table), nil)
		if err != nil {
			return false
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		last, _ = io.ReadAll(resp.Body)
		rec = commitRecord{}
		return resp.StatusCode == http.StatusOK && json.Unmarshal(last, &rec) == nil && len(rec.Commits) >= want
	}, 10*time.Second, 20*time.Millisecond, "%d commits of %s.%s recorded", want, ns, table)
	require.Len(t, rec.Commits, want, "%s", last)
	return rec
}

// GET /lakegate/commits: every commit the backend confirmed through the
// gateway, newest first, with its principal, door, kinds, snapshots,
// metadata file and Idempotency-Key; a refused commit is not there. Whoever
// may load the table may read it (a reader of its namespace too), nobody
// else.
func TestCommitRecord(t *testing.T) {
	base := rolesGateway(t)
	token := func(id string) string { return uitest.Token(t, base, id, id+"-secret") }
	admin, writer, sales := token("admin"), token("writer"), token("sales")
	uitest.Seed(t, base+"/v1/lake", admin)
	orders := base + "/v1/lake/namespaces/sales/tables/orders"
	key := uuid.Must(uuid.NewV7()).String()
	hdr := map[string]string{"Content-Type": "application/json", "Idempotency-Key": key}
	status, b := do(t, http.MethodPost, orders, writer, `{"requirements":[],"updates":[{"action":"set-properties","updates":{"tier":"gold"}}]}`, hdr)
	require.Equal(t, http.StatusOK, status, "%s", b)
	var committed struct {
		MetadataLocation string `json:"metadata-location"`
	}
	require.NoError(t, json.Unmarshal(b, &committed))
	status, b = do(t, http.MethodPost, orders, writer, `{"requirements":[{"type":"assert-current-schema-id","current-schema-id":0}],`+
		`"updates":[{"action":"set-properties","updates":{"tier":"silver"}}]}`, map[string]string{"Content-Type": "application/json"})
	require.Equal(t, http.StatusConflict, status, "%s", b)

	// Seed: create, three snapshots on main, refs, a snapshot on a
	// branch, a schema and spec change; then the writer's.
	rec := commitsOf(t, base, sales, "sales", "orders", 8)
	assert.False(t, rec.Shared, "no Redis: this process's record")
	last := rec.Commits[0]
	assert.Equal(t, "writer", last.Principal)
	assert.Equal(t, "iceberg", last.Door)
	assert.Equal(t, "updateTable", last.Operation)
	assert.Equal(t, []string{"properties"}, last.Kinds)
	assert.Equal(t, key, last.IdempotencyKey)
	assert.Equal(t, committed.MetadataLocation, last.MetadataLocation)
	assert.WithinDuration(t, time.Now(), last.Time, time.Hour)
	var kinds [][]string
	for _, c := range rec.Commits[1:] {
		assert.Equal(t, "admin", c.Principal)
		assert.NotEmpty(t, c.MetadataLocation)
		kinds = append(kinds, c.Kinds)
	}
	assert.Equal(t, [][]string{{"schema", "partition spec"}, {"append"}, {"refs"}, {"overwrite"}, {"append"}, {"append"}, {"create"}}, kinds)
	assert.Equal(t, []int64{1003}, rec.Commits[4].SnapshotIDs)
	assert.Equal(t, "createTable", rec.Commits[7].Operation)

	// A reader of sales may not load hr.people: it reads nothing of it.
	commitsOf(t, base, admin, "hr", "people", 1)
	status, b = do(t, http.MethodGet, commitsURL(base, "lake", "hr", "people"), sales, "", nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", b)
	assert.Contains(t, readIcebergError(b).Message, `loadTable: principal "sales" has no role on namespace "hr"`)
	assert.NotContains(t, string(b), "admin")
	status, b = do(t, http.MethodGet, commitsURL(base, "lake", "sales", "orders"), "", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "%s", b)

	for query, want := range map[string]struct {
		status int
		typ    string
	}{
		"catalog=lake&namespace=sales":              {400, "BadRequestException"},
		"catalog=nope&namespace=sales&table=orders": {404, "NoSuchWarehouseException"},
	} {
		status, b = do(t, http.MethodGet, base+"/lakegate/commits?"+query, admin, "", nil)
		assert.Equal(t, want.status, status, "%s: %s", query, b)
		assert.Equal(t, want.typ, errorType(b), query)
	}
	status, b = do(t, http.MethodPost, commitsURL(base, "lake", "sales", "orders"), admin, "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "%s", b)
}

// Two gateway processes on one Redis share the record: each lists the
// commits the other served, and a keyed retry that one of them answered
// from the replay store is not a second commit.
func TestCommitRecordAcrossReplicas(t *testing.T) {
	cat, err := embedded.Open(context.Background(), embeddedtest.Config(t, embedded.SQLite), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.Close() })
	backend := newLoopbackServer(t, cat)
	app := map[string]any{
		"redis":    redistest.URL(t),
		"catalogs": []any{map[string]any{"name": "lake", "remote": map[string]any{"url": backend}, "idempotency": map[string]any{}}},
	}
	replicas := []string{replica(t, app), replica(t, app)}
	// A namespace of this run's own: the Redis may hold earlier runs' records.
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	ns := "commits" + hex.EncodeToString(suffix)

	status, body, _ := post(t, replicas[0]+"/v1/lake/namespaces", "", `{"namespace":["`+ns+`"]}`)
	require.Equal(t, http.StatusOK, status, body)
	status, body, _ = post(t, replicas[0]+"/v1/lake/namespaces/"+ns+"/tables", "", `{"name":"t","schema":`+tableSchema+`}`)
	require.Equal(t, http.StatusOK, status, body)
	key := uuid.Must(uuid.NewV7()).String()
	commit := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"replicas"}}]}`
	status, body, _ = post(t, replicas[1]+"/v1/lake/namespaces/"+ns+"/tables/t", key, commit)
	require.Equal(t, http.StatusOK, status, body)
	status, body, h := post(t, replicas[0]+"/v1/lake/namespaces/"+ns+"/tables/t", key, commit)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "true", h.Get("Idempotent-Replayed"))

	for _, base := range replicas {
		rec := commitsOf(t, base, "", ns, "t", 2)
		assert.True(t, rec.Shared)
		assert.Equal(t, "updateTable", rec.Commits[0].Operation)
		assert.Equal(t, key, rec.Commits[0].IdempotencyKey)
		assert.Equal(t, "anonymous", rec.Commits[0].Principal)
		assert.Equal(t, "createTable", rec.Commits[1].Operation)
	}
}

// GET {prefix}/lakegate/recipients: who may read each share, from the
// door's configuration (names and expiry, never a token or its hash), for
// a caller the policy lets listShareRecipients (admins under roles.rego);
// a recipient's own token and everyone else are refused in the Delta
// Sharing error model.
func TestShareRecipients(t *testing.T) {
	handler := sharingHandler(map[string]any{"change_data_dir": t.TempDir()})
	auditor := sha256.Sum256([]byte("auditor-token"))
	handler["shares"].([]any)[1].(map[string]any)["recipients"] = []any{map[string]any{
		"name": "auditor", "token_sha256": hex.EncodeToString(auditor[:]), "expires": "2020-01-02T03:04:05Z"}}
	base := rolesGatewayWith(t, handler)
	endpoint := base + "/delta-sharing/lakegate/recipients"

	status, b := do(t, http.MethodGet, endpoint, uitest.Token(t, base, "admin", "admin-secret"), "", nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	assert.JSONEq(t, `{"shares":[{"share":"demo","recipients":[{"name":"partner","expired":false}]},`+
		`{"share":"other","recipients":[{"name":"auditor","expires":"2020-01-02T03:04:05Z","expired":true}]}]}`, string(b))
	recipientSum := sha256.Sum256([]byte(recipientToken))
	assert.NotContains(t, string(b), hex.EncodeToString(recipientSum[:]))

	for _, id := range []string{"writer", "reader"} {
		status, b = do(t, http.MethodGet, endpoint, uitest.Token(t, base, id, id+"-secret"), "", nil)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", id, b)
		assert.Contains(t, string(b), `"errorCode":"PERMISSION_DENIED"`)
		assert.Contains(t, string(b), "listShareRecipients: "+id+" may not listShareRecipients")
	}
	status, b = do(t, http.MethodGet, endpoint, recipientToken, "", nil)
	assert.Equal(t, http.StatusForbidden, status, "%s", b)
	assert.Contains(t, string(b), "a recipient may not list a share's recipients")
	status, b = do(t, http.MethodGet, endpoint, "", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "%s", b)
	assert.Contains(t, string(b), `"errorCode":"UNAUTHENTICATED"`)
	status, b = do(t, http.MethodPost, endpoint, uitest.Token(t, base, "admin", "admin-secret"), "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "%s", b)
}
