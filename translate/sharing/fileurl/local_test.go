package fileurl

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixture lays out:
//
//	root/tbl/data/part-0.parquet   the shared data file
//	root/tbl/data/sub/             a directory
//	root/tbl/data/pipe             a FIFO (opening it would block)
//	root/tbl/data/inner.parquet -> part-0.parquet (stays inside)
//	root/tbl/data/evil.parquet  -> ../../outside.parquet (escapes)
//	root/outside.parquet           not part of the table
//	root/tbl-evil/x.parquet        shares the table's name as a prefix
type fixture struct {
	root, table, file string
	content           []byte
	local             *Local
	srv               *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{root: root, table: filepath.Join(root, "tbl")}
	fx.file = filepath.Join(fx.table, "data", "part-0.parquet")
	fx.content = make([]byte, 1000)
	for i := range fx.content {
		fx.content[i] = byte(i * 7)
	}
	mustMkdir(t, filepath.Join(fx.table, "data", "sub"))
	mustMkdir(t, filepath.Join(root, "tbl-evil"))
	mustWrite(t, fx.file, fx.content)
	mustWrite(t, filepath.Join(root, "outside.parquet"), []byte("secret"))
	mustWrite(t, filepath.Join(root, "tbl-evil", "x.parquet"), []byte("secret"))
	// Without FIFO support the "fifo" case degrades to a missing file (404).
	_ = mkfifo(filepath.Join(fx.table, "data", "pipe"))
	mustSymlink(t, "part-0.parquet", filepath.Join(fx.table, "data", "inner.parquet"))
	mustSymlink(t, "../../outside.parquet", filepath.Join(fx.table, "data", "evil.parquet"))

	fx.local = &Local{Sealer: mustSealer(t, testKey)}
	mux := http.NewServeMux()
	mux.Handle("/delta-sharing/files/", fx.local)
	fx.srv = httptest.NewServer(mux)
	t.Cleanup(fx.srv.Close)
	fx.local.BaseURL = fx.srv.URL + "/delta-sharing/files/"
	return fx
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// url issues a URL through the public API.
func (fx *fixture) url(t *testing.T, file string, expires time.Time) string {
	t.Helper()
	u, err := fx.local.URL(file, fx.table, expires)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// forged seals an arbitrary claim, bypassing URL's own checks, to prove
// the handler re-validates rather than trusting what was sealed.
func (fx *fixture) forged(t *testing.T, file, table string) string {
	t.Helper()
	payload, _ := json.Marshal(localClaim{File: file, Table: table})
	return fx.local.BaseURL + fx.local.Sealer.Seal(PurposeLocalFile, payload, time.Now().Add(time.Hour))
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url string, hdr map[string]string) result {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header, body}
}

func TestLocalServeGet(t *testing.T) {
	fx := newFixture(t)
	r := do(t, http.MethodGet, fx.url(t, fx.file, time.Now().Add(time.Hour)), nil)
	if r.status != http.StatusOK || string(r.body) != string(fx.content) {
		t.Fatalf("GET = %d, %d bytes", r.status, len(r.body))
	}
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if r.header.Get("Last-Modified") == "" || r.header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("missing Last-Modified/Accept-Ranges: %v", r.header)
	}
}

func TestLocalServeRange(t *testing.T) {
	fx := newFixture(t)
	r := do(t, http.MethodGet, fx.url(t, fx.file, time.Now().Add(time.Hour)), map[string]string{"Range": "bytes=100-199"})
	if r.status != http.StatusPartialContent {
		t.Fatalf("status = %d, want 206", r.status)
	}
	if string(r.body) != string(fx.content[100:200]) {
		t.Fatalf("range body mismatch (%d bytes)", len(r.body))
	}
	if cr := r.header.Get("Content-Range"); cr != "bytes 100-199/1000" {
		t.Errorf("Content-Range = %q", cr)
	}
	// Parquet readers fetch the footer with a suffix range.
	r = do(t, http.MethodGet, fx.url(t, fx.file, time.Now().Add(time.Hour)), map[string]string{"Range": "bytes=-8"})
	if r.status != http.StatusPartialContent || string(r.body) != string(fx.content[992:]) {
		t.Fatalf("suffix range = %d, %v", r.status, r.body)
	}
}

func TestLocalServeHead(t *testing.T) {
	fx := newFixture(t)
	r := do(t, http.MethodHead, fx.url(t, fx.file, time.Now().Add(time.Hour)), nil)
	if r.status != http.StatusOK || len(r.body) != 0 {
		t.Fatalf("HEAD = %d with %d body bytes", r.status, len(r.body))
	}
	if cl := r.header.Get("Content-Length"); cl != "1000" {
		t.Errorf("Content-Length = %q", cl)
	}
}

