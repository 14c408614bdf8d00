package upstream_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/caller"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// fakeRefresher commits (bumps the backend's version) when told to, and
// refuses writes to the table named "owned".
type fakeRefresher struct {
	stale     atomic.Bool
	version   *atomic.Int64
	principal string
	locations []string // the metadata-location of each answer it was given
}

func (f *fakeRefresher) Refresh(ctx context.Context, _ string, _ icerest.Route, table *icerest.TableAnswer) (bool, error) {
	f.principal = caller.From(ctx).Principal
	f.locations = append(f.locations, table.MetadataLocation)
	if f.stale.CompareAndSwap(true, false) {
		f.version.Add(1)
		return true, nil
	}
	return false, nil
}

func (f *fakeRefresher) CheckWrite(_ context.Context, _ string, q icerest.Request) error {
	if q.Route.Table == "owned" {
		return icerest.Errorf(http.StatusNotAcceptable, icerest.UnsupportedOperation, "owned by its log")
	}
	return nil
}

// The pipeline hands every LoadTable answer to its Refresher, serves the
// load again after a refresh, decides 304s itself, and never forwards a
// write the Refresher refuses.
func TestPipelineRefresher(t *testing.T) {
	var version atomic.Int64
	var writes atomic.Int32
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writes.Add(1)
		}
		v := strconv.FormatInt(version.Load(), 10)
		w.Header().Set("ETag", `"v`+v+`"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"metadata-location":"m` + v + `","metadata":{}}`))
	})
	ref := &fakeRefresher{version: &version}
	p := upstream.NewPipeline("lake", upstream.NewLocal("lake", backend))
	p.Refresher = ref
	serve := func(method, path, inm, body string) *httptest.ResponseRecorder {
		t.Helper()
		rt, err := icerest.ParseRoute(method, path, "")
		require.NoError(t, err)
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		p.Serve(rec, req, rt, "alice")
		return rec
	}
	load := "/v1/namespaces/sales/tables/events"

	rec := serve(http.MethodGet, load, "", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"m0"`)
	assert.Equal(t, "alice", ref.principal, "the refresher acts for the caller")

	ref.stale.Store(true)
	rec = serve(http.MethodGet, load, `"v0"`, "")
	require.Equal(t, http.StatusOK, rec.Code, "the client's copy is stale after the refresh")
	assert.Contains(t, rec.Body.String(), `"m1"`)
	assert.Equal(t, "m0", ref.locations[1], "the refresher saw the answer before its refresh")

	rec = serve(http.MethodGet, load, `"v1"`, "")
	assert.Equal(t, http.StatusNotModified, rec.Code)
	assert.Empty(t, rec.Body.String())
	assert.Equal(t, `"v1"`, rec.Header().Get("ETag"))

	commit := `{"requirements":[],"updates":[]}`
	rec = serve(http.MethodPost, "/v1/namespaces/sales/tables/owned", "", commit)
	assert.Equal(t, http.StatusNotAcceptable, rec.Code)
	assert.Contains(t, rec.Body.String(), "owned by its log")
	assert.Zero(t, writes.Load(), "a refused write never reaches the backend")
	rec = serve(http.MethodPost, load, "", commit)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.EqualValues(t, 1, writes.Load())
}
