package fileurl

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	testKey    = bytes.Repeat([]byte("k"), 32)
	testOldKey = bytes.Repeat([]byte("o"), 32)
	testNow    = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
)

func mustSealer(t testing.TB, key []byte, old ...[]byte) *Sealer {
	t.Helper()
	s, err := NewSealer(key, old...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSealerKeyLength(t *testing.T) {
	if _, err := NewSealer(make([]byte, 31)); err == nil {
		t.Error("31-byte key accepted")
	}
	if _, err := NewSealer(testKey, make([]byte, 16)); err == nil {
		t.Error("short old key accepted")
	}
	if _, err := NewSealer(RandomKey()); err != nil {
		t.Errorf("RandomKey rejected: %v", err)
	}
	if bytes.Equal(RandomKey(), RandomKey()) {
		t.Error("RandomKey repeated itself")
	}
}

func TestSealerKeyIsCopied(t *testing.T) {
	key := append([]byte(nil), testKey...)
	s := mustSealer(t, key)
	tok := s.Seal("p", []byte("x"), testNow.Add(time.Hour))
	key[0] ^= 1
	if _, err := s.Open("p", tok, testNow); err != nil {
		t.Fatalf("mutating caller's key broke the sealer: %v", err)
	}
}

// flip returns tok with one decoded byte changed, re-encoded validly so the
// MAC check (not base64) is what must catch it.
func flip(t *testing.T, tok string, i int) string {
	t.Helper()
	raw, err := tokenEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	if i < 0 {
		i += len(raw)
	}
	raw[i] ^= 0x01
	return tokenEncoding.EncodeToString(raw)
}

// truncRaw drops n decoded bytes and re-encodes, yielding well-formed base64.
func truncRaw(t *testing.T, tok string, n int) string {
	t.Helper()
	raw, err := tokenEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	return tokenEncoding.EncodeToString(raw[:len(raw)-n])
}

func TestSealerOpen(t *testing.T) {
	s := mustSealer(t, testKey)
	exp := testNow.Add(time.Hour)
	payload := []byte(`{"f":"/t/a.parquet"}`)
	tok := s.Seal("file", payload, exp)
	oldTok := mustSealer(t, testOldKey).Seal("file", payload, exp)
	rotated := mustSealer(t, testKey, testOldKey)

	cases := []struct {
		name    string
		s       *Sealer
		purpose string
		token   string
		now     time.Time
		want    error
	}{
		{"round trip", s, "file", tok, testNow, nil},
		{"just before expiry", s, "file", tok, exp.Add(-time.Second), nil},
		{"wrong purpose", s, "page", tok, testNow, ErrTampered},
		{"purpose prefix", s, "fil", tok, testNow, ErrTampered},
		{"flipped version byte", s, "file", flip(t, tok, 0), testNow, ErrMalformed},
		{"flipped expiry byte", s, "file", flip(t, tok, 8), testNow, ErrTampered},
		{"flipped payload byte", s, "file", flip(t, tok, 12), testNow, ErrTampered},
		{"flipped mac byte", s, "file", flip(t, tok, -1), testNow, ErrTampered},
		{"truncated to an impossible base64 length", s, "file", tok[:len(tok)-(len(tok)%4+3)%4], testNow, ErrMalformed},
		{"truncated by one char", s, "file", tok[:len(tok)-1], testNow, ErrTampered},
		{"truncated to a valid shorter token", s, "file", truncRaw(t, tok, 3), testNow, ErrTampered},
		{"truncated below header+mac", s, "file", tok[:20], testNow, ErrMalformed},
		{"expired exactly", s, "file", tok, exp, ErrExpired},
		{"expired later", s, "file", tok, exp.Add(time.Hour), ErrExpired},
		{"garbage", s, "file", "!!not*base64!!", testNow, ErrMalformed},
		{"padded base64", s, "file", tok + "=", testNow, ErrMalformed},
		{"std base64 alphabet", s, "file", strings.NewReplacer("-", "+", "_", "/").Replace(tok) + "+", testNow, ErrMalformed},
		{"empty", s, "file", "", testNow, ErrMalformed},
		{"huge", s, "file", strings.Repeat("A", maxTokenLen+4), testNow, ErrMalformed},
		{"other key", s, "file", oldTok, testNow, ErrTampered},
		{"rotation: old key still opens", rotated, "file", oldTok, testNow, nil},
		{"rotation: new key opens", rotated, "file", tok, testNow, nil},
		{"rotation: old-key token can expire", rotated, "file", oldTok, exp, ErrExpired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.s.Open(c.purpose, c.token, c.now)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Open err = %v, want %v", err, c.want)
			}
			if err == nil && !bytes.Equal(got, payload) {
				t.Fatalf("payload = %q, want %q", got, payload)
			}
			if err != nil && got != nil {
				t.Fatalf("payload %q returned alongside error", got)
			}
		})
	}
}

func TestSealerSealsWithFirstKey(t *testing.T) {
	rotated := mustSealer(t, testKey, testOldKey)
	tok := rotated.Seal("file", []byte("x"), testNow.Add(time.Minute))
	if _, err := mustSealer(t, testKey).Open("file", tok, testNow); err != nil {
		t.Fatalf("token from rotated sealer does not open with the new key alone: %v", err)
	}
	if _, err := mustSealer(t, testOldKey).Open("file", tok, testNow); !errors.Is(err, ErrTampered) {
		t.Fatalf("token opened with the old key: %v", err)
	}
}

// TestSealerIsOpaque: nothing of the payload shows in the token, and
// sealing is deterministic (same input, same token; other input, other
// nonce).
func TestSealerIsOpaque(t *testing.T) {
	s := mustSealer(t, testKey)
	exp := testNow.Add(time.Hour)
	payload := []byte(`{"f":"/srv/warehouse/sales.db/orders/data/a.parquet","t":"/srv/warehouse/sales.db/orders"}`)
	tok := s.Seal("file", payload, exp)
	raw, err := tokenEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"srv", "warehouse", "parquet", "orders"} {
		if bytes.Contains(raw, []byte(leak)) || strings.Contains(tok, leak) {
			t.Fatalf("token shows %q", leak)
		}
	}
	if again := s.Seal("file", payload, exp); again != tok {
		t.Fatalf("sealing is not deterministic")
	}
	other := s.Seal("file", append([]byte(nil), payload[:len(payload)-1]...), exp)
	if tok[12:28] == other[12:28] {
		t.Fatalf("two payloads share a nonce")
	}
}

func TestSealURLSafeAndEmptyPayload(t *testing.T) {
	s := mustSealer(t, testKey)
	tok := s.Seal("p", nil, testNow.Add(time.Minute))
	if strings.ContainsAny(tok, "+/=?#%&") {
		t.Fatalf("token %q is not URL-safe", tok)
	}
	got, err := s.Open("p", tok, testNow)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty payload round trip: %q, %v", got, err)
	}
	if _, err := base64.RawURLEncoding.DecodeString(tok); err != nil {
		t.Fatalf("not base64url: %v", err)
	}
}
