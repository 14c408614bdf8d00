package deltalog

import (
	"context"
	"encoding/json"
	"io"
)

// lastCheckpoint is what this reader uses of _delta_log/_last_checkpoint
// ("Last Checkpoint File Schema").
type lastCheckpoint struct {
	Version int64 `json:"version"`
	Parts   *int  `json:"parts,omitempty"`
}

// maxLastCheckpoint caps _last_checkpoint: it may embed a V2 checkpoint's
// non-file actions, but never the file actions.
const maxLastCheckpoint = 16 << 20

// readLastCheckpoint reads the hint. It is only a hint: this reader lists
// the log anyway (for the commits after the checkpoint and their times),
// and the file is rewritten after each checkpoint, not atomically with
// it, so it may be stale, torn or name a checkpoint since cleaned up. A
// missing or unreadable hint is nil, and the listing decides.
func (l *Log) readLastCheckpoint(ctx context.Context) *lastCheckpoint {
	if ctx.Err() != nil {
		return nil
	}
	f, err := l.IO.Open(join(l.Location, "_delta_log", "_last_checkpoint"))
	if err != nil {
		return nil
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxLastCheckpoint+1))
	if err != nil || len(raw) > maxLastCheckpoint {
		return nil
	}
	var h lastCheckpoint
	if json.Unmarshal(raw, &h) != nil || h.Version < 0 {
		return nil
	}
	return &h
}

// names reports whether the hint describes cp: same version, and the
// same parts count for a multi-part checkpoint (none for a single file).
func (h *lastCheckpoint) names(cp checkpoint) bool {
	if h == nil || h.Version != cp.version {
		return false
	}
	if cp.kind == kindMultiPart {
		return h.Parts != nil && *h.Parts == len(cp.files)
	}
	return h.Parts == nil || *h.Parts == 1
}
