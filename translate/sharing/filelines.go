package sharing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/storage"
	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/fileurl"
)

// fileWriter writes the file lines of a run of data files, keeping from
// one file to the next what they share: the URL issuers (a presigner, or
// a batch of lakegate's own signed URLs), the line encoder, the specs
// looked up. An answer has one, which also holds the answer's other
// lines; a long listing is shared among several (see fileLines). A
// fileWriter is used by one goroutine at a time.
type fileWriter struct {
	rs        *response
	presigner *fileurl.S3Presigner
	localURLs *fileurl.LocalBatch
	enc       actions.Encoder
	specByID  map[int]iceberg.PartitionSpec
	lines     []byte
	files     int
	bytes     int64 // the listed files' sizes, for the operator's metrics
}

// parallelFiles is the fewest files a goroutine of fileLines takes on:
// below twice this, the answer's own goroutine writes every line.
const parallelFiles = 256

// fileLines appends the query endpoint's file line of every task, in
// order. The per-file work (a fresh URL, the stats and partition values)
// is most of a long answer's, so a long listing is cut into runs written
// at once by up to GOMAXPROCS goroutines, each with its own fileWriter,
// and joined in order. The first failing file in listing order decides
// the error, as when one goroutine writes them all.
func (rs *response) fileLines(ctx context.Context, tasks []table.FileScanTask, sch *iceberg.Schema, v version, withVersion bool) error {
	n := min(runtime.GOMAXPROCS(0), len(tasks)/parallelFiles)
	if n <= 1 {
		return rs.fileWriter.queryLines(ctx, tasks, sch, v, withVersion, len(tasks))
	}
	per := (len(tasks) + n - 1) / n
	runs := make([]fileWriter, n)
	errs := make([]error, n)
	panics := make([]any, n)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		runs[i] = fileWriter{rs: rs, lines: pooledLines()}
		run := tasks[i*per : min((i+1)*per, len(tasks))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			errs[i] = runs[i].queryLines(ctx, run, sch, v, withVersion, len(run))
		}()
	}
	// The first run lands in the answer's buffer, sized for all of them.
	errs[0] = rs.fileWriter.queryLines(ctx, tasks[:per], sch, v, withVersion, len(tasks))
	wg.Wait()
	defer func() {
		for i := 1; i < n; i++ {
			runs[i].release()
		}
	}()
	for _, p := range panics {
		if p != nil {
			panic(p) // on the handler's goroutine, as without the runs
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := 1; i < n; i++ {
		rs.lines = append(rs.lines, runs[i].lines...)
		rs.files += runs[i].files
		rs.bytes += runs[i].bytes
	}
	return nil
}

// queryLines appends the file line of every task; after the first line,
// the buffer grows for reserve lines of its size.
func (w *fileWriter) queryLines(ctx context.Context, tasks []table.FileScanTask, sch *iceberg.Schema, v version, withVersion bool, reserve int) error {
	line := func(e *actions.Encoder, dst []byte, f actions.Format, file actions.File) ([]byte, error) {
		return e.AppendFileLine(dst, f, file, withVersion)
	}
	for i, t := range tasks {
		f, err := w.file(ctx, t.File, sch, v)
		if err != nil {
			return err
		}
		start := len(w.lines)
		if err := w.fileLine(line, f); err != nil {
			return err
		}
		if i == 0 {
			w.growFor(reserve-1, start)
		}
	}
	return nil
}

// fileLine appends a file line that line (an Encoder method) writes.
func (w *fileWriter) fileLine(line func(*actions.Encoder, []byte, actions.Format, actions.File) ([]byte, error), f actions.File) error {
	var err error
	if w.lines, err = line(&w.enc, w.lines, w.rs.format, f); err != nil {
		return Errorf(http.StatusInternalServerError, CodeInternal, "%v", err)
	}
	w.lines = append(w.lines, '\n')
	return nil
}

// growFor makes room for n more lines like the last one written, once
// the first of many file lines shows their size: a 1,000-file answer
// grows its buffer once rather than doubling it a dozen times.
func (w *fileWriter) growFor(n, lineStart int) {
	if n > 0 {
		size := len(w.lines) - lineStart
		w.lines = slices.Grow(w.lines, n*(size+size/8))
	}
}

// linesPool recycles the buffers answers are built in (a 1,000-file
// answer is most of a megabyte), up to maxPooledLines each.
var linesPool sync.Pool // of *[]byte

const maxPooledLines = 16 << 20

func pooledLines() []byte {
	if b, ok := linesPool.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// release hands the buffer back once the answer is written (a Writer
// never keeps what it was given) or abandoned.
func (w *fileWriter) release() {
	if c := cap(w.lines); c > 0 && c <= maxPooledLines {
		b := w.lines[:0]
		linesPool.Put(&b)
	}
	w.lines = nil
}

// file describes one data file with a fresh URL.
func (w *fileWriter) file(ctx context.Context, df iceberg.DataFile, sch *iceberg.Schema, v version) (actions.File, error) {
	rs := w.rs
	u, err := w.fileURL(ctx, df.FilePath())
	if err != nil {
		// The file's name, not its location: a local one is a server path.
		return actions.File{}, Errorf(http.StatusInternalServerError, CodeInternal, "cannot hand out a URL for file %s of table %q: %v",
			path.Base(df.FilePath()), rs.l.target.Table, err)
	}
	w.files++
	w.bytes += df.FileSizeBytes()
	return actions.File{URL: u, Data: df, Spec: w.specOf(df), Schema: sch, Version: v.V, Timestamp: v.Ts,
		Expiration: rs.exp.UnixMilli()}, nil
}

// specOf is the spec a file's partition values are read with: the one it
// was written with (the table's metadata holds every spec), or none when
// the answer declares no partition columns. Each spec is looked up once
// (the metadata hands out copies).
func (w *fileWriter) specOf(df iceberg.DataFile) iceberg.PartitionSpec {
	if !w.rs.partitioned {
		return *iceberg.UnpartitionedSpec
	}
	id := int(df.SpecID())
	if spec, ok := w.specByID[id]; ok {
		return spec
	}
	spec := *iceberg.UnpartitionedSpec
	if s := w.rs.l.tbl.Metadata().PartitionSpecByID(id); s != nil {
		spec = *s
	}
	if w.specByID == nil {
		w.specByID = map[int]iceberg.PartitionSpec{}
	}
	w.specByID[id] = spec
	return spec
}

// fileURL is the URL a recipient downloads a file at: a presigned S3 URL
// (one presigner per fileWriter, built on first use), or for a
// local-filesystem warehouse lakegate's own signed URL. The location is
// handed on as the manifest spells it: what it names is the issuer's to
// read (an object key, a local path), never decoded here.
func (w *fileWriter) fileURL(ctx context.Context, path string) (string, error) {
	rs := w.rs
	var err error
	switch scheme := schemeOf(path); scheme {
	case "", "file":
		if w.localURLs == nil {
			local := fileurl.Local{Sealer: rs.s.Sealer, BaseURL: rs.req.FilesBase}
			w.localURLs = local.Batch(rs.l.tbl.Location(), rs.exp)
		}
		return w.localURLs.URL(path)
	case "s3", "s3a", "s3n":
		if rs.l.places != nil {
			// Refused without the location: the recipient sees the message.
			if storage.Within(rs.l.places, path) != nil {
				return "", errors.New("it is not a plain key inside the table's locations")
			}
		}
		if w.presigner == nil {
			if w.presigner, err = fileurl.NewS3Presigner(rs.l.props); err != nil {
				return "", err
			}
		}
		return w.presigner.Presign(ctx, path, rs.s.lifetime())
	default:
		return "", fmt.Errorf("lakegate cannot hand out URLs for %s:// storage", scheme)
	}
}

// schemeOf is a location's URI scheme, lower case ("" for a path): the
// letters before its first ':', as RFC 3986 spells schemes. Nothing else
// of the location is parsed, so no part of a file name can fail it.
func schemeOf(loc string) string {
	i := strings.IndexByte(loc, ':')
	if i <= 0 {
		return ""
	}
	for j, c := range []byte(loc[:i]) {
		isAlpha := c|0x20 >= 'a' && c|0x20 <= 'z'
		if !isAlpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(loc[:i])
}
