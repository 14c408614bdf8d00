package fileurl

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakegate/lakegate/internal/jsonenc"
)

// PurposeLocalFile is the Sealer purpose for Local file tokens.
const PurposeLocalFile = "lakegate/fileurl/local-file"

// Local issues and serves URLs for data files of tables stored on the
// local file system, where there is no object store to presign against.
//
// Confidentiality: the token is encrypted and authenticated (Sealer), so
// a recipient cannot read the server's file and table paths from it, and
// serving re-checks containment.
type Local struct {
	Sealer *Sealer
	// BaseURL is the public prefix the handler is mounted under, e.g.
	// https://host/delta-sharing/files; URLs are BaseURL + "/" + token.
	BaseURL string
}

// localClaim is the sealed payload. Short JSON keys keep URLs compact.
type localClaim struct {
	File  string `json:"f"`
	Table string `json:"t"`
}

// URL returns a URL serving filePath until expires. filePath and
// tableLocation are file: URIs or absolute paths (see LocalPath); the file
// must lie strictly inside the table location, checked here to fail early
// and again on every request.
func (l *Local) URL(filePath, tableLocation string, expires time.Time) (string, error) {
	return l.Batch(tableLocation, expires).URL(filePath)
}

// Batch issues the URLs of many files of one table that all expire at
// the same time: the URLs URL would return, with the table location
// parsed once and the sealing state (see Sealer) reused from one URL to
// the next. A LocalBatch is not safe for concurrent use.
func (l *Local) Batch(tableLocation string, expires time.Time) *LocalBatch {
	b := &LocalBatch{sealer: l.Sealer, expires: expires,
		prefix: strings.TrimRight(l.BaseURL, "/") + "/"}
	// A bad location is reported with the first file, after the file's
	// own problems, as URL reports it.
	if b.table, b.tableErr = LocalPath(tableLocation); b.tableErr == nil {
		b.claimTail = append(jsonenc.AppendString([]byte(`,"t":`), b.table), '}')
	}
	return b
}

// LocalBatch issues Local URLs for the files of one table (Local.Batch).
type LocalBatch struct {
	sealer     *Sealer
	expires    time.Time
	prefix     string // BaseURL + "/"
	table      string
	tableErr   error
	claimTail  []byte // the claim's table, encoded once
	seal       *sealing
	claim, buf []byte
}

// URL returns a URL serving filePath, as Local.URL does.
func (b *LocalBatch) URL(filePath string) (string, error) {
	var err error
	if b.buf, err = b.AppendURL(b.buf[:0], filePath); err != nil {
		return "", err
	}
	return string(b.buf), nil
}

// AppendURL appends the URL of filePath to dst (dst as given on error).
func (b *LocalBatch) AppendURL(dst []byte, filePath string) ([]byte, error) {
	file, err := LocalPath(filePath)
	if err != nil {
		return dst, err
	}
	if b.tableErr != nil {
		return dst, b.tableErr
	}
	if !within(b.table, file) {
		return dst, errOutside
	}
	// The localClaim as encoding/json writes it: {"f":file,"t":table}.
	b.claim = jsonenc.AppendString(append(b.claim[:0], `{"f":`...), file)
	b.claim = append(b.claim, b.claimTail...)
	if b.seal == nil {
		b.seal = b.sealer.sealing(PurposeLocalFile, b.expires)
	}
	dst = append(dst, b.prefix...)
	dst = b.seal.appendToken(dst, b.claim)
	return append(append(dst, '?'), readMarker...), nil
}

// readMarker ends every URL: Azure SAS's "signed permissions: read". The
// token in the path is all lakegate reads; the marker is there because
// delta-kernel (behind the Delta Sharing connectors' delta format) fetches
// an http(s) URL over HTTP only when its query names a presigned-URL key,
// and reads any other URL as a local path.
const readMarker = "sp=r"

// Errors of URL for locations that cannot be served. They never name the
// location: a local one is a server path, and errors reach recipients.
var (
	errNotLocal    = errors.New("fileurl: the location is not a local file path")
	errRemoteHost  = errors.New("fileurl: the file URI names a remote host")
	errQueryInURI  = errors.New("fileurl: the file URI has a query or fragment")
	errNotAbsolute = errors.New("fileurl: the location is not an absolute path")
	errOutside     = errors.New("fileurl: the data file is not inside the table location")
)

// LocalPath is the local file a location names: an absolute path, or a
// file: URI (file:///p, file://localhost/p, file:/p) whose path is taken
// literally, cleaned. Nothing is percent-decoded: Iceberg writers (Java's
// Hadoop Path, PyIceberg) create a data file at exactly the path its
// location spells, so a partition value "us/east 1" is the directory
// region=us%2Feast+1 on disk, and decoding would open another file. A file
// URI with a query or fragment is refused (writers disagree on whether
// they are part of the name), as are relative paths, which would resolve
// against the server's working directory, and other schemes.
func LocalPath(loc string) (string, error) {
	p := loc
	if len(loc) >= 5 && strings.EqualFold(loc[:5], "file:") {
		var err error
		if p, err = fileURIPath(loc[5:]); err != nil {
			return "", err
		}
	} else if strings.Contains(loc, "://") {
		return "", errNotLocal
	}
	if !strings.HasPrefix(p, "/") {
		return "", errNotAbsolute
	}
	return filepath.Clean(p), nil
}

