// Package hints turns Delta Sharing query hints (predicateHints and
// jsonPredicateHints) into an Iceberg row filter used to prune data files.
//
// Hints are best effort: the protocol lets the server return files that do
// not match, and the client always re-applies its filter. Correctness here
// therefore means one thing only: the filter must never exclude a file that
// could hold a matching row. Whatever cannot be translated exactly is widened
// towards AlwaysTrue instead of failing the request, and the returned error
// only says what was ignored (for the log).
package hints

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

// Limits against hostile input. The hints come straight from the request
// body; these bound the work and the recursion a single request can cause.
const (
	maxJSONBytes = 64 << 10 // one jsonPredicateHints document
	maxSQLBytes  = 64 << 10 // all predicateHints together
	maxDepth     = 64       // predicate nesting (JSON ops, SQL parens / NOT)
	maxLeaves    = 256      // comparisons kept; later ones are widened
	maxErrors    = 16       // problems reported, so log lines stay bounded
	maxSnippet   = 80       // bytes of user input quoted in an error
)

// tzSlack widens SQL timestamp comparisons that depend on the client's
// session time zone (see compareTime): offsets stay within ±18h.
const tzSlack = 18 * time.Hour

// kind is what a hint says a value is. It decides which Iceberg column types
// the value may be compared with (accepts) and how its text is parsed.
type kind int

const (
	kAny       kind = iota // SQL column reference: no declared type
	kString                // JSON "string"
	kSQLString             // SQL '...': engines coerce it to the column's type
	kNumber                // SQL integer/decimal literal (5, 1.5, 5L, 1.5BD)
	kBool                  // JSON "bool"/"boolean", SQL TRUE/FALSE
	kInt                   // JSON "int"
	kLong                  // JSON "long"
	kFloat                 // JSON "float", SQL 1.5F
	kDouble                // JSON "double", SQL 1.5D / 1e3
	kDate                  // JSON "date", SQL DATE '...'
	kTimestamp             // JSON "timestamp", SQL TIMESTAMP '...'
)

// accepts reports whether a value of kind k may be compared with a column of
// type t without changing the comparison's outcome. For JSON this also
// checks the column's own valueType, which the protocol says the column is
// cast to: only casts that are lossless for t are allowed (int column as
// long: yes; long column as int, or any number as string: no).
func accepts(t iceberg.Type, k kind) bool {
	if k == kAny {
		return true
	}
	is := func(ks ...kind) bool {
		for _, x := range ks {
			if k == x {
				return true
			}
		}
		return false
	}
	switch t.(type) {
	case iceberg.StringType:
		return is(kString, kSQLString)
	case iceberg.BooleanType:
		return is(kBool, kSQLString)
	case iceberg.Int32Type:
		return is(kInt, kLong, kNumber, kSQLString)
	case iceberg.Int64Type:
		// No quoted strings for long and decimal: engines may compare a
		// string with them as doubles, which is not exact at this width.
		return is(kLong, kNumber)
	case iceberg.Float32Type:
		return is(kFloat, kDouble, kNumber, kSQLString)
	case iceberg.Float64Type:
		return is(kDouble, kNumber, kSQLString)
	case iceberg.DecimalType:
		return is(kNumber)
	case iceberg.DateType:
		return is(kDate, kSQLString)
	case iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return is(kTimestamp, kSQLString)
	}
	return false
}

// res is a translated (sub)predicate. exact=false means e is a widened
// superset of the hint's meaning: fine on its own, but NOT(e) would then
// prune matching files, so a NOT over an inexact child becomes AlwaysTrue.
type res struct {
	e     iceberg.BooleanExpression
	exact bool
}

// conv holds one conversion's schema and what it had to ignore.
type conv struct {
	s      *iceberg.Schema
	utc    bool // zone-less timestamps are UTC (JSON spec) rather than unknown-zone (SQL)
	leaves int
	errs   []error
}

func (c *conv) note(format string, args ...any) {
	if len(c.errs) < maxErrors {
		c.errs = append(c.errs, fmt.Errorf(format, args...))
	} else if len(c.errs) == maxErrors {
		c.errs = append(c.errs, errors.New("further problems not reported"))
	}
}

// fail records why a part was ignored and widens it.
func (c *conv) fail(format string, args ...any) res {
	c.note(format, args...)
	return res{iceberg.AlwaysTrue{}, false}
}

// and drops widened children (NewAnd folds AlwaysTrue away).
func and(rs []res) res {
	out := res{iceberg.AlwaysTrue{}, true}
	for _, r := range rs {
		out.e = iceberg.NewAnd(out.e, r.e)
		out.exact = out.exact && r.exact
	}
	return out
}

