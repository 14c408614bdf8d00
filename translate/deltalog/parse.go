package deltalog

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// ParseCommit parses a JSON commit file ("Delta Log Entries"): one action
// per line. name is the file's name for errors. Lines that hold no action
// this reader knows are skipped; a line that is not one JSON object, holds
// two actions, or breaks an action's required fields is an error naming
// the line. V2 checkpoint actions (sidecar, checkpointMetadata) are refused:
// "Action Reconciliation" allows them only in checkpoints.
func ParseCommit(name string, data []byte, lim Limits) ([]Action, error) {
	var out []Action
	err := eachJSONAction(name, data, lim.withDefaults(), func(line int, a *Action) error {
		if a.Sidecar != nil || a.CheckpointMetadata != nil {
			return errorf(ErrMalformed, name, line, "a V2 checkpoint action in a commit file")
		}
		out = append(out, *a)
		return nil
	})
	return out, err
}

// eachJSONAction calls fn for every action line of a newline-delimited JSON
// file, checked and normalised (see validate).
func eachJSONAction(name string, data []byte, lim Limits, fn func(line int, a *Action) error) error {
	if int64(len(data)) > lim.MaxCommitBytes {
		return errorf(ErrLimit, name, 0, "%d bytes, over the limit of %d", len(data), lim.MaxCommitBytes)
	}
	var actions int64
	for n := 1; len(data) > 0; n++ {
		var raw []byte
		raw, data = cutLine(data)
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		if len(line) > lim.MaxLineBytes {
			return errorf(ErrLimit, name, n, "a line of %d bytes, over the limit of %d", len(line), lim.MaxLineBytes)
		}
		a, err := decodeLine(line)
		if err != nil {
			return errorf(ErrMalformed, name, n, "%s", err)
		}
		if a == nil {
			continue
		}
		if actions++; actions > lim.MaxActions {
			return errorf(ErrLimit, name, n, "more than %d actions", lim.MaxActions)
		}
		if err := fn(n, a); err != nil {
			return err
		}
	}
	return nil
}

func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// decodeLine decodes one line; nil, nil is a line with no known action.
func decodeLine(line []byte) (*Action, error) {
	// encoding/json silently turns invalid UTF-8 into U+FFFD, which
	// would make a path name another file: refuse it instead.
	if !utf8.Valid(line) {
		return nil, errString("not valid UTF-8")
	}
	if line[0] != '{' {
		return nil, errString("not a JSON object")
	}
	var a Action
	if err := json.Unmarshal(line, &a); err != nil {
		return nil, errString("not a Delta action: " + trimJSONErr(err))
	}
	switch count(&a) {
	case 0:
		return nil, nil
	case 1:
		return &a, validate(&a)
	}
	return nil, errString("more than one action on one line")
}

func count(a *Action) int {
	n := 0
	for _, set := range []bool{a.Add != nil, a.Remove != nil, a.MetaData != nil, a.Protocol != nil, a.Txn != nil,
		a.DomainMetadata != nil, a.CommitInfo != nil, a.Sidecar != nil, a.CheckpointMetadata != nil} {
		if set {
			n++
		}
	}
	return n
}

type errString string

func (e errString) Error() string { return string(e) }

// trimJSONErr drops encoding/json's Go type names, which mean nothing to
// whoever wrote the log.
func trimJSONErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	s = strings.ReplaceAll(s, "deltalog.", "")
	return s
}
