package deltalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Whole logs that cannot give a snapshot are refused with the kind of
// failure and the place, never a panic.
func TestBadLogs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		lim   Limits
		kind  error
		msg   string
	}{
		{"gap in the commits", func(t *testing.T, root string) {
			rm(t, root, "00000000000000000002.json")
		}, Limits{}, ErrNotFound, "cannot be reconstructed"},
		{"no commit 0", func(t *testing.T, root string) {
			rm(t, root, "00000000000000000000.json")
		}, Limits{}, ErrNotFound, "cannot be reconstructed"},
		{"two metaData in one commit", func(t *testing.T, root string) {
			meta := firstLine(t, root, 2, "metaData")
			write(t, root, "00000000000000000006.json", meta+"\n"+meta+"\n")
		}, Limits{}, ErrMalformed, "00000000000000000006.json: 2 metaData"},
		{"reader version 4", func(t *testing.T, root string) {
			write(t, root, "00000000000000000006.json", `{"protocol":{"minReaderVersion":4,"minWriterVersion":8}}`)
		}, Limits{}, ErrUnsupported, "reader version 4"},
		{"no metaData", func(t *testing.T, root string) {
			clear(t, root)
			write(t, root, "00000000000000000000.json", `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`)
		}, Limits{}, ErrMalformed, "no metaData"},
		{"no protocol", func(t *testing.T, root string) {
			meta := firstLine(t, root, 0, "metaData")
			clear(t, root)
			write(t, root, "00000000000000000000.json", meta)
		}, Limits{}, ErrMalformed, "no protocol"},
		{"bad line", func(t *testing.T, root string) {
			write(t, root, "00000000000000000006.json", "{\"commitInfo\":{}}\n{\"add\":{\"path\":\"\"}}\n")
		}, Limits{}, ErrMalformed, "00000000000000000006.json:2: add without a path"},
		{"ICT on, none written", func(t *testing.T, root string) {
			write(t, root, "00000000000000000006.json", `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}
{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{}","partitionColumns":[],"configuration":{"delta.enableInCommitTimestamps":"true"}}}`)
		}, Limits{}, ErrMalformed, "inCommitTimestamp"},
		{"corrupt checkpoint", func(t *testing.T, root string) {
			write(t, root, "00000000000000000003.checkpoint.parquet", "PAR1 not really PAR1")
		}, Limits{}, ErrMalformed, "00000000000000000003.checkpoint.parquet"},
		{"truncated checkpoint", func(t *testing.T, root string) {
			writeClassic(t, root, at(t, root, 3))
			p := filepath.Join(root, "_delta_log", "00000000000000000003.checkpoint.parquet")
			raw, err := os.ReadFile(p)
			require.NoError(t, err)
			raw = append(raw[:len(raw)/2], raw[len(raw)-8:]...) // a footer pointing nowhere
			require.NoError(t, os.WriteFile(p, raw, 0o644))
		}, Limits{}, ErrMalformed, "00000000000000000003.checkpoint.parquet"},
		{"checkpoint without protocol", func(t *testing.T, root string) {
			s := at(t, root, 3)
			writeParquet(t, root, "00000000000000000003.checkpoint.parquet", checkpointSchema(false), stateActions(s)[1:])
		}, Limits{}, ErrMalformed, "exactly one metaData and one protocol"},
		{"checkpoint column of the wrong type", func(t *testing.T, root string) {
			write(t, root, "00000000000000000003.checkpoint.parquet", wrongTypeCheckpoint(t))
		}, Limits{}, ErrMalformed, "add.size"},
		{"too many actions", nil, Limits{MaxActions: 5}, ErrLimit, "more than 5 actions"},
		{"commit too big", nil, Limits{MaxCommitBytes: 200}, ErrLimit, "00000000000000000000.json"},
		{"too many log files", nil, Limits{MaxLogFiles: 3}, ErrLimit, "more than 3 files"},
		{"checkpoint too big", func(t *testing.T, root string) {
			writeClassic(t, root, at(t, root, 3))
		}, Limits{MaxCheckpointBytes: 100}, ErrLimit, "checkpoint.parquet"},
		{"checkpoint too many rows", func(t *testing.T, root string) {
			writeClassic(t, root, at(t, root, 3))
		}, Limits{MaxActions: 3}, ErrLimit, "checkpoint.parquet"},
		{"empty log", clear, Limits{}, ErrNotFound, "no Delta commit"},
		{"no log", func(t *testing.T, root string) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, "_delta_log")))
		}, Limits{}, ErrNotFound, "no Delta log"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := copyLog(t, "basic")
			if c.setup != nil {
				c.setup(t, root)
			}
			l := open(root)
			l.Limits = c.lim
			_, err := l.Latest(context.Background())
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func clear(t *testing.T, root string) {
	entries, err := os.ReadDir(filepath.Join(root, "_delta_log"))
	require.NoError(t, err)
	for _, e := range entries {
		rm(t, root, e.Name())
	}
}

// firstLine is the first line of commit v that holds the action.
func firstLine(t *testing.T, root string, v int64, action string) string {
	raw, err := os.ReadFile(filepath.Join(root, "_delta_log", commitFileName(v)))
	require.NoError(t, err)
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, `{"`+action+`"`) {
			return l
		}
	}
	t.Fatalf("no %s in commit %d", action, v)
	return ""
}