// or becomes AlwaysTrue as soon as one child was widened to AlwaysTrue
// (NewOr folds it). rs must not be empty: an empty OR is AlwaysFalse.
func or(rs []res) res {
	out := res{iceberg.AlwaysFalse{}, true}
	for _, r := range rs {
		out.e = iceberg.NewOr(out.e, r.e)
		out.exact = out.exact && r.exact
	}
	return out
}

func (c *conv) not(r res) res {
	if !r.exact {
		return c.fail("NOT over a partly ignored predicate is dropped")
	}
	return res{iceberg.NewNot(r.e), true}
}

// leaf keeps e only if it binds against the schema, so a bad type never
// reaches the scan.
func (c *conv) leaf(e iceberg.BooleanExpression, exact bool) res {
	if c.leaves >= maxLeaves {
		return c.fail("more than %d comparisons: the rest are ignored", maxLeaves)
	}
	if _, err := iceberg.BindExpr(c.s, e, true); err != nil {
		return c.fail("%s does not bind: %s", quote(e.String()), clip(err.Error()))
	}
	c.leaves++
	return res{e, exact}
}

// column resolves a hint's column name (exact first, then case-insensitive,
// as Delta column names are case-insensitive) to the canonical dotted name
// that binds case-sensitively.
func (c *conv) column(name string, k kind) (iceberg.Reference, iceberg.Type, error) {
	f, ok := c.s.FindFieldByName(name)
	if !ok {
		f, ok = c.s.FindFieldByNameCaseInsensitive(name)
	}
	if !ok {
		return "", nil, fmt.Errorf("unknown column %s", quote(name))
	}
	if _, prim := f.Type.(iceberg.PrimitiveType); !prim {
		return "", nil, fmt.Errorf("column %s is not of a primitive type", quote(name))
	}
	full, ok := c.s.FindColumnName(f.ID)
	if !ok {
		return "", nil, fmt.Errorf("column %s has no name in the schema", quote(name))
	}
	if !accepts(f.Type, k) {
		return "", nil, fmt.Errorf("column %s of type %s cannot be compared as %s", quote(name), f.Type, k)
	}
	return iceberg.Reference(full), f.Type, nil
}

func (c *conv) isNull(name string, k kind, negate bool) res {
	ref, _, err := c.column(name, k)
	if err != nil {
		return c.fail("%v", err)
	}
	if negate {
		return c.leaf(iceberg.NotNull(ref), true)
	}
	return c.leaf(iceberg.IsNull(ref), true)
}

// compare translates `column op literal`; raw == nil is a null literal.
// ck is the column's declared kind (kAny in SQL), lk the literal's.
func (c *conv) compare(op iceberg.Operation, name string, ck kind, raw *string, lk kind) res {
	ref, typ, err := c.column(name, ck)
	if err != nil {
		return c.fail("%v", err)
	}
	if raw == nil {
		// SQL: `col = NULL` is never true. Kleene logic is monotone, so
		// replacing an always-unknown atom by any two-valued one is safe in
		// every context, NOT included; IsNull is also exactly right for
		// null-safe equality, whichever the client meant.
		switch op {
		case iceberg.OpEQ:
			return c.leaf(iceberg.IsNull(ref), true)
		case iceberg.OpNEQ:
			return c.leaf(iceberg.NotNull(ref), true)
		}
		return c.fail("%s with a null literal is ignored", op)
	}
	if !accepts(typ, lk) {
		return c.fail("column %s of type %s cannot be compared with %s %s", quote(name), typ, lk, quote(*raw))
	}
	if isTimestamp(typ) {
		return c.compareTime(op, ref, typ, *raw)
	}
	lit, err := literal(typ, lk, *raw)
	if err != nil {
		return c.fail("column %s: %v", quote(name), err)
	}
	return c.leaf(iceberg.LiteralPredicate(op, ref, lit), true)
}

