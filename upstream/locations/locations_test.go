package locations

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRuleAllows(t *testing.T) {
	r, err := New("file:///data/wh", "/srv/extra/", "s3://bucket/lake", "abfss://c@acct.dfs.core.windows.net/root")
	require.NoError(t, err)
	inside := []string{
		"file:///data/wh",
		"file:///data/wh/",
		"file:///data/wh/ns.db/t/metadata/00001.metadata.json",
		"file:/data/wh/ns.db/t",
		"file://localhost/data/wh/t",
		"/data/wh/t",
		"/srv/extra/t",
		"local:///data/wh/t", // Trino's native local file system
		"file:///data/wh/a%20b",
		"s3://bucket/lake/ns/t",
		"s3a://bucket/lake/ns/t",
		"S3://BUCKET/lake/t",
		"abfs://c@acct.dfs.core.windows.net/root/t",
	}
	for _, loc := range inside {
		assert.True(t, r.Allows(loc), loc)
	}
	outside := []string{
		"",
		"file:///etc/passwd",
		"/etc/passwd",
		"file:///data/wh2/t",       // a sibling sharing the prefix
		"file:///data",             // the parent
		"file:///data/wh/../x",     // climbs out
		"file:///data/wh/./x",      // not one spelling
		"file:///data/wh/%2e%2e/x", // climbs out once decoded
		"file:///data/wh%2F..%2Fx",
		"file://otherhost/data/wh/t",
		"local://otherhost/data/wh/t",
		"file:data/wh/t", // relative
		"data/wh/t",
		"./data/wh/t",
		"s3://bucket/lakehouse/t",
		"s3://other/lake/t",
		"s3:///lake/t",
		"gs://bucket/lake/t",
		"s3://bucket/lake/t?versionId=1",
		"s3://bucket/lake/t#frag",
		"file:///data/wh/a\x00b",
		"file:///data/wh/a%00b",
		"file:///data/wh/a\nb",
		"file:///data/wh/\xff",
		"abfs://d@acct.dfs.core.windows.net/root/t",
		"http://[::1",
	}
	for _, loc := range outside {
		err := r.Check(loc)
		assert.ErrorIs(t, err, ErrOutside, "%q", loc)
		assert.ErrorIs(t, err, fs.ErrPermission, "%q", loc)
	}
}

func TestRuleZeroAllowsNothing(t *testing.T) {
	var nilRule *Rule
	assert.False(t, nilRule.Allows("file:///x"))
	assert.False(t, (&Rule{}).Allows("file:///x"))
}

func TestNewRefusesAmbiguousRoots(t *testing.T) {
	for _, root := range []string{"", "relative/dir", "file:///a/../b", "s3:///nobucket", "file:///a?x"} {
		_, err := New(root)
		assert.Error(t, err, "%q", root)
	}
}

func TestConfineRefusesOutsideBeforeTouchingFiles(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	outside := filepath.Join(dir, "secret")
	require.NoError(t, os.MkdirAll(wh, 0o755))
	require.NoError(t, os.WriteFile(outside, []byte("s3cr3t"), 0o600))
	r, err := New("file://" + wh)
	require.NoError(t, err)
	cfs := Confine(icebergio.LocalFS{}, r)

	_, err = cfs.Open("file://" + outside)
	require.ErrorIs(t, err, ErrOutside)
	assert.NotContains(t, err.Error(), "s3cr3t")
	_, err = cfs.(icebergio.ReadFileIO).ReadFile(outside)
	require.ErrorIs(t, err, ErrOutside)
	require.ErrorIs(t, cfs.Remove("file://"+outside), ErrOutside)
	require.ErrorIs(t, cfs.(icebergio.WriteFileIO).WriteFile(filepath.Join(dir, "new"), []byte("x")), ErrOutside)
	_, err = cfs.(icebergio.WriteFileIO).Create("file://" + wh + "/../escape")
	require.ErrorIs(t, err, ErrOutside)
	require.ErrorIs(t, cfs.(icebergio.ListableIO).WalkDir(dir, nil), ErrOutside)
	deleted, err := cfs.(icebergio.BulkRemovableIO).DeleteFiles(context.Background(), []string{"file://" + outside})
	require.ErrorIs(t, err, ErrOutside)
	assert.Empty(t, deleted)
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t", string(b), "the file outside is untouched")
	_, err = os.Stat(filepath.Join(dir, "new"))
	assert.True(t, errors.Is(err, fs.ErrNotExist))

	inside := "file://" + wh + "/ns.db/t/metadata/v1.json"
	require.NoError(t, cfs.(icebergio.WriteFileIO).WriteFile(inside, []byte("{}")))
	got, err := cfs.(icebergio.ReadFileIO).ReadFile(inside)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(got))
	deleted, err = cfs.(icebergio.BulkRemovableIO).DeleteFiles(context.Background(), []string{inside})
	require.NoError(t, err)
	assert.Equal(t, []string{inside}, deleted)
}

