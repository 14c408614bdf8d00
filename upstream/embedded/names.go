package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// checkName refuses a namespace level or object name the embedded catalog
// cannot store faithfully: the names no catalog can hold
// (icerest.NameProblem), and "/", which iceberg-go's SQL catalog rejects
// too (as a misleading "does not exist"). A 400 here, before anything is
// looked up or written.
func checkName(what, s string) error {
	switch problem := icerest.NameProblem(s); {
	case s == "":
		return badRequest("%s name is empty", what)
	case problem != "":
		return badRequest("%s name %q %s", what, s, problem)
	case strings.Contains(s, "/"):
		return badRequest("%s name %q: the embedded catalog does not support \"/\" in names", what, s)
	case len(s) > maxNameBytes:
		return validationError("%s name is %d bytes long: at most %d", what, len(s), maxNameBytes)
	}
	return nil
}

// checkNamespace checks every level of a namespace.
func checkNamespace(ns []string) error {
	if len(ns) == 0 {
		return badRequest("namespace must be a non-empty list of non-empty levels")
	}
	for _, l := range ns {
		if err := checkName("namespace", l); err != nil {
			return err
		}
	}
	return nil
}

// checkSeparator refuses a namespace level that holds the catalog's
// advertised separator: every path would split it into two levels, so a
// namespace "x.y" under separator "." could be created and listed but
// never reached. (%1F, the spec's own separator, is refused as a control
// character by checkName.)
func (c *Catalog) checkSeparator(ns []string) error {
	for _, l := range ns {
		if strings.Contains(l, c.sep) {
			return badRequest("namespace level %q contains the catalog's namespace separator %q, "+
				"so no path could address it", l, c.sep)
		}
	}
	return nil
}

// checkIdent checks a table or view identifier.
func checkIdent(what string, id table.Identifier) error {
	if len(id) < 2 {
		return badRequest("%s identifier needs a namespace and a name", what)
	}
	if err := checkNamespace(id[:len(id)-1]); err != nil {
		return err
	}
	return checkName(what, id[len(id)-1])
}

// checkRoute checks the names a request path addresses.
func checkRoute(rt icerest.Route) error {
	if rt.Namespace != nil {
		if err := checkNamespace(rt.Namespace); err != nil {
			return err
		}
	}
	if rt.Table != "" {
		if err := checkName("table", rt.Table); err != nil {
			return err
		}
	}
	if rt.View != "" {
		return checkName("view", rt.View)
	}
	return nil
}

// locationSegment is the directory name a table or view name gets under
// the warehouse. Names of plain characters are used as they are; any other
// name would need escaping that Go, Java (Hadoop paths) and Python clients
// resolve differently (is "%25" a directory "%25" or "%"?), so its unsafe
// characters become "_" and a hash of the whole name keeps it apart from
// the plain name it now resembles.
func locationSegment(name string) string { return segment(name, false) }

// namespaceSegment is locationSegment for a namespace level. Levels are
// joined with "." in the location, so a "." inside a level is unsafe too:
// ["a.b"] and ["a","b"] must not share a directory.
func namespaceSegment(level string) string { return segment(level, true) }

func segment(name string, noDots bool) string {
	safe := func(r rune) bool {
		return r == '-' || r == '_' || (r == '.' && !noDots) ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	unsafe := func(r rune) bool { return !safe(r) }
	if name != "" && name[0] != '.' && !strings.ContainsFunc(name, unsafe) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	mapped := strings.Map(func(r rune) rune {
		if safe(r) && r != '.' {
			return r
		}
		return '_'
	}, name)
	return mapped + "-" + hex.EncodeToString(sum[:4])
}
