package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/internal/redact"
)

// tableSecret has characters JSON escapes (<, &, >, /), one outside the
// BMP (a surrogate pair when \u-escaped) and bytes whose base64 holds
// both '+' and '/' (so the URL-safe alphabet differs).
const tableSecret = "s3cr3t-T0k3n/<&>\U0001F511~~~??>>>"

// escapeAll \u-escapes every character of s (upperHex: A-F).
func escapeAll(s string, upperHex bool) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff {
			hi, lo := 0xd800+((r-0x10000)>>10), 0xdc00+((r-0x10000)&0x3ff)
			b.WriteString(hexEscape(hi, upperHex) + hexEscape(lo, upperHex))
			continue
		}
		b.WriteString(hexEscape(r, upperHex))
	}
	return b.String()
}

func hexEscape(r rune, upper bool) string {
	if upper {
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// escapeEveryOther \u-escapes every other character of s, and writes '/'
// as JSON's \/.
func escapeEveryOther(s string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		switch {
		case r == '/':
			b.WriteString(`\/`)
		case i%2 == 0:
			b.WriteString(escapeAll(string(r), false))
		default:
			b.WriteRune(r)
		}
		i++
	}
	return b.String()
}

func percentAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func jsonString(s string) string {
	q, _ := json.Marshal(s)
	return string(q[1 : len(q)-1])
}

var encodings = map[string]*base64.Encoding{
	"std": base64.StdEncoding, "std raw": base64.RawStdEncoding,
	"url": base64.URLEncoding, "url raw": base64.RawURLEncoding,
}

// Every form a backend could echo the secret in is blanked, inside a
// message around it.
func TestRedactsEveryForm(t *testing.T) {
	s := tableSecret
	cut := s[:redact.MinPrefix(len(s))]
	forms := map[string]string{
		"plain":                     s,
		"json.Marshal":              jsonString(s),
		"all escaped":               escapeAll(s, false),
		"all escaped, upper hex":    escapeAll(s, true),
		"every other escaped":       escapeEveryOther(s),
		"query-escaped":             url.QueryEscape(s),
		"path-escaped":              url.PathEscape(s),
		"all percent-encoded":       percentAll(s),
		"cut at the minimum":        cut,
		"cut one short":             s[:len(s)-1],
		"cut, escaped":              escapeAll(cut, false),
		"cut mid-escape":            escapeAll(s, false)[:len(escapeAll(s, false))-3],
		"cut inside the rune":       s[:strings.IndexRune(s, '\U0001F511')+2],
		"cut, json.Marshal + dots":  jsonString(cut) + "...",
		"cut, percent + ellipsis":   url.PathEscape(cut) + "…",
		"twice":                     s + s,
		"escaped next to plain":     jsonString(s) + s,
		"bearer in JSON":            jsonString("Bearer " + s),
		"basic credentials escaped": escapeEveryOther("svc:" + s),
	}
	for name, enc := range encodings {
		for _, wrap := range []string{"", "x", "xy", "Bearer ", "user:", "svc-account:"} {
			forms[fmt.Sprintf("base64 %s of %q+secret", name, wrap)] = enc.EncodeToString([]byte(wrap + s))
			forms[fmt.Sprintf("base64 %s of %q+secret+suffix", name, wrap)] = enc.EncodeToString([]byte(wrap + s + "@realm"))
			forms[fmt.Sprintf("base64 %s of %q+cut secret", name, wrap)] = enc.EncodeToString([]byte(wrap + cut))
		}
	}
	for _, wrap := range []string{"", "x", "xy", "user:"} {
		e := base64.StdEncoding.EncodeToString([]byte(wrap + s))
		forms[fmt.Sprintf("base64 of %q+secret, cut", wrap)] = e[:len(e)-7]
	}
	forms["Basic header"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s))
	r := redact.New("unrelated-secret-value", s)
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			msg := `{"error":{"message":"rejected credentials ` + form + ` for ns.t"}}`
			got := r.String(msg)
			assert.NotContains(t, got, form, "the form passed")
			assert.Contains(t, got, redact.Marker)
			assert.True(t, strings.HasPrefix(got, `{"error":{"message":"rejected credentials `), "text before the secret is kept: %s", got)
			assert.True(t, strings.HasSuffix(got, ` for ns.t"}}`), "text after the secret is kept: %s", got)
			assert.Equal(t, got, string(r.Bytes([]byte(msg))))
		})
	}
}

// What is no secret stays: a prefix shorter than the minimum, other
// base64, a word that begins a longer password, too short secrets.
func TestKeepsWhatIsNoSecret(t *testing.T) {
	const password = "lakegate-redis-password-42" // 26 bytes: prefixes of 13 go
	r := redact.New(password, "abc", "", tableSecret)
	for _, msg := range []string{
		"lakegate could not reach redis: lakegate-red", // 12 bytes of the password: kept
		"abc is too short to be a secret",
		"etag " + base64.StdEncoding.EncodeToString([]byte("some other content entirely")),
		"s3cr3t-T0k3n/", // 13 bytes of 28: less than half
		`escaped \u0073\u0033cr3t-T0k3n`,
		"%ZZ \\u12 \\",
		"",
	} {
		assert.Equal(t, msg, r.String(msg))
	}
	assert.Equal(t, "lakegate could not reach redis: "+redact.Marker+"!",
		r.String("lakegate could not reach redis: lakegate-redis-pa!"), "a prefix past half goes")
	assert.Equal(t, 14, redact.MinPrefix(len(tableSecret)))
	assert.Equal(t, 8, redact.MinPrefix(9))
	assert.Equal(t, 6, redact.MinPrefix(6))
	assert.Equal(t, 20, redact.MinPrefix(40))
	assert.Equal(t, "plain", (*redact.Redactor)(nil).String("plain"))
	assert.Equal(t, "a "+redact.Marker+" b", redact.New("pa$$ word").String("a pa%24%24+word b"), "a query's + is a space")
}

