package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

var trickyStrings = []string{
	"", "plain", `quote " and backslash \`, "slash / stays",
	"controls \x00\x01\x07\b\f\n\r\t\x1f\x7f",
	"html <script>&amp;</script>", "a&b=c<d>e",
	"unicode é ü 漢字 🙂", "separators \u2028 and \u2029 here",
	"invalid \xff utf-8 \xc3", "truncated rune \xe6\xbc", "lone surrogate \xed\xa0\x80",
	"\u2027\u202a near the separators", "https://h/p?X-Amz-Credential=a%2Fb&X-Amz-Signature=0f",
	"/tmp/warehouse/t/data/part=1/00000-0-8b0086f2.parquet",
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want := marshal(t, s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, json.Marshal = %s", s, got, want)
		}
		if got := AppendString([]byte("prefix"), []byte(s)); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("AppendString([]byte %q) = %s, json.Marshal = %s", s, got, want)
		}
	}
	for _, s := range trickyStrings {
		check(s)
	}
	for b := 0; b < 256; b++ {
		check(string([]byte{byte(b)}))
		check("x" + string([]byte{byte(b)}) + "y")
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("a\"\\<>&\n\x00\x7f\xe2\x80\xa8\xa9\xff\xc3\xa9 é")
	for range 5000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		check(string(b))
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	f64 := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, -0.25, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.2345e21,
		123456789012345678, math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 1e-9, 5e-324, 1.7976931348623157e308}
	f32 := []float32{0, 1, -1, 0.1, 1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 3.4e38, math.MaxFloat32, math.SmallestNonzeroFloat32, 16777217}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		f64 = append(f64, math.Float64frombits(r.Uint64()))
		f32 = append(f32, math.Float32frombits(r.Uint32()))
	}
	for _, f := range f64 {
		got, ok := AppendFloat(nil, f, 64)
		if !isFinite(f) {
			if ok || got != nil {
				t.Errorf("AppendFloat(%v, 64) = %s, %v; want nothing", f, got, ok)
			}
			continue
		}
		if want := marshal(t, f); !ok || !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 64) = %s, json.Marshal = %s", f, got, want)
		}
	}
	for _, f := range f32 {
		got, ok := AppendFloat(nil, float64(f), 32)
		if !isFinite(float64(f)) {
			if ok || got != nil {
				t.Errorf("AppendFloat(%v, 32) = %s, %v; want nothing", f, got, ok)
			}
			continue
		}
		if want := marshal(t, f); !ok || !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 32) = %s, json.Marshal = %s", f, got, want)
		}
	}
	// NaN and infinities are refused, as json.Marshal refuses them.
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(f); err == nil {
			t.Fatalf("json.Marshal(%v) succeeded", f)
		}
	}
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func TestValidNumberMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12.50", "1234.56", "1e5", "1E+5", "1.5e-3", "01", "-", "", ".5", "5.",
		"1e", "1e+", "+1", "0x10", "1.2.3", "NaN", "Infinity", "12345678901234567890123456789012345678", "1.23E+5", "-1.0E-3"} {
		_, err := json.Marshal(json.Number(s))
		if want := err == nil && s != ""; ValidNumber(s) != want {
			t.Errorf("ValidNumber(%q) = %v, json.Marshal accepts it: %v", s, !want, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), marshal(t, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, json.Marshal = %s", s, got, want)
		}
	})
}
