package fileurl

// The URL builders Local.Batch and the reusable sealing replaced, kept
// verbatim as the reference their tokens and URLs must match byte for
// byte: a fresh HMAC per token, the claim marshaled by encoding/json.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func refSeal(s *Sealer, purpose string, payload []byte, expires time.Time) string {
	header := make([]byte, headerLen)
	header[0] = tokenVersion
	binary.BigEndian.PutUint64(header[1:], uint64(expires.Unix()))
	ad := associatedData(purpose, header)
	k := s.keys[0]
	nonce := hmacSum(k.nonce, ad, payload)[:nonceLen]
	out := make([]byte, 0, headerLen+nonceLen+len(payload)+tagLen)
	out = append(append(out, header...), nonce...)
	out = k.aead.Seal(out, nonce, payload, ad)
	return tokenEncoding.EncodeToString(out)
}

func refURL(l *Local, filePath, tableLocation string, expires time.Time) (string, error) {
	file, err := LocalPath(filePath)
	if err != nil {
		return "", err
	}
	table, err := LocalPath(tableLocation)
	if err != nil {
		return "", err
	}
	if !refWithin(table, file) {
		return "", errOutside
	}
	payload, err := json.Marshal(localClaim{File: file, Table: table})
	if err != nil {
		return "", err
	}
	token := refSeal(l.Sealer, PurposeLocalFile, payload, expires)
	return strings.TrimRight(l.BaseURL, "/") + "/" + token + "?" + readMarker, nil
}

func refWithin(dir, child string) bool {
	rel, err := filepath.Rel(dir, child)
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Paths in every spelling LocalPath meets: plain and file: URIs, hosts,
// escapes, queries and fragments, dot segments, relative paths, other
// schemes, and characters the claim's JSON must escape.
var pathSpellings = []string{
	"/t", "/t/", "/t/a.parquet", "/t/d/a.parquet", "/t/../t/a", "/t/./a", "/t//a", "/t/..a", "/t/../x", "/", "//t/a", "//",
	"file:///t/a", "file:/t/a", "FILE:///t/a", "File:/t/a", "file://localhost/t/a", "file://LOCALHOST/t/a",
	"file://host/t/a", "file://localhost", "file:t/a", "file:", "file://", "file:///", "file:///t/%61", "file:///t/a%zz",
	"file:///t/a?x=1", "file:///t/a#f", "file:///t/a%2Fb", "/t/a%20b", "/t/a?b", "/t/a#b", "t/a", "", "s3://b/t/a",
	"/t/x://y", "file://[::1]/t/a", "file://u@localhost/t/a", "/t/ctl\x01", "file:///t/ctl\x7f", "/t/\"q\\<&>\u2028é",
	"/t/bad\xff", "file:///t/a b", "/t/a b", "file:////t/a", "file://localhost//t/a",
}

func TestWithinMatchesReference(t *testing.T) {
	for _, dir := range []string{"/", "/t", "/t/d", "/tt", "/t/..a"} {
		for _, s := range pathSpellings {
			if child, err := LocalPath(s); err == nil {
				if got, want := within(dir, child), refWithin(dir, child); got != want {
					t.Errorf("within(%q, %q) = %v, reference %v", dir, child, got, want)
				}
			}
		}
	}
}

func TestBatchURLsMatchReference(t *testing.T) {
	l := &Local{Sealer: mustSealer(t, testKey), BaseURL: "https://h/p/files//"}
	exp := testNow.Add(time.Hour)
	for _, table := range []string{"/t", "file:///t/", "file://host/t", "t", "/t/\"q\\<&>\u2028é", "/"} {
		b := l.Batch(table, exp)
		for _, file := range pathSpellings {
			for _, f := range []string{file, strings.Replace(file, "/t", table, 1)} {
				got, gotErr := b.URL(f)
				want, wantErr := refURL(l, f, table, exp)
				if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("table %q file %q: %q, %v; reference %q, %v", table, f, got, gotErr, want, wantErr)
				}
				if one, err := l.URL(f, table, exp); one != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("Local.URL(%q, %q) = %q, %v; reference %q, %v", f, table, one, err, want, wantErr)
				}
			}
		}
	}
}

func TestSealingMatchesReference(t *testing.T) {
	s := mustSealer(t, testKey, testOldKey)
	r := rand.New(rand.NewPCG(1, 2))
	batches := map[string]*sealing{}
	for range 2000 {
		purpose := []string{"", "p", PurposeLocalFile, "x\x00y"}[r.IntN(4)]
		exp := time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9))
		if r.IntN(2) == 0 {
			exp = testNow.Add(time.Hour)
		}
		payload := make([]byte, r.IntN(300))
		for i := range payload {
			payload[i] = byte(r.Uint32())
		}
		key := fmt.Sprint(purpose, exp.Unix())
		b := batches[key]
		if b == nil {
			b = s.sealing(purpose, exp)
			batches[key] = b
		}
		want := refSeal(s, purpose, payload, exp)
		if got := string(b.appendToken(nil, payload)); got != want {
			t.Fatalf("reused sealing: %s, reference %s", got, want)
		}
		if got := s.Seal(purpose, payload, exp); got != want {
			t.Fatalf("Seal: %s, reference %s", got, want)
		}
		if exp.After(testNow) {
			if opened, err := s.Open(purpose, want, testNow); err != nil || string(opened) != string(payload) {
				t.Fatalf("Open: %q, %v", opened, err)
			}
		}
	}
}
