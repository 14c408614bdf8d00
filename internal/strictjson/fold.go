package strictjson

import (
	"unicode"
	"unicode/utf8"
)

// Fold is the key encoding/json compares field names by (its
// foldName): ASCII letters upper-cased, any other rune r as
// unicode.ToUpper(unicode.ToLower(r)), so that the Kelvin sign K (U+212A)
// matches "k" and the long s (U+017F) matches "s". Two names with the
// same Fold are the same field to a Go decoder.
func Fold(name string) string {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(r)))
		i += n
	}
	return string(out)
}

// Folds maps each name's Fold to the name, for Variant.
func Folds(names []string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[Fold(n)] = n
	}
	return m
}
