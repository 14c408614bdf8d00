package deltalog

import (
	"regexp"
	"strconv"
)

// The _delta_log file names this reader uses ("Delta Log Entries",
// "Checkpoint Naming Scheme"). Versions are 20 digits, parts 10.
var (
	commitName    = regexp.MustCompile(`^(\d{20})\.json$`)
	classicName   = regexp.MustCompile(`^(\d{20})\.checkpoint\.parquet$`)
	multiPartName = regexp.MustCompile(`^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$`)
	uuidName      = regexp.MustCompile(`^(\d{20})\.checkpoint\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\.(json|parquet)$`)
)

type fileKind int

const (
	kindOther fileKind = iota
	kindCommit
	kindClassic   // n.checkpoint.parquet (V1 or V2 spec)
	kindMultiPart // n.checkpoint.o.p.parquet (V1 spec)
	kindUUID      // n.checkpoint.u.json|parquet (V2 spec)
)

// logFile is a classified _delta_log entry.
type logFile struct {
	FileInfo
	kind        fileKind
	version     int64
	part, parts int
}

// classify names an entry's kind and version. Anything else (checksums,
// compactions, _last_checkpoint, temporary files, names whose version
// overflows int64) is kindOther and is not read as part of the log.
func classify(fi FileInfo) logFile {
	lf := logFile{FileInfo: fi}
	name := fi.Name
	if m := commitName.FindStringSubmatch(name); m != nil {
		return lf.with(kindCommit, m[1])
	}
	if m := classicName.FindStringSubmatch(name); m != nil {
		return lf.with(kindClassic, m[1])
	}
	if m := uuidName.FindStringSubmatch(name); m != nil {
		return lf.with(kindUUID, m[1])
	}
	if m := multiPartName.FindStringSubmatch(name); m != nil {
		lf = lf.with(kindMultiPart, m[1])
		lf.part, _ = strconv.Atoi(m[2])
		lf.parts, _ = strconv.Atoi(m[3])
		if lf.parts < 1 || lf.part < 1 || lf.part > lf.parts {
			lf.kind = kindOther
		}
		return lf
	}
	return lf
}

func (lf logFile) with(k fileKind, digits string) logFile {
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return lf
	}
	lf.kind, lf.version = k, v
	return lf
}

// commitFileName is the name of version v's commit.
func commitFileName(v int64) string {
	return pad20(v) + ".json"
}

func pad20(v int64) string {
	s := strconv.FormatInt(v, 10)
	for len(s) < 20 {
		s = "0" + s
	}
	return s
}
