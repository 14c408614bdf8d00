// Package redact blanks known secrets (backend tokens, client secrets,
// keys, passwords) out of text that leaves the process: error bodies a
// backend answered, messages on the status page.
//
// A backend that echoes a credential seldom echoes it verbatim. It may
// quote it inside JSON (\u-escaped, in any mix of escaped and plain
// characters), inside a URL (percent-encoded), inside an Authorization
// header it quotes ("Basic " + base64 of "user:secret", "Bearer " +
// token, itself base64-encoded by some), or cut off ("token abcdef12…").
// A Redactor finds a secret in each of these forms:
//
//   - plain, JSON-escaped (\uXXXX in either case, surrogate pairs, \/ and
//     the short escapes) and percent-encoded (%XX, and + for a space),
//     each character in whichever form, one level of escaping deep;
//   - base64, standard or URL-safe, padded or not, at each of the three
//     byte offsets the secret may have inside what was encoded, so the
//     secret alone and any wrapping of it ("Bearer <tok>", "user:<secret>")
//     are caught: the whole base64 run that holds it is blanked;
//   - truncated: a prefix of the secret is blanked once it is at least
//     MinPrefix(len) bytes long (see MinPrefix for why that length).
//
// Secrets shorter than MinSecret are not searched for: they would blank
// ordinary words and are no credential anyway.
package redact

import (
	"bytes"
	"encoding/base64"
	"slices"
	"unicode/utf8"
)

// Marker replaces a secret in what is shown.
const Marker = "[redacted]"

// MinSecret is the shortest secret searched for.
const MinSecret = 4

// minBase64 is the shortest secret searched for in base64: shorter ones
// encode to cores of fewer than 10 characters, which random base64 data
// (a checksum, an id) would contain now and then.
const minBase64 = 8

// MinPrefix is the shortest prefix of a secret of n bytes that is blanked
// when the secret is shown cut off: half the secret, and at least 8 bytes
// (the whole secret when it is shorter). Less than half leaves more than
// half of the secret unknown (a 32-byte token keeps 16 random bytes, past
// guessing), while blanking every 8-byte prefix would blank common words
// that happen to begin a weak password ("lakegate" of "lakegate-redis-pw")
// all over a message.
func MinPrefix(n int) int {
	return min(n, max(8, (n+1)/2))
}

// Redactor blanks a fixed set of secrets. It is safe for concurrent use.
type Redactor struct {
	secrets []secret
}

type secret struct {
	plain []byte
	min   int      // the shortest prefix blanked (MinPrefix)
	cores [][]byte // base64 of plain[:min] at each offset and alphabet
	first [256]bool
}

// New is a Redactor of secrets; empty and too short ones are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinSecret || slices.ContainsFunc(r.secrets, func(x secret) bool { return string(x.plain) == s }) {
			continue
		}
		r.secrets = append(r.secrets, newSecret(s))
	}
	return r
}

func newSecret(s string) secret {
	x := secret{plain: []byte(s), min: MinPrefix(len(s))}
	// A match starts with the secret's first byte, plain or escaped.
	x.first[s[0]], x.first['\\'], x.first['%'] = true, true, true
	if s[0] == ' ' {
		x.first['+'] = true
	}
	if len(s) >= minBase64 {
		x.cores = base64Cores(x.plain[:x.min])
	}
	return x
}

// base64Cores are the characters of base64 that p alone determines, for
// each of the three offsets (mod 3) p may start at in the encoded bytes,
// in the standard and the URL-safe alphabet. Character k of an encoding
// holds bits [6k, 6k+6) of the input; those inside p's bits are p's.
// Padding never falls inside a core, so padded and unpadded encodings
// hold the same cores, and since p is a prefix, a cut-off encoding of the
// secret holds them too.
func base64Cores(p []byte) [][]byte {
	var out [][]byte
	for off := range 3 {
		in := append(make([]byte, off), p...)
		enc := []byte(base64.RawStdEncoding.EncodeToString(in))
		from, to := (8*off+5)/6, 8*(off+len(p))/6
		core := enc[from:to]
		url := bytes.Map(func(r rune) rune {
			switch r {
			case '+':
				return '-'
			case '/':
				return '_'
			}
			return r
		}, core)
		out = append(out, core)
		if !bytes.Equal(url, core) {
			out = append(out, url)
		}
	}
	return out
}

