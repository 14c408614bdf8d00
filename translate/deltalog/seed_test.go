package deltalog

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWriteFuzzCheckpointSeeds rewrites the parquet seeds of
// FuzzParquetCheckpoint (testdata/fuzz/checkpoints) when
// DELTALOG_WRITE_SEEDS=1: checkpoints of the test logs, as this package's
// test writer makes them, so the fuzzer starts from valid files.
func TestWriteFuzzCheckpointSeeds(t *testing.T) {
	if os.Getenv("DELTALOG_WRITE_SEEDS") != "1" {
		t.Skip("set DELTALOG_WRITE_SEEDS=1 to rewrite the seeds")
	}
	out := filepath.Join("testdata", "fuzz", "checkpoints")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, log := range []string{"basic", "dv"} {
		root := copyLog(t, log)
		s := latest(t, root)
		head, files := v2Parts(s)
		writeClassic(t, root, s)
		writeParquet(t, root, "v2.parquet", checkpointSchema(true), append(head, files...))
		for src, dst := range map[string]string{pad20(s.Version) + ".checkpoint.parquet": log + "-classic.parquet", "v2.parquet": log + "-v2.parquet"} {
			raw, err := os.ReadFile(filepath.Join(root, "_delta_log", src))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, dst), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWriteFuzzCommitSeeds writes testdata/fuzz/FuzzParseCommit in the Go
// corpus format when DELTALOG_WRITE_SEEDS=1: the edge cases of the parser
// tests, so the fuzzer starts at the boundaries.
func TestWriteFuzzCommitSeeds(t *testing.T) {
	if os.Getenv("DELTALOG_WRITE_SEEDS") != "1" {
		t.Skip("set DELTALOG_WRITE_SEEDS=1 to rewrite the seeds")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParseCommit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := map[string]string{
		"two-actions":     `{"add":{"path":"a","size":1},"remove":{"path":"a"}}`,
		"dv-inline":       `{"add":{"path":"a","size":1,"deletionVector":{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":40,"cardinality":6}}}`,
		"dv-offset":       `{"remove":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}}}`,
		"escaped-path":    `{"add":{"path":"p=a%20b%2Fc%3Ad/part-0.parquet","partitionValues":{"p":"a b/c:d"},"size":1}}`,
		"absolute-path":   `{"add":{"path":"s3://other/x%25.parquet","partitionValues":{},"size":1}}`,
		"climbing-path":   `{"add":{"path":"a/../../x","size":1}}`,
		"null-partition":  `{"add":{"path":"a","partitionValues":{"p":null,"q":""},"size":1}}`,
		"metadata":        `{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["a"],"configuration":{"k":"v"}}}`,
		"protocol-v3":     `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}}`,
		"commitinfo":      `{"commitInfo":{"inCommitTimestamp":1710000000000,"timestamp":"x","operation":{"odd":1}}}`,
		"sidecar":         `{"sidecar":{"path":"a.parquet","sizeInBytes":1,"modificationTime":1}}`,
		"txn-domain":      "{\"txn\":{\"appId\":\"a\",\"version\":1}}\r\n{\"domainMetadata\":{\"domain\":\"d\",\"configuration\":\"{}\",\"removed\":true}}",
		"invalid-utf8":    "{\"add\":{\"path\":\"a\xff\",\"size\":1}}",
		"not-object":      "[]\nnull\n42",
		"huge-number":     `{"add":{"path":"a","size":1e400}}`,
		"deep-commitinfo": `{"commitInfo":{"a":[[[[[[[[[[{"b":[[[[[[]]]]]]}]]]]]]]]]]}}`,
	}
	for name, s := range seeds {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(s) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