func TestLocalServeErrors(t *testing.T) {
	fx := newFixture(t)
	later := time.Now().Add(time.Hour)
	good := fx.url(t, fx.file, later)
	cases := []struct {
		name     string
		method   string
		url      string
		status   int
		code     string
		contains string
	}{
		{"tampered token", "GET", tampered(good), 403, "PERMISSION_DENIED", "invalid"},
		{"garbage token", "GET", fx.local.BaseURL + "not-a-token", 403, "PERMISSION_DENIED", "invalid"},
		{"no token", "GET", fx.local.BaseURL, 403, "PERMISSION_DENIED", "invalid"},
		{"expired", "GET", fx.url(t, fx.file, time.Now().Add(-time.Second)), 403, "PERMISSION_DENIED", "expired"},
		{"dot-dot escape", "GET", fx.forged(t, fx.table+"/../outside.parquet", fx.table), 403, "PERMISSION_DENIED", "outside"},
		{"raw dot-dot escape", "GET", fx.forged(t, fx.table+"/data/../../outside.parquet", fx.table+"/data/.."), 403, "PERMISSION_DENIED", "outside"},
		{"sibling prefix", "GET", fx.forged(t, filepath.Join(fx.root, "tbl-evil", "x.parquet"), fx.table), 403, "PERMISSION_DENIED", "outside"},
		{"relative table", "GET", fx.forged(t, "tbl/data/part-0.parquet", "tbl"), 403, "PERMISSION_DENIED", "outside"},
		{"symlink escape", "GET", fx.url(t, filepath.Join(fx.table, "data", "evil.parquet"), later), 403, "PERMISSION_DENIED", "outside"},
		{"table dir itself", "GET", fx.forged(t, fx.table, fx.table), 403, "PERMISSION_DENIED", "outside"},
		{"directory", "GET", fx.url(t, filepath.Join(fx.table, "data", "sub"), later), 404, "RESOURCE_DOES_NOT_EXIST", "does not exist"},
		{"fifo", "GET", fx.url(t, filepath.Join(fx.table, "data", "pipe"), later), 404, "RESOURCE_DOES_NOT_EXIST", "does not exist"},
		{"missing file", "GET", fx.url(t, filepath.Join(fx.table, "data", "nope.parquet"), later), 404, "RESOURCE_DOES_NOT_EXIST", "does not exist"},
		{"missing table", "GET", fx.forged(t, fx.root+"/gone/a.parquet", fx.root+"/gone"), 404, "RESOURCE_DOES_NOT_EXIST", "does not exist"},
		{"POST", "POST", good, 405, "METHOD_NOT_ALLOWED", "GET"},
		{"PUT", "PUT", good, 405, "METHOD_NOT_ALLOWED", "GET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, c.method, c.url, nil)
			if r.status != c.status {
				t.Fatalf("status = %d, want %d (%s)", r.status, c.status, r.body)
			}
			var e struct{ ErrorCode, Message string }
			if err := json.Unmarshal(r.body, &e); err != nil {
				t.Fatalf("error body %q is not JSON: %v", r.body, err)
			}
			if e.ErrorCode != c.code || !strings.Contains(e.Message, c.contains) {
				t.Fatalf("error = %+v, want code %s containing %q", e, c.code, c.contains)
			}
			if strings.Contains(string(r.body), fx.root) {
				t.Fatalf("error leaks a server path: %s", r.body)
			}
			if c.status == 405 && r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", r.header.Get("Allow"))
			}
		})
	}
}

// flipChar swaps one base64url character for another valid one.
func flipChar(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestLocalServeInternalSymlink(t *testing.T) {
	fx := newFixture(t)
	r := do(t, http.MethodGet, fx.url(t, filepath.Join(fx.table, "data", "inner.parquet"), time.Now().Add(time.Hour)), nil)
	if r.status != http.StatusOK || string(r.body) != string(fx.content) {
		t.Fatalf("symlink inside the table: %d", r.status)
	}
}

func TestLocalURL(t *testing.T) {
	fx := newFixture(t)
	later := time.Now().Add(time.Hour)
	u, err := fx.local.URL("file://"+fx.file, "file://"+fx.table, later)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u, fx.srv.URL+"/delta-sharing/files/") || strings.Count(u, "//") != 1 {
		t.Fatalf("URL %q not under BaseURL", u)
	}
	if strings.Contains(u, "part-0") || strings.Contains(u, fx.root) {
		t.Fatalf("URL %q exposes the path in clear text", u)
	}
	if !strings.HasSuffix(u, "?sp=r") {
		t.Fatalf("URL %q lacks the read marker delta-kernel needs to fetch it over HTTP", u)
	}
	if r := do(t, "GET", u, nil); r.status != 200 {
		t.Fatalf("file:// URL GET = %d", r.status)
	}
	for _, pre := range []string{"file:", "file://localhost", "FILE://"} {
		if _, err := fx.local.URL(pre+fx.file, pre+fx.table, later); err != nil {
			t.Errorf("%s form rejected: %v", pre, err)
		}
	}
	bad := [][2]string{
		{"data/part-0.parquet", fx.table},
		{fx.file, "tbl"},
		{filepath.Join(fx.root, "outside.parquet"), fx.table},
		{fx.table + "/../outside.parquet", fx.table},
		{fx.table, fx.table},
		{"s3://bucket/tbl/a.parquet", "s3://bucket/tbl"},
		{"file://otherhost" + fx.file, "file://otherhost" + fx.table},
	}
	for _, b := range bad {
		if u, err := fx.local.URL(b[0], b[1], later); err == nil {
			t.Errorf("URL(%q, %q) = %q, want error", b[0], b[1], u)
		}
	}
}

