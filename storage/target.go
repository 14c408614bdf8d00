package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Access is what a signed request does to the table's files.
type Access string

// The two accesses a policy decides on.
const (
	Read  Access = "read"
	Write Access = "write"
)

// SignRequest is the Iceberg REST spec's RemoteSignRequest.
type SignRequest struct {
	Region     string              `json:"region"`
	URI        string              `json:"uri"`
	Method     string              `json:"method"`
	Headers    map[string][]string `json:"headers"`
	Properties map[string]string   `json:"properties,omitempty"`
	Body       *string             `json:"body,omitempty"`
	Provider   string              `json:"provider,omitempty"`
}

// specMethods are RemoteSignRequest's method enum.
var specMethods = map[string]bool{"PUT": true, "GET": true, "HEAD": true, "POST": true, "DELETE": true,
	"PATCH": true, "OPTIONS": true}

// Check is the spec's schema on a decoded RemoteSignRequest: its required
// fields, its method enum. Its error is the client's mistake (400), not
// a refusal.
func (r *SignRequest) Check() error {
	switch {
	case r.Region == "" || r.URI == "" || r.Method == "" || r.Headers == nil:
		return errors.New("region, uri, method and headers are required")
	case !specMethods[r.Method]:
		return fmt.Errorf("method %q is none of PUT, GET, HEAD, POST, DELETE, PATCH, OPTIONS", r.Method)
	}
	return nil
}

// ErrRefused wraps every reason a request is not signed: the door
// answers it 403.
var ErrRefused = errors.New("not signed")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefused}, args...)...)
}

// Target is what one S3 request would touch, read from its URI, method,
// query and (for DeleteObjects) body: one bucket, the object keys (a
// listing's prefix), and whether it reads or writes.
type Target struct {
	URL    *url.URL
	Method string
	Bucket string
	Keys   []string
	Access Access
	// payloadHash is the x-amz-content-sha256 the request is signed with.
	payloadHash string
}

// Object requests' query parameters, per method; anything else (acl,
// tagging, policy, ...) is not a file read or write of the table's and is
// refused. x-id is the operation name SDKs add.
var objectQuery = map[string]map[string]bool{
	http.MethodGet:    {"x-id": true, "versionId": true, "partNumber": true},
	http.MethodHead:   {"x-id": true, "versionId": true, "partNumber": true},
	http.MethodPut:    {"x-id": true, "partNumber": true, "uploadId": true},
	http.MethodPost:   {"x-id": true, "uploads": true, "uploadId": true},
	http.MethodDelete: {"x-id": true, "versionId": true, "uploadId": true},
}

// listQuery are ListObjects(V2)'s parameters.
var listQuery = map[string]bool{"x-id": true, "list-type": true, "prefix": true, "delimiter": true,
	"continuation-token": true, "max-keys": true, "start-after": true, "encoding-type": true,
	"fetch-owner": true, "marker": true}

// Target reads what req would touch. Anything this cannot read exactly
// (another host or scheme, a bucket name S3 would not accept, an encoded
// or dot segment, a repeated or unknown query parameter, a copy whose
// source is elsewhere) is refused, never guessed.
func (s *Signer) Target(req SignRequest) (Target, error) {
	if req.Provider != "" && req.Provider != "s3" {
		return Target{}, refuse("provider %q: this gateway signs s3 requests only", req.Provider)
	}
	t := Target{Method: req.Method}
	u, err := url.Parse(req.URI)
	if err != nil || u.Opaque != "" || u.User != nil || u.Fragment != "" || strings.ContainsAny(req.URI, "#\\") {
		return Target{}, refuse("uri is not a plain http(s) URL")
	}
	t.URL = u
	bucket, rawKey, err := s.split(u)
	if err != nil {
		return Target{}, err
	}
	t.Bucket = bucket
	key, err := objectKey(rawKey)
	if err != nil {
		return Target{}, err
	}
	query, err := singleQuery(u.RawQuery)
	if err != nil {
		return Target{}, err
	}
	for name := range req.Headers {
		switch strings.ToLower(name) {
		case "x-amz-copy-source", "x-amz-copy-source-range":
			// The source would be read with the gateway's keys, and it
			// is another object: copies are not signed.
			return Target{}, refuse("copies (x-amz-copy-source) are not signed")
		}
	}
	if key != "" {
		return t, t.object(key, query)
	}
	return t, t.bucketLevel(query, req.Body)
}

// object classifies an object request.
func (t *Target) object(key string, query url.Values) error {
	allowed, ok := objectQuery[t.Method]
	if !ok {
		return refuse("method %s is neither a read nor a write of an object", t.Method)
	}
	for name := range query {
		if !allowed[name] {
			return refuse("query parameter %q is not part of a %s of a table's file", name, t.Method)
		}
	}
	if t.Method == http.MethodPost && query.Has("uploads") == query.Has("uploadId") {
		return refuse("a POST to an object starts (uploads) or completes (uploadId) a multipart upload")
	}
	t.Keys = []string{key}
	t.Access = Read
	if t.Method != http.MethodGet && t.Method != http.MethodHead {
		t.Access = Write
	}
	return nil
}

