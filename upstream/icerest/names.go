package icerest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameProblem says why s cannot be a namespace level or an object name in
// any catalog, or "" when it can: "." and ".." (rewritten onto a URL they
// climb its path), invalid UTF-8, and control characters (NUL included:
// one backend listed "a\x00b" as "ab", which could then not be used). The
// gateway applies it to every request; catalogs may add rules of their own.
func NameProblem(s string) string {
	switch {
	case s == "." || s == "..":
		return "is not allowed"
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "contains a control character"
	}
	return ""
}