// fileURIPath is the path of a file: URI (what follows "file:"): after an
// empty or localhost authority, or the whole rest when it has none.
func fileURIPath(rest string) (string, error) {
	if strings.ContainsAny(rest, "?#") {
		return "", errQueryInURI
	}
	if !strings.HasPrefix(rest, "//") {
		return rest, nil
	}
	host, path, found := strings.Cut(rest[2:], "/")
	if host != "" && !strings.EqualFold(host, "localhost") {
		return "", errRemoteHost
	}
	if !found {
		return "", errNotAbsolute
	}
	return "/" + path, nil
}

// within reports whether child is strictly below dir; both must be clean
// absolute paths. The table directory itself is not a servable file.
func within(dir, child string) bool {
	if len(child) > len(dir)+1 && child[len(dir)] == '/' && strings.HasPrefix(child, dir) && dir != "/" {
		// A clean path below dir: what Rel would find, without building it.
		return true
	}
	rel, err := filepath.Rel(dir, child)
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ServeHTTP serves GET and HEAD for {BaseURL path}/{token}. Errors use the
// Delta Sharing JSON error model and never echo the file path.
func (l *Local) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "only GET and HEAD are supported")
		return
	}
	claim, status, msg := l.claim(r)
	if status != 0 {
		writeError(w, status, errorCodeFor(status), msg)
		return
	}
	f, info, status, msg := openContained(claim)
	if status != 0 {
		writeError(w, status, errorCodeFor(status), msg)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream") // also stops ServeContent sniffing
	h.Set("X-Content-Type-Options", "nosniff")
	// The URL is a bearer capability; keep it out of shared caches.
	h.Set("Cache-Control", "private")
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// claim extracts and verifies the token (the last path segment, so the
// handler works whether or not a router strips the mount prefix).
func (l *Local) claim(r *http.Request) (c localClaim, status int, msg string) {
	p := r.URL.Path
	token := p[strings.LastIndexByte(p, '/')+1:]
	payload, err := l.Sealer.Open(PurposeLocalFile, token, time.Now())
	switch {
	case errors.Is(err, ErrExpired):
		return c, http.StatusForbidden, "file URL has expired; query the table again for a fresh URL"
	case err != nil:
		return c, http.StatusForbidden, "invalid file URL"
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		// Only we can seal, so this means a key shared with something else.
		return c, http.StatusForbidden, "invalid file URL"
	}
	return c, 0, ""
}

// openContained re-validates the sealed paths and opens the file. Lexical
// checks catch `..`; EvalSymlinks catches links leading out of the table;
// opening through os.Root closes the race where a link is swapped in between
// the check and the open.
func openContained(c localClaim) (f *os.File, info fs.FileInfo, status int, msg string) {
	const denied = "file is outside the shared table"
	table, file := filepath.Clean(c.Table), filepath.Clean(c.File)
	if !filepath.IsAbs(table) || !within(table, file) {
		return nil, nil, http.StatusForbidden, denied
	}
	realTable, err := filepath.EvalSymlinks(table)
	if err != nil {
		return nil, nil, http.StatusNotFound, "table location does not exist"
	}
	realFile, err := filepath.EvalSymlinks(file)
	if err != nil {
		status, msg := fileError(err)
		return nil, nil, status, msg
	}
	if !within(realTable, realFile) {
		return nil, nil, http.StatusForbidden, denied
	}
	return openInRoot(realTable, realFile)
}

// openInRoot opens file relative to an os.Root on table, which refuses any
// path or symlink that escapes it, and insists on a regular file.
func openInRoot(table, file string) (*os.File, fs.FileInfo, int, string) {
	root, err := os.OpenRoot(table)
	if err != nil {
		return nil, nil, http.StatusNotFound, "table location does not exist"
	}
	defer root.Close() // an open *os.File outlives its Root
	rel, err := filepath.Rel(table, file)
	if err != nil {
		return nil, nil, http.StatusForbidden, "file is outside the shared table"
	}
	// Stat before Open: opening a FIFO or device could block or have side
	// effects, so only regular files are ever opened.
	if info, err := root.Stat(rel); err != nil || !info.Mode().IsRegular() {
		return nil, nil, http.StatusNotFound, "data file does not exist"
	}
	f, err := root.Open(rel)
	if err != nil {
		status, msg := fileError(err)
		return nil, nil, status, msg
	}
	info, err := f.Stat() // re-check what was actually opened
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, http.StatusNotFound, "data file does not exist"
	}
	return f, info, 0, ""
}

// fileError maps a missing file to 404 and anything else (escape attempts,
// permissions, invalid names) to 403.
func fileError(err error) (int, string) {
	if errors.Is(err, fs.ErrNotExist) {
		return http.StatusNotFound, "data file does not exist"
	}
	return http.StatusForbidden, "data file is not accessible"
}

// errorCodeFor maps an HTTP status to the Delta Sharing errorCode.
func errorCodeFor(status int) string {
	switch status {
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "RESOURCE_DOES_NOT_EXIST"
	default:
		return "INTERNAL_ERROR"
	}
}

// writeError emits the Delta Sharing error body {"errorCode","message"}.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	}{code, msg})
}
