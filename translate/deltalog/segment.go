package deltalog

import (
	"cmp"
	"slices"
)

// checkpoint is one complete checkpoint in a listing: a classic or UUID
// file, or every part of a multi-part one.
type checkpoint struct {
	version int64
	kind    fileKind
	files   []logFile
}

// listing is a _delta_log listing sorted out: commits by version and the
// complete checkpoints.
type listing struct {
	commits     map[int64]logFile
	checkpoints []checkpoint
	latest      int64 // -1: no commit and no checkpoint
}

func newListing(files []FileInfo) listing {
	ls := listing{commits: map[int64]logFile{}, latest: -1}
	type partsKey struct {
		version int64
		parts   int
	}
	multi := map[partsKey]map[int]logFile{}
	for _, fi := range files {
		lf := classify(fi)
		switch lf.kind {
		case kindCommit:
			ls.commits[lf.version] = lf
		case kindClassic, kindUUID:
			ls.checkpoints = append(ls.checkpoints, checkpoint{version: lf.version, kind: lf.kind, files: []logFile{lf}})
		case kindMultiPart:
			k := partsKey{lf.version, lf.parts}
			if multi[k] == nil {
				multi[k] = map[int]logFile{}
			}
			multi[k][lf.part] = lf
		}
	}
	for k, parts := range multi {
		// "readers must ignore multi-part checkpoints with missing parts"
		// ("Checkpoints"): such a set does not count, not even for latest.
		if len(parts) != k.parts {
			continue
		}
		cp := checkpoint{version: k.version, kind: kindMultiPart}
		for i := 1; i <= k.parts; i++ {
			cp.files = append(cp.files, parts[i])
		}
		ls.checkpoints = append(ls.checkpoints, cp)
	}
	ls.latest = ls.latestComplete()
	return ls
}

// latestComplete is the newest version some file of the listing fully
// describes: a commit or a complete checkpoint, never a part of an
// incomplete multi-part set.
func (ls listing) latestComplete() int64 {
	v := int64(-1)
	for c := range ls.commits {
		v = max(v, c)
	}
	for _, cp := range ls.checkpoints {
		v = max(v, cp.version)
	}
	return v
}

// firstContiguous is the lowest k with every commit k..target listed
// (target+1 when target's own commit is missing).
func (ls listing) firstContiguous(target int64) int64 {
	k := target + 1
	for k > 0 {
		if _, ok := ls.commits[k-1]; !ok {
			break
		}
		k--
	}
	return k
}

// candidates are the checkpoints a snapshot at target can start from,
// best first: "readers should prefer to use the newest complete checkpoint
// possible. For time travel, the checkpoint used must not be newer than
// the time travel version" ("Checkpoints"). A checkpoint is usable only if
// every commit after it up to target is listed. Among checkpoints of one
// version, the one _last_checkpoint names comes first (its parts count
// tells which multi-part set was finished), then classic, UUID-named and
// multi-part ones.
func (ls listing) candidates(target int64, hint *lastCheckpoint) []checkpoint {
	first := ls.firstContiguous(target)
	var out []checkpoint
	for _, cp := range ls.checkpoints {
		if cp.version <= target && cp.version+1 >= first {
			out = append(out, cp)
		}
	}
	slices.SortStableFunc(out, func(a, b checkpoint) int {
		if c := cmp.Compare(b.version, a.version); c != 0 {
			return c
		}
		if c := cmp.Compare(rank(b, hint), rank(a, hint)); c != 0 {
			return c
		}
		return cmp.Compare(a.files[0].Name, b.files[0].Name)
	})
	return out
}

func rank(cp checkpoint, hint *lastCheckpoint) int {
	r := map[fileKind]int{kindClassic: 3, kindUUID: 2, kindMultiPart: 1}[cp.kind]
	if hint.names(cp) {
		r += 10
	}
	return r
}