// bucketLevel classifies a request on the bucket itself: a listing under
// a prefix (read), or DeleteObjects (write), whose body names the keys.
func (t *Target) bucketLevel(query url.Values, body *string) error {
	switch {
	case t.Method == http.MethodGet && query.Has("prefix"):
		for name := range query {
			if !listQuery[name] {
				return refuse("query parameter %q is not part of a listing", name)
			}
		}
		if query.Get("encoding-type") != "" && query.Get("encoding-type") != "url" {
			return refuse("encoding-type %q", query.Get("encoding-type"))
		}
		prefix := query.Get("prefix")
		if err := checkKey(prefix, true); err != nil {
			return err
		}
		t.Keys, t.Access = []string{prefix}, Read
		return nil
	case t.Method == http.MethodPost && query.Has("delete") && len(query) == 1:
		if body == nil {
			return refuse("DeleteObjects without its body: the keys it deletes must be checked")
		}
		keys, err := deleteKeys(*body)
		if err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(*body))
		t.Keys, t.Access, t.payloadHash = keys, Write, hex.EncodeToString(sum[:])
		return nil
	}
	return refuse("%s on the bucket is neither a listing under a prefix nor DeleteObjects", t.Method)
}

// deleteKeys reads DeleteObjects' XML body: the keys only.
func deleteKeys(body string) ([]string, error) {
	var doc struct {
		XMLName xml.Name `xml:"Delete"`
		Objects []struct {
			Key string `xml:"Key"`
		} `xml:"Object"`
	}
	if err := xml.Unmarshal([]byte(body), &doc); err != nil || len(doc.Objects) == 0 {
		return nil, refuse("DeleteObjects' body is not a <Delete> naming objects")
	}
	keys := make([]string, len(doc.Objects))
	for i, o := range doc.Objects {
		if err := checkKey(o.Key, false); err != nil {
			return nil, err
		}
		keys[i] = o.Key
	}
	return keys, nil
}

// split finds the bucket and the escaped key in u, path-style
// (endpoint/bucket/key) or virtual-hosted (bucket.endpoint/key), on the
// configured endpoint only.
func (s *Signer) split(u *url.URL) (bucket, rawKey string, err error) {
	host := strings.ToLower(u.Host)
	if u.Scheme != s.endpoint.Scheme {
		return "", "", refuse("uri scheme %q is not the storage endpoint's (%s)", u.Scheme, s.endpoint.Scheme)
	}
	path := u.EscapedPath()
	if !strings.HasPrefix(path, "/") {
		return "", "", refuse("uri has no path")
	}
	for _, h := range s.hosts {
		if host == h {
			bucket, rawKey, _ = strings.Cut(path[1:], "/")
			return bucket, rawKey, checkBucket(bucket)
		}
		if b, ok := strings.CutSuffix(host, "."+h); ok {
			return b, path[1:], checkBucket(b)
		}
	}
	return "", "", refuse("uri host %q is not the storage endpoint", u.Host)
}

// checkBucket accepts S3's bucket names: 3-63 of a-z, 0-9, '.', '-',
// starting and ending with a letter or digit, no "..".
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 || strings.Contains(b, "..") {
		return refuse("bucket name %q", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		letter := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !letter && (c != '.' && c != '-' || i == 0 || i == len(b)-1) {
			return refuse("bucket name %q", b)
		}
	}
	return nil
}

// objectKey decodes an escaped key once, as S3 does, and checks it.
func objectKey(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	key, err := url.PathUnescape(raw)
	if err != nil {
		return "", refuse("key %q is not percent-encoded properly", raw)
	}
	return key, checkKey(key, false)
}

// checkKey refuses keys whose place a reader could take two ways: empty,
// "." or ".." segments (some stores and every file system resolve them),
// a leading slash, control characters. A listing prefix may end in "/".
func checkKey(key string, prefix bool) error {
	if key == "" {
		return refuse("empty key")
	}
	trimmed := key
	if prefix {
		trimmed = strings.TrimSuffix(key, "/")
	}
	for _, seg := range strings.Split(trimmed, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return refuse("key %q has an empty, \".\" or \"..\" segment", key)
		}
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f || c == '\\' || c == 0xfffd {
			return refuse("key %q has a control character, a backslash or invalid UTF-8", key)
		}
	}
	return nil
}

// singleQuery parses a raw query strictly: no ';', no repeated names.
func singleQuery(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, refuse("query %q is malformed", raw)
	}
	for name, vs := range q {
		if len(vs) > 1 {
			return nil, refuse("query parameter %q is repeated", name)
		}
	}
	return q, nil
}
