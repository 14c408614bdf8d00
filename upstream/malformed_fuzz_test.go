package upstream_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/embedded"
	"github.com/lakegate/lakegate/upstream/embedded/embeddedtest"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// FuzzMalformedNeverForwarded: whatever commit body the embedded catalog
// refuses with 400 because it does not decode never reaches a remote
// backend through the pipeline.
//
// "Does not decode" is what a gateway can know without the table's state:
// the embedded catalog's decodeBody failing (missing body, trailing data)
// with encoding/json's own complaint, a syntax error or a value of the
// wrong JSON type (json: cannot unmarshal ...). Refusals that need the
// table (an unknown schema id, a failed requirement) or iceberg-go's
// grammar inside strings (an unknown type "foo", a transform it cannot
// parse) are the backend's to make, and out of this property.
func FuzzMalformedNeverForwarded(f *testing.F) {
	for _, seed := range malformedSeeds {
		f.Add(seed)
	}
	emb, prefix := embeddedWithTable(f)
	pipe, reached := countingPipeline(f)
	path := "/v1/" + prefix + "/namespaces/ns/tables/t"
	f.Fuzz(func(t *testing.T, body string) {
		status, msg := post(t, emb+path, body)
		before := reached.Load()
		rt, err := icerest.ParseRoute(http.MethodPost, path, "")
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		pipe.Serve(rec, req, rt, "fuzz")
		if status == http.StatusBadRequest && undecodable(msg) && reached.Load() != before {
			t.Fatalf("the embedded catalog refused the body (%s) but the pipeline forwarded it (answered %d)", msg, rec.Code)
		}
	})
}

// undecodable tells the embedded catalog's decode failures (see above).
func undecodable(msg string) bool {
	if strings.Contains(msg, "missing request body") {
		return true
	}
	if !strings.Contains(msg, "malformed request body") {
		return false
	}
	for _, s := range []string{"json: cannot unmarshal", "invalid character", "unexpected end of JSON input",
		"unexpected EOF", "trailing data"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// embeddedWithTable serves an embedded catalog holding table ns.t.
func embeddedWithTable(f *testing.F) (url, prefix string) {
	cfg := embeddedtest.Config(f, embedded.SQLite)
	cat, err := embedded.Open(context.Background(), cfg, nil)
	require.NoError(f, err)
	srv := httptest.NewServer(cat)
	f.Cleanup(func() {
		srv.Close()
		require.NoError(f, cat.Close())
	})
	for _, c := range []struct{ path, body string }{
		{"/namespaces", `{"namespace":["ns"]}`},
		{"/namespaces/ns/tables", `{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`},
	} {
		status, msg := post(f, srv.URL+"/v1/"+cfg.Name+c.path, c.body)
		require.Equal(f, http.StatusOK, status, msg)
	}
	return srv.URL, cfg.Name
}

// countingPipeline is a pipeline whose remote backend counts the
// requests that reach it (its /v1/config aside).
func countingPipeline(f *testing.F) (*upstream.Pipeline, *atomic.Int64) {
	var reached atomic.Int64
	srv := fakeBackend(f, func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{}`)
	})
	remote, err := upstream.NewRemote("lake", upstream.RemoteConfig{URL: srv.URL}, nil)
	require.NoError(f, err)
	return upstream.NewPipeline("lake", remote), &reached
}

// post sends a commit body and returns the status and the error message.
func post(t testing.TB, url, body string) (int, string) {
	t.Helper()
	rsp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	require.NoError(t, err)
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return rsp.StatusCode, e.Error.Message
}

// malformedSeeds are the bodies lakegate once forwarded while the
// embedded catalog refused them, and valid commits to mutate from.
var malformedSeeds = []string{
	`{"requirements":[],"updates":[]}`,
	`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`,
	`{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[` +
		`{"action":"add-snapshot","snapshot":{"snapshot-id":1,"sequence-number":1,"timestamp-ms":1733000000000,` +
		`"manifest-list":"s3://b/m.avro","summary":{"operation":"append"},"schema-id":0}},` +
		`{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1}]}`,
	`{"requirements":[],"updates":[{"action":"set-properties","updates":["k"]}]}`,
	`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":1}}]}`,
	`{"requirements":[],"updates":[{"action":"remove-properties","removals":"k"}]}`,
	`{"requirements":[],"updates":[{"action":"add-snapshot"}]}`,
	`{"requirements":[],"updates":[{"action":"add-schema","schema":"nope"}]}`,
	`{"requirements":[],"updates":[{"action":"set-snapshot-ref","ref-name":1,"type":"branch","snapshot-id":"1"}]}`,
	`{"requirements":[{"type":"assert-table-uuid","uuid":5}],"updates":[]}`,
	`{"requirements":[{"type":"assert-table-uuid"}],"updates":[]}`,
	`{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":1e999}],"updates":[]}`,
	`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k\u0000":"v\u0000"}}]}`,
	`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"\ud800"}}]}`,
	`{"requirements":[],"updates":[{"action":"remove-snapshots","snapshot-ids":[1.5]}]}`,
	`{"requirements":[],"updates":[{"action":"set-current-schema","schema-id":"0"}]}`,
	`{"requirements":[],"updates":[{"action":"drop-everything"}]}`,
	`{"requirements":[],"updates":[]}x`,
	`null`,
	``,
}
