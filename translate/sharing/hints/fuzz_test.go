package hints

import (
	"strings"
	"testing"
)

// The fuzzers check the promises callers rely on: no panic (guard would turn
// one into an "internal error"), whatever comes back binds, and (SQL) the
// filter never rejects a sample row the hints match (soundness_test.go).

func FuzzJSON(f *testing.F) {
	f.Add(op("equal", col("hireDate", "date"), lit("2021-04-29", "date")))
	f.Add(op("not", op("isNull", col("id", "int"))))
	s := testSchema()
	f.Fuzz(func(t *testing.T, hint string) {
		e, err := JSON(hint, s)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("panic: %v", err)
		}
		mustBind(t, s, e)
	})
}

func FuzzSQL(f *testing.F) {
	f.Add("id = 1 AND name <> 'x'")
	f.Add("ts < TIMESTAMP '2022-01-01 00:00:00'")
	s := testSchema()
	f.Fuzz(func(t *testing.T, hint string) {
		// Also split on ';' so the fuzzer explores lists of hints.
		hints := strings.Split(hint, ";")
		e, err := SQL(hints, s)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("panic: %v", err)
		}
		mustBind(t, s, e)
		checkSound(t, s, hints)
	})
}
