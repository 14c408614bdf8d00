package deltalog

import (
	"cmp"
	"maps"
	"slices"
)

// fileKey is a logical file's primary key: "(path, deletionVector.uniqueId)"
// ("Action Reconciliation"), with the path resolved so that two spellings
// of one file (relative and absolute, escaped differently) are one key.
type fileKey struct {
	loc string
	dv  string
}

// lineAction is an action with the line it was read from.
type lineAction struct {
	line int
	a    *Action
}

// state is a table's state during replay, reconciled as "Action
// Reconciliation" says: the latest protocol and metaData win; for txn the
// latest per appId; for domainMetadata the latest per domain, removed=true
// being a tombstone; adds are "unique path keys, corresponding to the
// newest (path, deletionVector.uniqueId) pair encountered for each path";
// removes are tombstones keyed by (path, dvId), never also in adds.
type state struct {
	root     string
	lim      Limits
	held     int64
	protocol *Protocol
	metadata *Metadata
	adds     map[string]*AddFile
	removes  map[fileKey]*RemoveFile
	txns     map[string]Txn
	domains  map[string]DomainMetadata
}

func newState(root string, lim Limits) *state {
	return &state{root: root, lim: lim, adds: map[string]*AddFile{},
		removes: map[fileKey]*RemoveFile{}, txns: map[string]Txn{}, domains: map[string]DomainMetadata{}}
}

// apply applies one action; file and line name it in errors.
func (s *state) apply(a *Action, file string, line int) error {
	if s.held++; s.held > s.lim.MaxActions {
		return errorf(ErrLimit, file, line, "more than %d actions to replay", s.lim.MaxActions)
	}
	var err error
	switch {
	case a.Add != nil:
		err = s.add(a.Add)
	case a.Remove != nil:
		err = s.remove(a.Remove)
	case a.MetaData != nil:
		s.metadata = a.MetaData
	case a.Protocol != nil:
		s.protocol = a.Protocol
	case a.Txn != nil:
		s.txns[a.Txn.AppID] = *a.Txn
	case a.DomainMetadata != nil:
		s.domain(*a.DomainMetadata)
	}
	if err != nil {
		return errorf(ErrMalformed, file, line, "%s", err)
	}
	return nil
}

func (s *state) add(f *AddFile) error {
	loc, err := ResolvePath(s.root, f.Path)
	if err != nil {
		return err
	}
	f.Location = loc
	delete(s.removes, fileKey{loc, f.DeletionVector.UniqueID()})
	s.adds[loc] = f
	return nil
}

func (s *state) remove(f *RemoveFile) error {
	loc, err := ResolvePath(s.root, f.Path)
	if err != nil {
		return err
	}
	f.Location = loc
	k := fileKey{loc, f.DeletionVector.UniqueID()}
	// Only the logical file with this DV goes: a remove of (path, dv1)
	// next to an add of (path, dv2) is how a DELETE swaps a file's DV.
	if cur, ok := s.adds[loc]; ok && cur.DeletionVector.UniqueID() == k.dv {
		delete(s.adds, loc)
	}
	s.removes[k] = f
	return nil
}

func (s *state) domain(d DomainMetadata) {
	if d.Removed {
		delete(s.domains, d.Domain)
		return
	}
	s.domains[d.Domain] = d
}

// applyCommit applies one commit's actions. "Since actions within a given
// Delta commit are not guaranteed to be applied in order" ("Add File and
// Remove File"), removes go before adds: in a valid commit the order does
// not matter, and this way a remove and an add of the same logical file in
// one commit (which the protocol forbids) leave the file present, as the
// writer evidently meant.
func (s *state) applyCommit(file string, actions []lineAction) error {
	var meta, proto int
	for _, la := range actions {
		if la.a.MetaData != nil {
			meta++
		}
		if la.a.Protocol != nil {
			proto++
		}
	}
	if meta > 1 || proto > 1 {
		// "A single log entry MUST NOT include more than one action that
		// reconciles with each other" ("Delta Log Entries"): which would win
		// is undefined.
		return errorf(ErrMalformed, file, 0, "%d metaData and %d protocol actions in one commit; at most one of each is allowed", meta, proto)
	}
	for _, removes := range []bool{true, false} {
		for _, la := range actions {
			if (la.a.Remove != nil) != removes {
				continue
			}
			if err := s.apply(la.a, file, la.line); err != nil {
				return err
			}
		}
	}
	return nil
}

// files are the active adds, sorted by location for stable output.
func (s *state) files() []AddFile {
	out := make([]AddFile, 0, len(s.adds))
	for _, f := range s.adds {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b AddFile) int { return cmp.Compare(a.Location, b.Location) })
	return out
}

func (s *state) tombstones() []RemoveFile {
	out := make([]RemoveFile, 0, len(s.removes))
	for _, f := range s.removes {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b RemoveFile) int {
		return cmp.Or(cmp.Compare(a.Location, b.Location), cmp.Compare(a.DeletionVector.UniqueID(), b.DeletionVector.UniqueID()))
	})
	return out
}

func (s *state) clone() (map[string]Txn, map[string]DomainMetadata) {
	return maps.Clone(s.txns), maps.Clone(s.domains)
}
