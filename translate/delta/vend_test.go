package delta

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/translate"
)

// covering is the credential a Delta client picks for path: the longest
// prefix path starts with, compared as strings (uc-delta-api.yaml); "" when
// none covers it.
func covering(creds []StorageCredential, path string) string {
	best := ""
	for _, c := range creds {
		if strings.HasPrefix(path, c.Prefix) && len(c.Prefix) > len(best) {
			best = c.Prefix
		}
	}
	return best
}

// A credential for a location covers that location and what lies below
// it, never a sibling whose name merely starts the same (m1 and m10): the
// prefix a client matches as a string ends on a path-segment boundary.
func TestCredentialPrefixSegmentBoundary(t *testing.T) {
	s := &Service{CredentialTTL: time.Hour, now: func() time.Time { return time.UnixMilli(0) }}
	for _, tc := range []struct {
		name, vended, want string
		covered, apart     []string // paths the credential must, and must not, cover
	}{
		{"s3 table", "s3://b/w/m1", "s3://b/w/m1/",
			[]string{"s3://b/w/m1/_delta_log/00000000000000000000.json", "s3://b/w/m1/part-0.parquet"},
			[]string{"s3://b/w/m10/part-0.parquet", "s3://b/w/m1.bak/x", "s3://b/w/m1_old/x", "s3://b/w/other/x"}},
		{"trailing slash kept", "s3://b/w/m1/", "s3://b/w/m1/", []string{"s3://b/w/m1/x"}, []string{"s3://b/w/m10/x"}},
		{"bucket root", "s3://bucket", "s3://bucket/", []string{"s3://bucket/any/x"}, []string{"s3://bucket-2/x"}},
		{"file URI", "file:///data/m1", "file:///data/m1/", []string{"file:///data/m1/x"}, []string{"file:///data/m10/x"}},
		{"absolute path", "/data/m1", "/data/m1/", []string{"/data/m1/x"}, []string{"/data/m10/x"}},
		{"gcs", "gs://b/m1", "gs://b/m1/", []string{"gs://b/m1/x"}, []string{"gs://b/m10/x"}},
		{"adls", "abfss://c@acct.dfs.core.windows.net/m1", "abfss://c@acct.dfs.core.windows.net/m1/",
			[]string{"abfss://c@acct.dfs.core.windows.net/m1/x"}, []string{"abfss://c@acct.dfs.core.windows.net/m10/x"}},
		// What is no location is the catalog's to mean: passed as written.
		{"bare scheme", "s3", "s3", []string{"s3://b/x"}, nil},
		{"empty", "", "", []string{"s3://b/x"}, nil},
		{"dot segments", "s3://b/x/../m1", "s3://b/x/../m1", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := s.deltaCredentials([]translate.StorageCredential{{Prefix: tc.vended, Config: map[string]string{"k": "v"}}}, Read)
			assert.Equal(t, tc.want, out[0].Prefix)
			for _, p := range tc.covered {
				assert.Equal(t, tc.want, covering(out, p), "covers %s", p)
			}
			for _, p := range tc.apart {
				assert.Empty(t, covering(out, p), "does not cover %s", p)
			}
		})
	}
}

// With credentials for two sibling tables, each table's files get its own.
func TestCredentialPrefixSiblings(t *testing.T) {
	s := &Service{CredentialTTL: time.Hour, now: time.Now}
	out := s.deltaCredentials([]translate.StorageCredential{
		{Prefix: "s3://b/w/m1", Config: map[string]string{"s3.session-token": "one"}},
		{Prefix: "s3://b/w/m10", Config: map[string]string{"s3.session-token": "ten"}},
	}, ReadWrite)
	assert.Equal(t, "s3://b/w/m1/", covering(out, "s3://b/w/m1/part-0.parquet"))
	assert.Equal(t, "s3://b/w/m10/", covering(out, "s3://b/w/m10/part-0.parquet"))
	assert.Empty(t, covering(out, "s3://b/w/m100/part-0.parquet"))
}