// compareTime handles timestamp columns, where some SQL literals are only
// known to within ±tzSlack; those comparisons are widened (and inexact).
func (c *conv) compareTime(op iceberg.Operation, ref iceberg.Reference, typ iceberg.Type, raw string) res {
	tm, zoneless, err := parseTime(raw)
	if err != nil {
		return c.fail("column %s: %v", quote(string(ref)), err)
	}
	// In SQL, a zone-less literal against a timestamptz column, or a zoned
	// one against a timestamp (no zone) column, is interpreted in the
	// client's session time zone, which we do not know.
	if c.utc || zoneless != isTZ(typ) {
		lit, err := timeLiteral(typ, tm)
		if err != nil {
			return c.fail("column %s: %v", quote(string(ref)), err)
		}
		return c.leaf(iceberg.LiteralPredicate(op, ref, lit), true)
	}
	lo, err1 := timeLiteral(typ, tm.Add(-tzSlack))
	hi, err2 := timeLiteral(typ, tm.Add(tzSlack))
	if err := errors.Join(err1, err2); err != nil {
		return c.fail("column %s: %v", quote(string(ref)), err)
	}
	var e iceberg.BooleanExpression
	switch op {
	case iceberg.OpLT, iceberg.OpLTEQ:
		e = iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, hi)
	case iceberg.OpGT, iceberg.OpGTEQ:
		e = iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lo)
	case iceberg.OpEQ:
		e = iceberg.NewAnd(iceberg.LiteralPredicate(iceberg.OpGTEQ, ref, lo),
			iceberg.LiteralPredicate(iceberg.OpLTEQ, ref, hi))
	default:
		return c.fail("%s on timestamp column %s depends on the client's time zone: ignored", op, quote(string(ref)))
	}
	return c.leaf(e, false)
}

// finish binds the whole result once more (belt and braces) and reports.
func (c *conv) finish(r res) (iceberg.BooleanExpression, error) {
	e := r.e
	if _, err := iceberg.BindExpr(c.s, e, true); err != nil {
		c.note("filter does not bind, ignored: %v", err)
		e = iceberg.AlwaysTrue{}
	}
	if err := errors.Join(c.errs...); err != nil {
		return e, fmt.Errorf("hints partly ignored: %w", err)
	}
	return e, nil
}

// guard turns a panic in the conversion (a bug, or a bug in iceberg-go)
// into "no filter": losing pruning is acceptable, failing the request is not.
func guard(e *iceberg.BooleanExpression, err *error) {
	if p := recover(); p != nil {
		*e, *err = iceberg.AlwaysTrue{}, fmt.Errorf("hints ignored: internal error: %v", p)
	}
}

// flip mirrors an operator for `literal op column`.
func flip(op iceberg.Operation) iceberg.Operation {
	switch op {
	case iceberg.OpLT:
		return iceberg.OpGT
	case iceberg.OpLTEQ:
		return iceberg.OpGTEQ
	case iceberg.OpGT:
		return iceberg.OpLT
	case iceberg.OpGTEQ:
		return iceberg.OpLTEQ
	}
	return op // = and <> are symmetric
}

// literal parses a hint value for a non-timestamp column of type t. It only
// returns literals that compare exactly like the hint meant: out-of-range,
// inexact or non-finite values are errors (and so widened).
func literal(t iceberg.Type, k kind, raw string) (iceberg.Literal, error) {
	bad := func(err error) (iceberg.Literal, error) {
		return nil, fmt.Errorf("value %s is not a valid %s: %s", quote(raw), t, clip(err.Error()))
	}
	switch t := t.(type) {
	case iceberg.StringType:
		return iceberg.StringLiteral(raw), nil
	case iceberg.BooleanType:
		switch strings.ToLower(raw) {
		case "true":
			return iceberg.BoolLiteral(true), nil
		case "false":
			return iceberg.BoolLiteral(false), nil
		}
		return bad(errors.New("want true or false"))
	case iceberg.Int32Type:
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil {
			return bad(err)
		}
		return iceberg.Int32Literal(n), nil
	case iceberg.Int64Type:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return bad(err)
		}
		return iceberg.Int64Literal(n), nil
	case iceberg.Float32Type:
		// A "float" hint means the client compares as float: round like it.
		// Anything else must be exactly a float32, or rounding could move
		// the boundary past a matching value.
		bits := 64
		if k == kFloat {
			bits = 32
		}
		f, err := parseFloat(raw, bits)
		if err != nil {
			return bad(err)
		}
		if float64(float32(f)) != f {
			return bad(errors.New("not exactly representable as float"))
		}
		return iceberg.Float32Literal(float32(f)), nil
	case iceberg.Float64Type:
		f, err := parseFloat(raw, 64)
		if err != nil {
			return bad(err)
		}
		return iceberg.Float64Literal(f), nil
	case iceberg.DecimalType:
		norm, err := exactDecimal(raw, t.Precision(), t.Scale())
		if err != nil {
			return bad(err)
		}
		lit, err := iceberg.StringLiteral(norm).To(t)
		if err != nil {
			return bad(err)
		}
		return lit, nil
	case iceberg.DateType:
		tm, err := time.Parse("2006-01-02", raw)
		if err != nil {
			return bad(err)
		}
		return iceberg.DateLiteral(iceberg.Date(tm.Unix() / 86400)), nil
	}
	return nil, fmt.Errorf("type %s is not supported", t)
}