// String is s with every secret blanked.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	spans := r.find([]byte(s))
	if spans == nil {
		return s
	}
	return string(replace([]byte(s), spans))
}

// Bytes is b with every secret blanked: b itself when none is found.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(r.secrets) == 0 {
		return b
	}
	spans := r.find(b)
	if spans == nil {
		return b
	}
	return replace(b, spans)
}

// span is a half-open byte range of the text to blank.
type span struct{ from, to int }

func (r *Redactor) find(b []byte) []span {
	var spans []span
	for i := range r.secrets {
		s := &r.secrets[i]
		spans = s.findEscaped(b, spans)
		spans = s.findBase64(b, spans)
	}
	return spans
}

// findEscaped appends the places b spells at least s.min leading bytes
// of s, each byte plain, JSON-escaped or percent-encoded.
func (s *secret) findEscaped(b []byte, spans []span) []span {
	for i := 0; i < len(b); i++ {
		if !s.first[b[i]] {
			continue
		}
		if n, end := s.matchAt(b, i); n >= s.min {
			spans = append(spans, span{i, end})
			i = end - 1
		}
	}
	return spans
}

// matchAt decodes b from i one unit (a byte, an escape) at a time while
// the units spell s; it returns how many bytes of s they spelled and
// where in b they end.
func (s *secret) matchAt(b []byte, i int) (n, end int) {
	var unit [utf8.UTFMax]byte
	end = i
	for n < len(s.plain) && end < len(b) {
		dec, size := decodeUnit(b[end:], unit[:0])
		if size == 1 && dec[0] == '+' && s.plain[n] == ' ' {
			dec[0] = ' ' // a query's space
		}
		if len(dec) > len(s.plain)-n || !bytes.Equal(dec, s.plain[n:n+len(dec)]) {
			break
		}
		n += len(dec)
		end += size
	}
	return n, end
}

// decodeUnit decodes the unit b starts with into dst: a JSON escape, a
// percent-encoded byte or a plain byte. size is how many bytes of b it
// took (never 0 for a non-empty b).
func decodeUnit(b, dst []byte) (dec []byte, size int) {
	switch b[0] {
	case '\\':
		if r, n := jsonEscape(b); n > 0 {
			return utf8.AppendRune(dst, r), n
		}
	case '%':
		if len(b) >= 3 {
			hi, ok1 := unhex(b[1])
			lo, ok2 := unhex(b[2])
			if ok1 && ok2 {
				return append(dst, hi<<4|lo), 3
			}
		}
	}
	return append(dst, b[0]), 1
}

// jsonEscape decodes the JSON escape b starts with; n is 0 when b does
// not start with one.
func jsonEscape(b []byte) (r rune, n int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, 0
		}
		if r >= 0xd800 && r < 0xdc00 && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if lo, ok := hex4(b[8:]); ok && lo >= 0xdc00 && lo < 0xe000 {
				return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12
			}
		}
		return r, 6
	}
	return 0, 0
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// findBase64 appends the base64 runs of b that hold one of s's cores:
// the whole run goes, since its edges hold bits of the secret too.
func (s *secret) findBase64(b []byte, spans []span) []span {
	for _, core := range s.cores {
		for at := 0; ; {
			k := bytes.Index(b[at:], core)
			if k < 0 {
				break
			}
			from, to := at+k, at+k+len(core)
			for from > 0 && isBase64(b[from-1]) {
				from--
			}
			for to < len(b) && isBase64(b[to]) {
				to++
			}
			spans = append(spans, span{from, to})
			at = to
		}
	}
	return spans
}

// isBase64 reports whether c belongs to either base64 alphabet or is
// padding.
func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// replace blanks spans of b (in any order, overlapping or not) in a new
// slice.
func replace(b []byte, spans []span) []byte {
	slices.SortFunc(spans, func(x, y span) int { return x.from - y.from })
	out := make([]byte, 0, len(b))
	last := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		out = append(append(out, b[last:from]...), Marker...)
		last = to
	}
	return append(out, b[last:]...)
}
