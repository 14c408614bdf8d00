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
	file, err := localPath(filePath)
	if err != nil {
		return "", err
	}
	table, err := localPath(tableLocation)
	if err != nil {
		return "", err
	}
	if !within(table, file) {
		return "", fmt.Errorf("fileurl: data file %q is not inside table location %q", filePath, tableLocation)
	}
	payload, err := json.Marshal(localClaim{File: file, Table: table})
	if err != nil {
		return "", err
	}
	token := l.Sealer.Seal(PurposeLocalFile, payload, expires)
	return strings.TrimRight(l.BaseURL, "/") + "/" + token + "?" + readMarker, nil
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

// within reports whether child is strictly below dir; both must be clean
// absolute paths. The table directory itself is not a servable file.
func within(dir, child string) bool {
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
