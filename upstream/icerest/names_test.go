package icerest

import "testing"

func TestNameProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  bool
	}{
		{"events", false}, {"a%b/c", false}, {"ünï", false}, {"a.b", false}, {"...", false},
		{".", true}, {"..", true}, {"a\x00b", true}, {"t\a", true}, {"\x1b[0m", true},
		{"a\u0085b", true}, {"\xff", true}, {"a\xc3", true},
	} {
		if got := NameProblem(tc.name) != ""; got != tc.bad {
			t.Errorf("NameProblem(%q) = %q, want a problem: %t", tc.name, NameProblem(tc.name), tc.bad)
		}
	}
}
