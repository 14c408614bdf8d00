package embedded

import "testing"

func TestLocationSegments(t *testing.T) {
	for _, tc := range []struct{ in, table, ns string }{
		{"plain", "plain", "plain"},
		{"with.dot", "with.dot", "with_dot-"},
		{"t%1", "t_1-", "t_1-"},
		{"t_1", "t_1", "t_1"},
		{".hidden", "_hidden-", "_hidden-"},
		{"ünï", "_n_-", "_n_-"},
	} {
		check := func(kind, got, want string) {
			t.Helper()
			if want[len(want)-1] == '-' {
				if len(got) != len(want)+8 || got[:len(want)] != want {
					t.Errorf("%s segment of %q = %q, want %q and 8 hex digits", kind, tc.in, got, want)
				}
				return
			}
			if got != want {
				t.Errorf("%s segment of %q = %q, want %q", kind, tc.in, got, want)
			}
		}
		check("table", locationSegment(tc.in), tc.table)
		check("namespace", namespaceSegment(tc.in), tc.ns)
	}
	if locationSegment("t%1") == locationSegment("t&1") {
		t.Error("t%1 and t&1 share a directory")
	}
}