// Bytes hands back its input, unallocated, when it holds no secret: the
// common error body costs one scan.
func TestBytesWithoutSecretsAllocatesNothing(t *testing.T) {
	r := redact.New(tableSecret, "another-backend-secret")
	body := []byte(`{"error":{"message":"Table does not exist: ns.t","type":"NoSuchTableException","code":404}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if got := r.Bytes(body); &got[0] != &body[0] {
			t.Fatal("a copy of a body without secrets")
		}
	})
	assert.Zero(t, allocs)
}

func BenchmarkRedactErrorBody(b *testing.B) {
	r := redact.New(tableSecret, "another-backend-secret", "AKIAIOSFODNN7EXAMPLE/wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	body := []byte(strings.Repeat(`{"error":{"message":"Table does not exist: ns.t","type":"NoSuchTableException","code":404}}`, 10))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Bytes(body)
	}
}

// fuzzSecrets are the secrets FuzzRedact hides; index 0 is tableSecret.
var fuzzSecrets = []string{tableSecret, "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "pa$$w0rd:with spaces"}

// FuzzRedact builds a message from fuzzed text around a secret in a
// fuzzed encoding (escapes, percent-encoding, base64 of a wrapping at any
// offset, cut anywhere from the minimum prefix on) and asserts that the
// encoded secret, and the secret in any decoding of the output, is gone.
func FuzzRedact(f *testing.F) {
	f.Add("before ", " after", uint8(0), uint8(0), uint16(0), "")
	f.Add(`{"message":"`, `"}`, uint8(1), uint8(3), uint16(0xffff), "Bearer ")
	f.Add("", "", uint8(2), uint8(5), uint16(7), "u:")
	f.Add("\\", "%", uint8(0), uint8(2), uint16(1), "x")
	f.Fuzz(func(t *testing.T, before, after string, which, form uint8, cut uint16, wrap string) {
		secret := fuzzSecrets[int(which)%len(fuzzSecrets)]
		keep := redact.MinPrefix(len(secret)) + int(cut)%(len(secret)-redact.MinPrefix(len(secret))+1)
		for !utf8.ValidString(secret[:keep]) {
			keep++ // cut on a character: a cut rune is not escaped as one
		}
		plain := secret[:keep]
		var enc string
		switch form % 7 {
		case 0:
			enc = plain
		case 1:
			enc = jsonString(plain)
		case 2:
			enc = escapeEveryOther(plain)
		case 3:
			enc = escapeAll(plain, cut%2 == 0)
		case 4:
			enc = url.QueryEscape(plain)
		case 5:
			enc = base64.StdEncoding.EncodeToString([]byte(wrap + plain))
		case 6:
			enc = base64.RawURLEncoding.EncodeToString([]byte(wrap + plain))
		}
		msg := before + enc + after
		got := redact.New(fuzzSecrets...).String(msg)
		if strings.Contains(got, enc) && len(enc) > 0 {
			t.Fatalf("the encoded secret passed: %q -> %q", msg, got)
		}
		assertNoSecret(t, got, msg)
	})
}

// assertNoSecret fails when out holds a secret's minimum prefix plain,
// escaped or percent-encoded from any position, or base64 of it.
func assertNoSecret(t *testing.T, out, in string) {
	t.Helper()
	for _, s := range fuzzSecrets {
		p := s[:redact.MinPrefix(len(s))]
		for i := range len(out) {
			if strings.HasPrefix(decodeFrom(out[i:], len(p)), p) {
				t.Fatalf("secret prefix %q left at %d: %q -> %q", p, i, in, out)
			}
		}
		for _, wrap := range []string{"", "x", "xy"} {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				e := enc.EncodeToString([]byte(wrap + p))
				off := len(wrap)
				core := e[(8*off+5)/6 : 8*(off+len(p))/6] // the characters p alone sets
				if strings.Contains(out, core) {
					t.Fatalf("base64 of %q left: %q -> %q", p, in, out)
				}
			}
		}
	}
}

// decodeFrom decodes up to n bytes of s's JSON escapes and %XX: a second
// decoder, written apart from the package's, with encoding/json and
// net/url doing the decoding.
func decodeFrom(s string, n int) string {
	var b strings.Builder
	for len(s) > 0 && b.Len() < n {
		switch {
		case strings.HasPrefix(s, `\u`) && len(s) >= 12 && s[6:8] == `\u`:
			var r string
			if json.Unmarshal([]byte(`"`+s[:12]+`"`), &r) == nil && !strings.ContainsRune(r, utf8.RuneError) {
				b.WriteString(r)
				s = s[12:]
				continue
			}
			fallthrough
		case strings.HasPrefix(s, `\u`) && len(s) >= 6:
			var r string
			if json.Unmarshal([]byte(`"`+s[:6]+`"`), &r) == nil {
				b.WriteString(r)
				s = s[6:]
				continue
			}
			b.WriteByte(s[0])
			s = s[1:]
		case s[0] == '\\' && len(s) >= 2:
			var r string
			if json.Unmarshal([]byte(`"`+s[:2]+`"`), &r) == nil {
				b.WriteString(r)
				s = s[2:]
				continue
			}
			b.WriteByte(s[0])
			s = s[1:]
		case s[0] == '%' && len(s) >= 3:
			if r, err := url.PathUnescape(s[:3]); err == nil {
				b.WriteString(r)
				s = s[3:]
				continue
			}
			b.WriteByte(s[0])
			s = s[1:]
		default:
			b.WriteByte(s[0])
			s = s[1:]
		}
	}
	return b.String()
}