func parseFloat(raw string, bits int) (float64, error) {
	f, err := strconv.ParseFloat(raw, bits)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a finite number")
	}
	return f, nil
}

// exactDecimal accepts plain decimal text ([+-]digits[.digits], no exponent,
// so no huge expansion) that fits precision and scale without rounding, and
// returns it normalised for the decimal parser.
func exactDecimal(raw string, precision, scale int) (string, error) {
	s, sign := raw, ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s, sign = s[1:], s[:1]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return "", errors.New("no digits")
	}
	for _, r := range intPart + frac {
		if r < '0' || r > '9' {
			return "", errors.New("not a plain decimal number")
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > scale {
		return "", fmt.Errorf("more than %d decimal places", scale)
	}
	if len(intPart) > precision-scale {
		return "", fmt.Errorf("more than %d integer digits", precision-scale)
	}
	if intPart == "" {
		intPart = "0"
	}
	if sign == "+" {
		sign = ""
	}
	if frac == "" {
		return sign + intPart, nil
	}
	return sign + intPart + "." + frac, nil
}

func isTimestamp(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return true
	}
	return false
}

func isTZ(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.TimestampTzType, iceberg.TimestampTzNsType:
		return true
	}
	return false
}

// timestampLayouts are the timestamp spellings the protocol and its
// OpenAPI seed show: ISO 8601 (2022-01-01T00:00:00Z, any offset) and the
// SQL form with a space (yyyy-[m]m-[d]d hh:mm:ss[.f...]), each with or
// without a zone (zoneless=true), fractions to nanoseconds.
var timestampLayouts = []struct {
	layout   string
	zoneless bool
}{
	{"2006-1-2T15:04:05.999999999Z07:00", false},
	{"2006-1-2 15:04:05.999999999Z07:00", false},
	{"2006-1-2T15:04:05.999999999", true},
	{"2006-1-2 15:04:05.999999999", true},
}

// ParseTimestamp reads a timestamp in one of the protocol's spellings, in
// UTC; zoneless reports that it named no zone (and was read as UTC, the
// protocol's zone for timestamps).
func ParseTimestamp(raw string) (t time.Time, zoneless bool, ok bool) {
	for _, l := range timestampLayouts {
		if tm, err := time.Parse(l.layout, raw); err == nil {
			return tm.UTC(), l.zoneless, true
		}
	}
	return time.Time{}, false, false
}

// parseTime reads a hint's timestamp value: a timestamp, or a bare date
// (midnight, zoneless).
func parseTime(raw string) (time.Time, bool, error) {
	if tm, zoneless, ok := ParseTimestamp(raw); ok {
		return tm, zoneless, nil
	}
	if tm, err := time.Parse("2006-1-2", raw); err == nil {
		return tm, true, nil
	}
	return time.Time{}, false, fmt.Errorf("value %s is not a timestamp", quote(raw))
}

// timeLiteral builds the literal of a timestamp column's precision; a value
// finer than the column (or out of its range) cannot be compared exactly.
func timeLiteral(t iceberg.Type, tm time.Time) (iceberg.Literal, error) {
	switch t.(type) {
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if tm.Year() < 1678 || tm.Year() > 2261 {
			return nil, fmt.Errorf("timestamp %s is out of nanosecond range", tm.Format(time.RFC3339Nano))
		}
		return iceberg.TimestampNsLiteral(iceberg.TimestampNano(tm.UnixNano())), nil
	}
	if tm.Nanosecond()%1000 != 0 {
		return nil, fmt.Errorf("timestamp %s is finer than microseconds", tm.Format(time.RFC3339Nano))
	}
	return iceberg.TimestampLiteral(iceberg.Timestamp(tm.UnixMicro())), nil
}

// quote shows user input in an error, cut short so logs stay bounded.
func quote(s string) string { return strconv.Quote(clip(s)) }

// clip cuts text that may echo user input (including library errors).
func clip(s string) string {
	if len(s) > 2*maxSnippet {
		return s[:2*maxSnippet] + "..."
	}
	return s
}

func (k kind) String() string {
	return [...]string{"any", "string", "string literal", "number", "bool", "int",
		"long", "float", "double", "date", "timestamp"}[k]
}
