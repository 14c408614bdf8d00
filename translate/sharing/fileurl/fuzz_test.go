package fileurl

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// fuzzSealed are the only tokens FuzzOpen may ever see open. Key, payloads
// and expiry are fixed so the committed seed corpus stays valid.
var fuzzPurposes = []string{PurposeLocalFile, "lakegate/page-token"}

func fuzzSealer(t testing.TB) (*Sealer, map[string][]byte) {
	s := mustSealer(t, testKey, testOldKey)
	old := mustSealer(t, testOldKey)
	exp := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	sealed := map[string][]byte{}
	for _, purpose := range fuzzPurposes {
		for _, p := range [][]byte{nil, []byte("x"), []byte(`{"f":"/t/d/a.parquet","t":"/t"}`)} {
			sealed[purpose+"\x00"+s.Seal(purpose, p, exp)] = p
			sealed[purpose+"\x00"+old.Seal(purpose, p, exp)] = p
		}
	}
	return s, sealed
}

// FuzzOpen: Open never panics, only returns its sentinel errors, and never
// yields a payload for a (purpose, token) pair it did not seal.
func FuzzOpen(f *testing.F) {
	s, sealed := fuzzSealer(f)
	for k := range sealed {
		_, tok, _ := bytes.Cut([]byte(k), []byte{0})
		f.Add(string(tok))
	}
	f.Add("")
	f.Add("AQ")
	f.Add("AQAAAAAAAAAA")
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, token string) {
		for _, purpose := range fuzzPurposes {
			got, err := s.Open(purpose, token, now)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTampered) && !errors.Is(err, ErrExpired) {
					t.Fatalf("unexpected error type: %v", err)
				}
				if got != nil {
					t.Fatalf("payload alongside error %v", err)
				}
				continue
			}
			want, ok := sealed[purpose+"\x00"+token]
			if !ok {
				t.Fatalf("opened a token that was never sealed for %q: %q -> %q", purpose, token, got)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("payload %q, want %q", got, want)
			}
		}
	})
}
