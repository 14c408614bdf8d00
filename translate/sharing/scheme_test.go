package sharing

import (
	"net/url"
	"testing"
)

// plainScheme answers only where url.Parse would succeed, and then with
// url.Parse's scheme.
func TestPlainSchemeMatchesURLParse(t *testing.T) {
	known := 0
	for _, p := range []string{
		"/t/a.parquet", "/t/../a", "/", "//h/t/a", "//", "file:///t/a", "FILE:///t/a", "File:///t/a", "file://localhost/t/a",
		"file://host/t/a", "file:/t/a", "file:t", "file:", "file://", "file:///", "file:///t/%61", "/t/a%zz", "/t/a?b", "/t/a#b",
		"file:///t/a?x#y", "t/a", "", "s3://b/t/a", "S3://b/a", "s3a://b/a", "gs://b/a", "abfss://c@a.dfs.core.windows.net/a",
		"/t/x://y", "/t/ctl\x01", "file:///t/\x7f", "/t/\"q\\<&>\u2028é", "/t/bad\xff", "/t/a b", "1:/a", ":/a", "file:////t",
	} {
		scheme, ok := plainScheme(p)
		if !ok {
			continue
		}
		known++
		u, err := url.Parse(p)
		if err != nil || u.Scheme != scheme {
			t.Errorf("plainScheme(%q) = %q; url.Parse: %v, %v", p, scheme, u, err)
		}
	}
	if known < 10 {
		t.Fatalf("plainScheme knew only %d spellings", known)
	}
}
