package sharing

import (
	"net/url"
	"testing"
)

// schemeOf is url.Parse's scheme wherever url.Parse reads the location,
// and still the scheme where url.Parse refuses what follows it (a '%' that
// is part of a file name).
func TestSchemeOf(t *testing.T) {
	for _, p := range []string{
		"/t/a.parquet", "/t/../a", "/", "//h/t/a", "//", "file:///t/a", "FILE:///t/a", "File:///t/a", "file://localhost/t/a",
		"file://host/t/a", "file:/t/a", "file:t", "file:", "file://", "file:///", "file:///t/%61", "/t/a?b", "/t/a#b",
		"file:///t/a?x#y", "t/a", "", "s3://b/t/a", "S3://b/a", "s3a://b/a", "gs://b/a", "abfss://c@a.dfs.core.windows.net/a",
		"/t/x://y", "/t/\"q\\<&>\u2028é", "/t/a b", "file:////t", "a+b.c-d://x",
	} {
		u, err := url.Parse(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if got := schemeOf(p); got != u.Scheme {
			t.Errorf("schemeOf(%q) = %q; url.Parse: %q", p, got, u.Scheme)
		}
	}
	for p, want := range map[string]string{
		"file:///t/region=us%2Feast+1/a%zz.parquet": "file", "s3://b/pct=100%/a": "s3", "/t/a%zz": "",
		"1:/a": "", ":/a": "", "region=a:b/x": "", "file:///t/ctl\x01": "file",
	} {
		if got := schemeOf(p); got != want {
			t.Errorf("schemeOf(%q) = %q, want %q", p, got, want)
		}
	}
}
