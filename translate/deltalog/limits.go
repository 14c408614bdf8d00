package deltalog

// Limits bound what one snapshot may cost to read. A log is written by
// whoever can write the table's storage, so none of its sizes is trusted.
// A zero field takes its default.
type Limits struct {
	// MaxCommitBytes caps one JSON commit (or JSON V2 checkpoint) file. The
	// default, 64 MiB, is the cap lakegate's Delta API puts on staged
	// commits: a commit of some hundred thousand files.
	MaxCommitBytes int64
	// MaxCheckpointBytes caps one parquet checkpoint, part or sidecar file.
	MaxCheckpointBytes int64
	// MaxActions caps the actions held while replaying: checkpoint rows
	// plus commit lines. It bounds memory (an add is a few hundred bytes
	// plus its stats string).
	MaxActions int64
	// MaxLogFiles caps the entries a listing of _delta_log may return.
	MaxLogFiles int
	// MaxLineBytes caps one JSON line (one action).
	MaxLineBytes int
}

// Defaults.
const (
	DefaultMaxCommitBytes     = 64 << 20
	DefaultMaxCheckpointBytes = 1 << 30
	DefaultMaxActions         = 4_000_000
	DefaultMaxLogFiles        = 1_000_000
	DefaultMaxLineBytes       = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxCommitBytes <= 0 {
		l.MaxCommitBytes = DefaultMaxCommitBytes
	}
	if l.MaxCheckpointBytes <= 0 {
		l.MaxCheckpointBytes = DefaultMaxCheckpointBytes
	}
	if l.MaxActions <= 0 {
		l.MaxActions = DefaultMaxActions
	}
	if l.MaxLogFiles <= 0 {
		l.MaxLogFiles = DefaultMaxLogFiles
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	return l
}