// FuzzCheck: whatever the bytes, a location the rule allows starts with a
// root's spelling once parsed, and has no dot segment a file system would
// resolve.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"file:///data/wh/t", "/data/wh/../etc", "file:///data/wh/%2e%2e/x",
		"s3://b/lake/t", "s3a://B/lake/./t", "file://localhost/data/wh", "\x00", "file:data"} {
		f.Add(s)
	}
	r, err := New("file:///data/wh", "s3://b/lake")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		if !r.Allows(loc) {
			return
		}
		p, err := parse(loc)
		if err != nil {
			t.Fatalf("allowed but unparsable: %q", loc)
		}
		if dotSegment(p.path) || dotSegment(p.raw) || strings.ContainsRune(p.path, 0) {
			t.Fatalf("allowed with a dot segment or NUL: %q", loc)
		}
		if !(under("/data/wh", p.path) && p.scheme == "file") && !(under("/lake", p.path) && p.scheme == "s3" && p.host == "b") {
			t.Fatalf("allowed outside the roots: %q -> %+v", loc, p)
		}
	})
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"s3://b/wh/t1", "s3://b/wh/t1/", true},
		{"s3://b/wh/t1", "s3a://b/wh/t1/data", true},
		{"s3://b/wh/t1/data", "s3://b/wh/t1", true},
		{"file:///wh/t1", "/wh/t1", true},
		{"s3://b/wh/t1", "s3://b/wh/t10", false},
		{"s3://b/wh/t1", "s3://other/wh/t1", false},
		{"s3://b/wh/t1", "gs://b/wh/t1", false},
		{"s3://b/wh/t1", "relative/t1", false},
	} {
		assert.Equal(t, tc.want, Overlap(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
	}
	assert.NoError(t, Valid("s3://b/wh/t1"))
	for _, bad := range []string{"t1", "wh/t1", "s3://b/wh/../t1", "s3:///t1", "file://host/t", "s3://b/t?x=1"} {
		assert.Error(t, Valid(bad), bad)
	}
}

func TestRuleMeets(t *testing.T) {
	r, err := New("s3://b/wh/a", "file:///data/")
	require.NoError(t, err)
	for _, tc := range []struct {
		loc  string
		want bool
	}{
		{"s3://b/wh/a", true},
		{"s3://b/wh/a/", true},
		{"s3://b/wh/a/t", true},  // below a root
		{"s3://b/wh", true},      // holds a root
		{"s3a://b/wh/", true},    // holds it, under an alias
		{"s3://b/wh/ab", false},  // a sibling prefix
		{"s3://c/wh/a", false},   // another bucket
		{"/data/x", true},        // below the file root
		{"/dat", false},          // a prefix of it, not a parent
		{"relative/wh/a", false}, // not a location
	} {
		assert.Equal(t, tc.want, r.Meets(tc.loc), tc.loc)
	}
	var none *Rule
	assert.False(t, none.Meets("s3://b/wh"))
}
