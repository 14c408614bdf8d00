package deltalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	iceio "github.com/apache/iceberg-go/io"
)

// Commit files are untrusted bytes: parsing never panics, every refusal is
// an *Error of a known kind naming the file, and every accepted action is
// one action that passes its own checks again.
func FuzzParseCommit(f *testing.F) {
	for _, log := range []string{"basic", "dv"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "logs", log, "_delta_log", "*.json"))
		for _, p := range files {
			raw, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Add([]byte(okAdd + "\n" + `{"remove":{"path":"a%20b","deletionVector":{"storageType":"i","pathOrInlineDv":"x","sizeInBytes":1,"cardinality":1}}}`))
	lim := Limits{MaxCommitBytes: 1 << 20, MaxLineBytes: 64 << 10, MaxActions: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := ParseCommit("c.json", data, lim)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "c.json" || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrLimit)) {
				t.Fatalf("refusal is not a deltalog error naming the file: %v", err)
			}
			return
		}
		for i := range as {
			if count(&as[i]) != 1 || validate(&as[i]) != nil {
				t.Fatalf("accepted an action its own checks refuse: %+v", as[i])
			}
			if f := as[i].Add; f != nil {
				if _, err := ResolvePath("s3://b/t", f.Path); err != nil {
					t.Fatalf("accepted add path %q that does not resolve: %v", f.Path, err)
				}
			}
		}
	})
}

// Checkpoint parquet files are untrusted too: arrow-go's decoding of a
// corrupt file must come back as an error, never a panic or a hang. The
// seeds are ~10 KB, which the fuzzer spends its default minute minimizing
// at every new input: run it with -fuzzminimizetime 100x.
func FuzzParquetCheckpoint(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "checkpoints", "*.parquet"))
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := &Log{Location: "t", IO: iceio.FS(fstest.MapFS{"t/_delta_log/c.parquet": {Data: data}})}
		lim := Limits{MaxCheckpointBytes: 1 << 20, MaxActions: 10_000}.withDefaults()
		err := l.readParquet(context.Background(), "_delta_log/c.parquet", lim, func(string, int, *Action) error { return nil })
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("refusal is not a deltalog error: %v", err)
		}
	})
}
