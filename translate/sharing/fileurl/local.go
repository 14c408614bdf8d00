package fileurl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
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
// tableLocation are file:// URIs or absolute paths; the file must lie
// strictly inside the table location, checked here to fail early and again
// on every request.
func (l *Local) URL(filePath, tableLocation string, expires time.Time) (string, error) {
	return l.Batch(tableLocation, expires).URL(filePath)
}

// Batch issues the URLs of many files of one table that all expire at
// the same time: the URLs URL would return, with the table location
// parsed once and the sealing state (see Sealer) reused from one URL to
// the next. A LocalBatch is not safe for concurrent use.
func (l *Local) Batch(tableLocation string, expires time.Time) *LocalBatch {
	b := &LocalBatch{sealer: l.Sealer, expires: expires, tableLocation: tableLocation,
		prefix: strings.TrimRight(l.BaseURL, "/") + "/"}
	// A bad location is reported with the first file, after the file's
	// own problems, as URL reports it.
	if b.table, b.tableErr = localPath(tableLocation); b.tableErr == nil {
		b.claimTail = append(jsonenc.AppendString([]byte(`,"t":`), b.table), '}')
	}
	return b
}

// LocalBatch issues Local URLs for the files of one table (Local.Batch).
type LocalBatch struct {
	sealer        *Sealer
	expires       time.Time
	tableLocation string
	prefix        string // BaseURL + "/"
	table         string
	tableErr      error
	claimTail     []byte // the claim's table, encoded once
	seal          *sealing
	claim, buf    []byte
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
	file, err := localPath(filePath)
	if err != nil {
		return dst, err
	}
	if b.tableErr != nil {
		return dst, b.tableErr
	}
	if !within(b.table, file) {
		return dst, fmt.Errorf("fileurl: data file %q is not inside table location %q", filePath, b.tableLocation)
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

// localPath turns a file:// URI or absolute path into a cleaned absolute
// path. Relative paths are refused: they would resolve against whatever the
// server's working directory happens to be.
func localPath(s string) (string, error) {
	if p, ok := plainLocalPath(s); ok {
		return p, nil
	}
	p := s
	if len(s) >= 5 && strings.EqualFold(s[:5], "file:") {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("fileurl: bad file URI %q: %w", s, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("fileurl: file URI %q names remote host %q", s, u.Host)
		}
		p = u.Path
	} else if strings.Contains(s, "://") {
		return "", fmt.Errorf("fileurl: %q is not a local file path", s)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("fileurl: %q is not an absolute path", s)
	}
	return filepath.Clean(p), nil
}

// plainLocalPath is localPath(s) for the spellings of local data files
// that need no URL parsing: an absolute path, or a file: URI with an empty
// or localhost authority, holding nothing url.Parse would unescape, split
// off or refuse (no '%', '?', '#' or control bytes). ok is false for
// anything else, which localPath parses in full.
func plainLocalPath(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '%' || c == '?' || c == '#' {
			return "", false
		}
	}
	p := s
	if len(s) >= 5 && strings.EqualFold(s[:5], "file:") {
		switch rest := s[5:]; {
		case strings.HasPrefix(rest, "///"):
			p = rest[2:]
		case strings.HasPrefix(rest, "//localhost/"):
			p = rest[len("//localhost"):]
		case strings.HasPrefix(rest, "//") || !strings.HasPrefix(rest, "/"):
			return "", false
		default:
			p = rest
		}
	} else if strings.Contains(s, "://") || !strings.HasPrefix(s, "/") {
		return "", false
	}
	return filepath.Clean(p), true
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
