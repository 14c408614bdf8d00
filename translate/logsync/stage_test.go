package logsync_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/logsync"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// fakeLog is a table whose log is at version latest and whose Iceberg
// side is at synced; SyncTo counts the syncs that had work to do.
type fakeLog struct {
	latest, synced atomic.Int64
	syncs          atomic.Int32
}

func (f *fakeLog) Owned(props map[string]string) bool { return props["owned"] == "yes" }

func (f *fakeLog) Synced(props map[string]string) (int64, bool) {
	v, err := strconv.ParseInt(props["synced"], 10, 64)
	return v, err == nil
}

func (f *fakeLog) Latest(context.Context, logsync.Table) (int64, bool, error) {
	return f.latest.Load(), true, nil
}

func (f *fakeLog) SyncTo(_ context.Context, _ logsync.Table, v int64) error {
	if f.synced.Load() < v {
		f.synced.Store(f.latest.Load())
		f.syncs.Add(1)
	}
	return nil
}

func (f *fakeLog) Writable(context.Context, logsync.Table) error { return nil }

func answer(owned string, synced int64) *icerest.TableAnswer {
	return &icerest.TableAnswer{Properties: map[string]string{"owned": owned, "synced": strconv.FormatInt(synced, 10)}}
}

// A load answers at least the log's latest version: an answer behind it
// is served again even when another request synced the table meanwhile
// (issue 37, finding 3); an answer at it, or another table's, is served
// as it is.
func TestStageServesAgainWhatIsBehindTheLog(t *testing.T) {
	ctx := context.Background()
	rt := icerest.Route{Operation: icerest.OpLoadTable, Namespace: []string{"sales"}, Table: "events"}
	for _, tc := range []struct {
		name                string
		owned               string
		answered, synced, v int64
		changed             bool
		syncs               int32
	}{
		{"at the log's latest", "yes", 3, 3, 3, false, 0},
		{"behind, synced here", "yes", 2, 2, 3, true, 1},
		{"behind, synced meanwhile by another", "yes", 2, 3, 3, true, 0},
		{"not a Delta log's table", "no", 0, 0, 3, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &fakeLog{}
			log.latest.Store(tc.v)
			log.synced.Store(tc.synced)
			changed, err := logsync.New(log).Refresh(ctx, "lake", rt, answer(tc.owned, tc.answered))
			require.NoError(t, err)
			assert.Equal(t, tc.changed, changed)
			assert.Equal(t, tc.syncs, log.syncs.Load())
		})
	}
}
