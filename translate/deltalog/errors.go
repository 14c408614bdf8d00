package deltalog

import (
	"errors"
	"fmt"
)

// The kinds of failure, for errors.Is: callers map them to answers (a
// malformed or unsupported log is the table's fault, not lakegate's).
var (
	// ErrMalformed: a log file breaks the protocol (bad JSON, a missing
	// required field, a gap in the versions).
	ErrMalformed = errors.New("malformed Delta log")
	// ErrUnsupported: a valid log that this reader does not handle.
	ErrUnsupported = errors.New("unsupported Delta log")
	// ErrLimit: a file or the log is larger than Limits allow.
	ErrLimit = errors.New("Delta log over limits")
	// ErrNotFound: no Delta table at the location, or no such version.
	ErrNotFound = errors.New("Delta table or version not found")
)

// Error is a failure tied to a place in the log. File is the path under
// the table location (e.g. "_delta_log/00000000000000000003.json"); Line is
// the 1-based line of a JSON file or the 1-based row of a parquet file, 0
// when the whole file is meant.
type Error struct {
	Kind error
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return fmt.Sprintf("%v: %s", e.Kind, e.Msg)
	case e.Line == 0:
		return fmt.Sprintf("%v: %s: %s", e.Kind, e.File, e.Msg)
	}
	return fmt.Sprintf("%v: %s:%d: %s", e.Kind, e.File, e.Line, e.Msg)
}

func (e *Error) Unwrap() error { return e.Kind }

func errorf(kind error, file string, line int, format string, args ...any) *Error {
	return &Error{Kind: kind, File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
