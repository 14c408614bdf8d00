package hints

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// Soundness: the filter may keep too much, never too little. For sample
// rows, whenever a reference evaluation of a SQL hint (Kleene three-valued
// logic, with anything it cannot judge as UNKNOWN) is TRUE, the converted
// Iceberg filter must accept the row. This checks the AND/OR/NOT widening
// and the time-zone slack; leaf literal parsing has its own table tests.

type row []any

func (r row) Size() int        { return len(r) }
func (r row) Get(i int) any    { return r[i] }
func (r row) Set(i int, v any) { r[i] = v }

func micros(s string) iceberg.Timestamp {
	tm, _ := time.Parse(time.RFC3339Nano, s)
	return iceberg.Timestamp(tm.UnixMicro())
}

func day(s string) iceberg.Date {
	tm, _ := time.Parse("2006-01-02", s)
	return iceberg.Date(tm.Unix() / 86400)
}

func dec(cents int64) iceberg.Decimal {
	return iceberg.Decimal{Val: decimal128.FromI64(cents), Scale: 2}
}

// Positions follow testSchema.
func sampleRows() []row {
	return []row{
		{int32(25), int64(5), "it's", 1.5, float32(0.1), dec(1250), day("2021-04-29"),
			micros("2022-01-01T00:00:00Z"), micros("2022-01-01T00:00:00Z"), true, row{"Paris"}, nil, int32(1),
			iceberg.TimestampNano(1640995200000000001), nil},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, row{nil}, nil, int32(0), nil, nil},
		{int32(-5), int64(9000000000), "foo", 1000.0, float32(0.25), dec(150), day("2021-04-30"),
			micros("2021-12-31T20:00:00Z"), micros("2022-01-01T18:00:00Z"), false, row{"x"}, nil, int32(123),
			iceberg.TimestampNano(0), nil},
		{int32(123), int64(-1), "a", 0.1, float32(0.5), dec(-1), day("1969-12-31"),
			micros("2022-01-01T17:59:59Z"), micros("2021-12-31T06:00:00Z"), true, row{"Paris"}, nil, int32(7),
			iceberg.TimestampNano(1), nil},
	}
}

type tri int // 0 false, 1 unknown, 2 true

// refSQL evaluates a parsed hint on a row the way a SQL engine would, where
// it can (zone-less timestamps read as UTC: one possible client zone).
func refSQL(t testing.TB, s *iceberg.Schema, n *snode, r row) tri {
	switch n.op {
	case "and", "or":
		out := tri(2)
		if n.op == "or" {
			out = 0
		}
		for _, k := range n.kids {
			v := refSQL(t, s, k, r)
			if n.op == "and" {
				out = min(out, v)
			} else {
				out = max(out, v)
			}
		}
		return out
	case "not":
		return 2 - refSQL(t, s, n.kids[0], r)
	}
	c := &conv{s: s, utc: true}
	l, rr, op := n.l, n.r, n.cmp
	if n.op == "cmp" && !l.isCol {
		l, rr, op = rr, l, flip(op)
	}
	if !l.isCol || rr.isCol && n.op == "cmp" {
		return 1
	}
	isNull := c.isNull(l.col, kAny, false)
	if !isNull.exact {
		return 1
	}
	null := evalOn(t, s, isNull.e, r)
	switch n.op {
	case "isnull", "notnull":
		if null == (n.op == "isnull") {
			return 2
		}
		return 0
	}
	if null || rr.null {
		return 1
	}
	leaf := c.compare(op, l.col, kAny, &rr.raw, rr.k)
	if !leaf.exact {
		return 1
	}
	if evalOn(t, s, leaf.e, r) {
		return 2
	}
	return 0
}

func evalOn(t testing.TB, s *iceberg.Schema, e iceberg.BooleanExpression, r row) bool {
	t.Helper()
	ev, err := iceberg.ExpressionEvaluator(s, e, true)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	ok, err := ev(r)
	if err != nil {
		t.Fatalf("%s on %v: %v", e, r, err)
	}
	return ok
}

func checkSound(t testing.TB, s *iceberg.Schema, hints []string) {
	t.Helper()
	got, _ := SQL(hints, s)
	for _, r := range sampleRows() {
		want := tri(2)
		for _, h := range hints {
			if n, err := parseSQL(h); err == nil && len(h) <= maxSQLBytes {
				want = min(want, refSQL(t, s, n, r))
			} else {
				want = min(want, 1)
			}
		}
		if want == 2 && !evalOn(t, s, got, r) {
			t.Fatalf("hints %q match row %v but filter %s rejects it", hints, r, got)
		}
	}
}

func TestSoundness(t *testing.T) {
	s := testSchema()
	for _, h := range []string{
		"id = 25", "NOT (id = 25)", "NOT (id <> 25)", "id < 30 AND name = 'it''s'",
		"NOT (name = 'x' OR nope = 1)", "NOT (id IS NULL)", "NOT (id = NULL)", "id = NULL OR id = 25",
		"NOT (price > 1.4 AND ratio = 0.1F)", "ratio = 0.1", "NOT (ratio = 0.1)",
		"ts < TIMESTAMP '2022-01-01 00:00:00'", "ts = '2022-01-01 00:00:00'", "NOT (ts >= '2022-01-01 00:00:00')",
		"ts_ntz > TIMESTAMP '2021-12-31T12:00:00Z'", "ts_ntz <= '2022-01-01T00:00:00+02:00'",
		"hireDate = DATE '2021-04-29' OR NOT (hireDate >= '2021-04-30')", "amount > 12.49 AND NOT (amount <> 12.5)",
		"addr.city = 'Paris' AND tsns > TIMESTAMP '2022-01-01T00:00:00Z'", "NOT (flag = true) OR big = 5L",
		"NOT NOT (id = 25)", "NOT (id = 25 AND id = 'abc')", "NOT (req IS NULL)",
	} {
		checkSound(t, s, strings.Split(h, ";"))
	}
}