// tampered flips one character of the token in url (before its query).
func tampered(url string) string {
	path, query, _ := strings.Cut(url, "?")
	return path[:len(path)-2] + flipChar(path[len(path)-2]) + path[len(path)-1:] + "?" + query
}

// A location names the file its path spells: '%' escapes, '+' and spaces
// are part of the name (PyIceberg and Java write region=us%2Feast+1 as
// that directory), never decoded; only the URI's authority is parsed.
func TestLocalPathIsLiteral(t *testing.T) {
	for in, want := range map[string]string{
		"file:///w/t/data/region=us%2Feast+1/a.parquet": "/w/t/data/region=us%2Feast+1/a.parquet",
		"file:///w/t/data/pct=100%25/a b%20c.parquet":   "/w/t/data/pct=100%25/a b%20c.parquet",
		"file://localhost/w/t/%61":                      "/w/t/%61",
		"file://LOCALHOST/w/t/a":                        "/w/t/a",
		"FILE:/w/t/a%zz":                                "/w/t/a%zz",
		"file:////w//t/./a":                             "/w/t/a",
		"/w/t/data/region=us%2Feast+1/a.parquet":        "/w/t/data/region=us%2Feast+1/a.parquet",
		"/w/t/a?b#c":                                    "/w/t/a?b#c",
		"file:///w/t/a/../b":                            "/w/t/b",
		"file:///w/t/\"q\\<&>\u2028é":                   "/w/t/\"q\\<&>\u2028é",
	} {
		got, err := LocalPath(in)
		if err != nil || got != want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"file://host/w/t/a":  errRemoteHost,
		"file://[::1]/w/t/a": errRemoteHost,
		"file:///w/t/a?x=1":  errQueryInURI,
		"file:///w/t/a#f":    errQueryInURI,
		"file:t/a":           errNotAbsolute,
		"file://localhost":   errNotAbsolute,
		"file://":            errNotAbsolute,
		"t/a":                errNotAbsolute,
		"":                   errNotAbsolute,
		"s3://b/w/t/a":       errNotLocal,
		"/w/t/x://y":         errNotLocal,
	} {
		if got, err := LocalPath(in); err != want {
			t.Errorf("LocalPath(%q) = %q, %v; want %v", in, got, err, want)
		}
	}
}

// Files whose names hold '%2F', '%25', '+' and spaces are served from
// exactly the path their location spells, not from the path a decoder
// would make of it (a decoy here), and URL errors name no path.
func TestLocalServesLiteralNames(t *testing.T) {
	fx := newFixture(t)
	for _, rel := range []string{"data/region=us%2Feast+1/a.parquet", "data/pct=100%25/b c.parquet",
		"data/sp ace=x%20y/c+d%2B.parquet"} {
		p := filepath.Join(fx.table, rel)
		mustMkdir(t, filepath.Dir(p))
		mustWrite(t, p, []byte("literal "+rel))
		decoded, err := url.PathUnescape(p)
		if err != nil {
			t.Fatal(err)
		}
		mustMkdir(t, filepath.Dir(decoded))
		mustWrite(t, decoded, []byte("decoy"))
		for _, loc := range []string{p, "file://" + p} {
			u, err := fx.local.URL(loc, "file://"+fx.table, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if r := do(t, http.MethodGet, u, nil); r.status != http.StatusOK || string(r.body) != "literal "+rel {
				t.Errorf("%s: %d %q", loc, r.status, r.body)
			}
		}
	}
	for _, loc := range []string{fx.root + "/elsewhere.parquet", "file://host" + fx.file, "relative/a.parquet", "file://" + fx.file + "?v=1"} {
		_, err := fx.local.URL(loc, fx.table, time.Now().Add(time.Hour))
		if err == nil || strings.Contains(err.Error(), fx.root) || strings.Contains(err.Error(), loc) {
			t.Errorf("URL(%q): %v", loc, err)
		}
	}
}
