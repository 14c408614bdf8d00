package deltalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const okAdd = `{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`

// Bad commit lines are refused with the file's name and the line.
func TestParseCommitRefuses(t *testing.T) {
	cases := []struct {
		name, line, msg string
		kind            error
	}{
		{"not JSON", `{"add":`, "not a Delta action", ErrMalformed},
		{"array", `[{"add":{}}]`, "not a JSON object", ErrMalformed},
		{"null", `null`, "not a JSON object", ErrMalformed},
		{"number", `42`, "not a JSON object", ErrMalformed},
		{"two actions", `{"add":{"path":"a","size":1},"remove":{"path":"a"}}`, "more than one action", ErrMalformed},
		{"invalid UTF-8", "{\"add\":{\"path\":\"a\xff.parquet\",\"size\":1}}", "UTF-8", ErrMalformed},
		{"add without path", `{"add":{"size":1}}`, "without a path", ErrMalformed},
		{"add negative size", `{"add":{"path":"a","size":-1}}`, "negative size", ErrMalformed},
		{"add size not a number", `{"add":{"path":"a","size":"1"}}`, "not a Delta action", ErrMalformed},
		{"add size overflows", `{"add":{"path":"a","size":99999999999999999999}}`, "not a Delta action", ErrMalformed},
		{"add path climbs", `{"add":{"path":"../other/a.parquet","size":1}}`, "climbs out", ErrMalformed},
		{"add path query", `{"add":{"path":"a.parquet?x=1","size":1}}`, "query or fragment", ErrMalformed},
		{"add path not URI", `{"add":{"path":"%zz","size":1}}`, "not a URI", ErrMalformed},
		{"add path opaque", `{"add":{"path":"s3:bucket/a","size":1}}`, "not a URI", ErrMalformed},
		{"partition value not string", `{"add":{"path":"a","size":1,"partitionValues":{"p":1}}}`, "not a Delta action", ErrMalformed},
		{"dv storage type", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"x","pathOrInlineDv":"ab","sizeInBytes":1,"cardinality":1}}}`, "storageType", ErrMalformed},
		{"dv inline offset", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"i","pathOrInlineDv":"ab","offset":1,"sizeInBytes":1,"cardinality":1}}}`, "inline", ErrMalformed},
		{"dv no payload", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"u","sizeInBytes":1,"cardinality":1}}}`, "pathOrInlineDv", ErrMalformed},
		{"dv negative", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab","sizeInBytes":1,"cardinality":-1}}}`, "negative", ErrMalformed},
		{"dv offset overflows", `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab","offset":4294967296,"sizeInBytes":1,"cardinality":1}}}`, "not a Delta action", ErrMalformed},
		{"remove without path", `{"remove":{"deletionTimestamp":1}}`, "without a path", ErrMalformed},
		{"metaData without id", `{"metaData":{"schemaString":"{}","partitionColumns":[]}}`, "without id", ErrMalformed},
		{"metaData without schema", `{"metaData":{"id":"x","partitionColumns":[]}}`, "without schemaString", ErrMalformed},
		{"metaData repeated partition column", `{"metaData":{"id":"x","schemaString":"{}","partitionColumns":["a","a"]}}`, "repeated", ErrMalformed},
		{"protocol zero", `{"protocol":{"minReaderVersion":0,"minWriterVersion":2}}`, "at least 1", ErrMalformed},
		{"protocol not int", `{"protocol":{"minReaderVersion":1.5,"minWriterVersion":2}}`, "not a Delta action", ErrMalformed},
		{"txn without appId", `{"txn":{"version":1}}`, "appId", ErrMalformed},
		{"domain without name", `{"domainMetadata":{"configuration":"{}"}}`, "domain", ErrMalformed},
		{"ict not a long", `{"commitInfo":{"inCommitTimestamp":"yesterday"}}`, "inCommitTimestamp", ErrMalformed},
		{"sidecar in a commit", `{"sidecar":{"path":"a.parquet","sizeInBytes":1}}`, "V2 checkpoint action", ErrMalformed},
		{"checkpointMetadata in a commit", `{"checkpointMetadata":{"version":1}}`, "V2 checkpoint action", ErrMalformed},
		{"line too long", `{"add":{"path":"` + strings.Repeat("a", 200) + `","size":1}}`, "over the limit", ErrLimit},
	}
	lim := Limits{MaxLineBytes: 150}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := okAdd + "\n\n" + c.line + "\n" + okAdd + "\n"
			_, err := ParseCommit("_delta_log/00000000000000000007.json", []byte(data), lim)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.kind)
			assert.Contains(t, err.Error(), "_delta_log/00000000000000000007.json:3:")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestParseCommitLimits(t *testing.T) {
	data := []byte(okAdd + "\n" + okAdd + "\n" + okAdd + "\n")
	_, err := ParseCommit("c.json", data, Limits{MaxActions: 2})
	assert.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "c.json:3:")
	_, err = ParseCommit("c.json", data, Limits{MaxCommitBytes: 10})
	assert.ErrorIs(t, err, ErrLimit)
	as, err := ParseCommit("c.json", data, Limits{})
	require.NoError(t, err)
	assert.Len(t, as, 3)
}

// What the protocol lets a reader ignore is ignored: unknown actions and
// fields, blank lines, CRLF endings, a commitInfo of any shape.
func TestParseCommitTolerates(t *testing.T) {
	data := "\r\n" + `{"futureAction":{"x":1}}` + "\r\n" +
		`{"commitInfo":{"timestamp":"later","operation":7,"deep":{"a":[1,{"b":null}]}}}` + "\r\n" +
		`{"add":{"path":"a%20b.parquet","size":1,"partitionValues":{"p":""},"newField":[1,2]}}` + "\r\n" +
		`{"add":null}` + "\n" + `{}`
	as, err := ParseCommit("c.json", []byte(data), Limits{})
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.NotNil(t, as[0].CommitInfo)
	assert.Nil(t, as[0].CommitInfo.Timestamp)
	assert.Nil(t, as[1].Add.PartitionValues["p"], `"" is a null partition value`)
}

func TestResolvePath(t *testing.T) {
	cases := []struct{ root, path, want string }{
		{"s3://b/t", "p=a%20b/x.parquet", "s3://b/t/p=a b/x.parquet"},
		{"s3://b/t/", "x%3Ay.parquet", "s3://b/t/x:y.parquet"},
		{"s3://b/t", "s3://other/dir/x%25.parquet", "s3://other/dir/x%.parquet"},
		{"/tmp/t", "file:///tmp/t/x.parquet", "/tmp/t/x.parquet"},
		{"/tmp/t", "file:/tmp/t/x.parquet", "/tmp/t/x.parquet"},
		{"file:///tmp/t", "file:/tmp/t/x.parquet", "file:///tmp/t/x.parquet"},
		{"/tmp/t", "/abs/x.parquet", "/abs/x.parquet"},
	}
	for _, c := range cases {
		got, err := ResolvePath(c.root, c.path)
		require.NoError(t, err, c.path)
		assert.Equal(t, c.want, got, c.path)
	}
	for _, bad := range []string{"", "a/../../x", "a#b", "%", "s3:x"} {
		_, err := ResolvePath("s3://b/t", bad)
		assert.Error(t, err, bad)
	}
}
