package hints

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

func testSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "big", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "price", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "ratio", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 6, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 7, Name: "hireDate", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 8, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 9, Name: "ts_ntz", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 10, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 11, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 12, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 13, Name: "tags", Type: &iceberg.ListType{
			ElementID: 14, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}},
		iceberg.NestedField{ID: 15, Name: "req", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 16, Name: "tsns", Type: iceberg.PrimitiveTypes.TimestampTzNs},
		iceberg.NestedField{ID: 17, Name: "u", Type: iceberg.PrimitiveTypes.Unknown},
	)
}

// Shorthands for JSON leaves.
func col(name, vt string) string {
	return `{"op":"column","name":"` + name + `","valueType":"` + vt + `"}`
}
func lit(v, vt string) string { return `{"op":"literal","value":"` + v + `","valueType":"` + vt + `"}` }
func op(o string, kids ...string) string {
	return `{"op":"` + o + `","children":[` + strings.Join(kids, ",") + `]}`
}

const (
	eqHire = `Equal(term=Reference(name='hireDate'), literal=2021-04-29)`
	ltID   = `LessThan(term=Reference(name='id'), literal=25)`
)

func mustBind(t testing.TB, s *iceberg.Schema, e iceberg.BooleanExpression) {
	t.Helper()
	if _, err := iceberg.BindExpr(s, e, true); err != nil {
		t.Fatalf("%s does not bind: %v", e, err)
	}
}

func TestJSONGood(t *testing.T) {
	s := testSchema()
	for _, tc := range []struct{ name, in, want string }{
		{"spec equal", op("equal", col("hireDate", "date"), lit("2021-04-29", "date")), eqHire},
		{"spec and", op("and",
			op("equal", col("hireDate", "date"), lit("2021-04-29", "date")),
			op("lessThan", col("id", "int"), lit("25", "int"))),
			"And(left=" + eqHire + ", right=" + ltID + ")"},
		{"spec not null, trailing comma", `{"op":"not","children":[{"op":"isNull","children":[
			{"op":"column","name":"id","valueType":"int"},]}]}`,
			`Not(child=IsNull(term=Reference(name='id')))`},
		{"or", op("or", op("equal", col("name", "string"), lit("a", "string")),
			op("greaterThanOrEqual", col("name", "string"), lit("x", "string"))),
			`Or(left=Equal(term=Reference(name='name'), literal=a), right=GreaterThanEqual(term=Reference(name='name'), literal=x))`},
		{"literal first flips", op("lessThan", lit("25", "int"), col("id", "int")),
			`GreaterThan(term=Reference(name='id'), literal=25)`},
		{"lessThanOrEqual long", op("lessThanOrEqual", col("big", "long"), lit("9000000000", "long")),
			`LessThanEqual(term=Reference(name='big'), literal=9000000000)`},
		{"int column as long", op("greaterThan", col("id", "long"), lit("7", "long")),
			`GreaterThan(term=Reference(name='id'), literal=7)`},
		{"double", op("lessThan", col("price", "double"), lit("1.5", "double")),
			`LessThan(term=Reference(name='price'), literal=1.5)`},
		{"float rounds as float", op("equal", col("ratio", "float"), lit("0.1", "float")),
			`Equal(term=Reference(name='ratio'), literal=0.1)`},
		{"float column exact double", op("equal", col("ratio", "double"), lit("0.5", "double")),
			`Equal(term=Reference(name='ratio'), literal=0.5)`},
		{"bool", op("equal", col("flag", "bool"), lit("true", "bool")),
			`Equal(term=Reference(name='flag'), literal=true)`},
		{"boolean alias", op("equal", col("flag", "boolean"), lit("false", "boolean")),
			`Equal(term=Reference(name='flag'), literal=false)`},
		{"timestamp utc", op("greaterThanOrEqual", col("ts", "timestamp"), lit("2022-01-01T00:00:00Z", "timestamp")),
			`GreaterThanEqual(term=Reference(name='ts'), literal=2022-01-01 00:00:00.000000)`},
		{"timestamp offset", op("lessThan", col("ts", "timestamp"), lit("2022-01-01T02:00:00.5+02:00", "timestamp")),
			`LessThan(term=Reference(name='ts'), literal=2022-01-01 00:00:00.500000)`},
		{"timestamp zone-less is UTC", op("lessThan", col("ts_ntz", "timestamp"), lit("2022-01-01 00:00:00", "timestamp")),
			`LessThan(term=Reference(name='ts_ntz'), literal=2022-01-01 00:00:00.000000)`},
		{"timestamp ns", op("equal", col("tsns", "timestamp"), lit("2022-01-01T00:00:00.000000001Z", "timestamp")),
			`Equal(term=Reference(name='tsns'), literal=2022-01-01 00:00:00.000000001)`},
		{"nested field", op("equal", col("addr.city", "string"), lit("Paris", "string")),
			`Equal(term=Reference(name='addr.city'), literal=Paris)`},
		{"case-insensitive name", op("equal", col("HIREDATE", "date"), lit("2021-04-29", "date")), eqHire},
		{"null literal is IsNull", op("equal", col("name", "string"), `{"op":"literal","value":null,"valueType":"string"}`),
			`IsNull(term=Reference(name='name'))`},
		{"numeric JSON value", op("equal", col("id", "int"), `{"op":"literal","value":25,"valueType":"int"}`),
			`Equal(term=Reference(name='id'), literal=25)`},
		{"nested and/or/not", op("and",
			op("or", op("isNull", col("name", "string")), op("equal", col("name", "string"), lit("b", "string"))),
			op("not", op("equal", col("flag", "bool"), lit("true", "bool")))),
			`And(left=Or(left=IsNull(term=Reference(name='name')), right=Equal(term=Reference(name='name'), literal=b)), right=Not(child=Equal(term=Reference(name='flag'), literal=true)))`},
		{"empty hint", "", `AlwaysTrue()`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSON(tc.in, s)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.String() != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			mustBind(t, s, got)
		})
	}
}

func TestSQLGood(t *testing.T) {
	s := testSchema()
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{"eq int", []string{"id = 123"}, `Equal(term=Reference(name='id'), literal=123)`},
		{"spec gt string", []string{"name > 'foo'"}, `GreaterThan(term=Reference(name='name'), literal=foo)`},
		{"spec lit < col", []string{"'foo' < name"}, `GreaterThan(term=Reference(name='name'), literal=foo)`},
		{"spec lit <= col", []string{"123 <= id"}, `GreaterThanEqual(term=Reference(name='id'), literal=123)`},
		{"spec >=", []string{"id >= 123"}, `GreaterThanEqual(term=Reference(name='id'), literal=123)`},
		{"spec <>", []string{"name <> 'foo'"}, `NotEqual(term=Reference(name='name'), literal=foo)`},
		{"!= and ==", []string{"id != 1", "id == 2"},
			`And(left=NotEqual(term=Reference(name='id'), literal=1), right=Equal(term=Reference(name='id'), literal=2))`},
		{"is null", []string{"name IS NULL"}, `IsNull(term=Reference(name='name'))`},
		{"is not null", []string{"name is not null"}, `NotNull(term=Reference(name='name'))`},
		{"list is ANDed", []string{"id > 1", "id < 10"},
			`And(left=GreaterThan(term=Reference(name='id'), literal=1), right=LessThan(term=Reference(name='id'), literal=10))`},
		{"precedence and parens", []string{"id = 1 OR id = 2 AND NOT (name = 'x')"},
			`Or(left=Equal(term=Reference(name='id'), literal=1), right=And(left=Equal(term=Reference(name='id'), literal=2), right=Not(child=Equal(term=Reference(name='name'), literal=x))))`},
		{"quote escape", []string{"name = 'it''s'"}, `Equal(term=Reference(name='name'), literal=it's)`},
		{"negative", []string{"id > -5"}, `GreaterThan(term=Reference(name='id'), literal=-5)`},
		{"spark long suffix", []string{"big = 5L"}, `Equal(term=Reference(name='big'), literal=5)`},
		{"decimal", []string{"amount >= 12.5"}, `GreaterThanEqual(term=Reference(name='amount'), literal=12.50)`},
		{"decimal BD", []string{"amount < 1.50BD"}, `LessThan(term=Reference(name='amount'), literal=1.50)`},
		{"double", []string{"price < 1e3"}, `LessThan(term=Reference(name='price'), literal=1000)`},
		{"float exact", []string{"ratio > 0.25"}, `GreaterThan(term=Reference(name='ratio'), literal=0.25)`},
		{"float F suffix", []string{"ratio = 0.1F"}, `Equal(term=Reference(name='ratio'), literal=0.1)`},
		{"bool", []string{"flag = TRUE"}, `Equal(term=Reference(name='flag'), literal=true)`},
		{"date literal", []string{"hireDate = DATE '2021-04-29'"}, eqHire},
		{"string to date", []string{"hireDate = '2021-04-29'"}, eqHire},
		{"column named date", []string{"`hireDate` >= date '2021-04-29'"},
			`GreaterThanEqual(term=Reference(name='hireDate'), literal=2021-04-29)`},
		{"timestamp with zone", []string{"ts < TIMESTAMP '2022-01-01T00:00:00Z'"},
			`LessThan(term=Reference(name='ts'), literal=2022-01-01 00:00:00.000000)`},
		{"timestamp ntz", []string{"ts_ntz >= TIMESTAMP '2022-01-01 00:00:00'"},
			`GreaterThanEqual(term=Reference(name='ts_ntz'), literal=2022-01-01 00:00:00.000000)`},
		{"zone-less timestamptz widened", []string{"ts < TIMESTAMP '2022-01-01 00:00:00'"},
			`LessThanEqual(term=Reference(name='ts'), literal=2022-01-01 18:00:00.000000)`},
		{"zone-less timestamptz eq widened", []string{"ts = '2022-01-01 00:00:00'"},
			`And(left=GreaterThanEqual(term=Reference(name='ts'), literal=2021-12-31 06:00:00.000000), right=LessThanEqual(term=Reference(name='ts'), literal=2022-01-01 18:00:00.000000))`},
		{"zoned literal vs timestamp ntz widened", []string{"ts_ntz > '2022-01-01T00:00:00Z'"},
			`GreaterThanEqual(term=Reference(name='ts_ntz'), literal=2021-12-31 06:00:00.000000)`},
		{"int column from quoted string", []string{"id = '5'"}, `Equal(term=Reference(name='id'), literal=5)`},
		{"backquoted", []string{"`name` = 'a'"}, `Equal(term=Reference(name='name'), literal=a)`},
		{"nested dotted", []string{"addr.city = 'Paris'"}, `Equal(term=Reference(name='addr.city'), literal=Paris)`},
		{"nested backquoted", []string{"`addr`.`city` = 'Paris'"}, `Equal(term=Reference(name='addr.city'), literal=Paris)`},
		{"col = NULL is IsNull", []string{"name = NULL"}, `IsNull(term=Reference(name='name'))`},
		{"case-insensitive keywords and names", []string{"ID = 1 and Name is Not Null"},
			`And(left=Equal(term=Reference(name='id'), literal=1), right=NotNull(term=Reference(name='name')))`},
		{"no hints", nil, `AlwaysTrue()`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SQL(tc.in, s)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.String() != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			mustBind(t, s, got)
		})
	}
}

func TestJSONBad(t *testing.T) {
	s := testSchema()
	deep := strings.Repeat(`{"op":"not","children":[`, 70) + op("isNull", col("id", "int")) + strings.Repeat(`]}`, 70)
	for _, tc := range []struct{ name, in, errPart string }{
		{"invalid JSON", `{"op":`, "ignored"},
		{"not an object", `[1,2]`, "ignored"},
		{"null", `null`, "null predicate"},
		{"empty object", `{}`, "unsupported op"},
		{"unknown op", op("like", col("name", "string"), lit("a%", "string")), "unsupported op"},
		{"leaf as root", col("flag", "bool"), "unsupported op"},
		{"equal one child", op("equal", col("id", "int")), "two children"},
		{"equal three children", op("equal", col("id", "int"), lit("1", "int"), lit("2", "int")), "two children"},
		{"and one child", op("and", op("isNull", col("id", "int"))), "at least two"},
		{"not two children", op("not", op("isNull", col("id", "int")), op("isNull", col("id", "int"))), "one child"},
		{"isNull on literal", op("isNull", lit("1", "int")), "column child"},
		{"missing column valueType", op("equal", `{"op":"column","name":"id"}`, lit("1", "int")), "unknown valueType"},
		{"missing literal valueType", op("equal", col("id", "int"), `{"op":"literal","value":"1"}`), "unknown valueType"},
		{"unknown valueType", op("equal", col("id", "int"), lit("1", "int128")), "unknown valueType"},
		{"missing value", op("equal", col("id", "int"), `{"op":"literal","valueType":"int"}`), "without value"},
		{"object value", op("equal", col("id", "int"), `{"op":"literal","value":{},"valueType":"int"}`), "not a string"},
		{"value does not parse", op("equal", col("id", "int"), lit("abc", "int")), "not a valid int"},
		{"int out of range", op("equal", col("id", "int"), lit("3000000000", "int")), "not a valid int"},
		{"bad date", op("equal", col("hireDate", "date"), lit("2021-02-30", "date")), "not a valid date"},
		{"bad timestamp", op("equal", col("ts", "timestamp"), lit("yesterday", "timestamp")), "not a timestamp"},
		{"sub-micro timestamp", op("lessThan", col("ts", "timestamp"), lit("2022-01-01T00:00:00.0000001Z", "timestamp")), "finer than"},
		{"NaN", op("lessThan", col("price", "double"), lit("NaN", "double")), "finite"},
		{"inexact float", op("lessThan", col("ratio", "double"), lit("0.1", "double")), "not exactly"},
		{"unknown column", op("equal", col("nope", "int"), lit("1", "int")), "unknown column"},
		{"struct column", op("isNull", col("addr", "string")), "not of a primitive type"},
		{"list element", op("equal", col("tags.element", "string"), lit("a", "string")), "does not bind"},
		{"unknown type column", op("isNull", col("u", "string")), "cannot be compared"},
		{"type mismatch column", op("equal", col("id", "string"), lit("1", "string")), "cannot be compared"},
		{"long column as int", op("equal", col("big", "int"), lit("1", "int")), "cannot be compared"},
		{"column/literal types differ", op("equal", col("id", "int"), lit("1", "long")), "literal is long"},
		{"column vs column", op("equal", col("id", "int"), col("req", "int")), "column-vs-literal"},
		{"lessThan null", op("lessThan", col("id", "int"), `{"op":"literal","value":null,"valueType":"int"}`), "null literal"},
		{"null child", `{"op":"and","children":[null,null]}`, "null child"},
		{"too deep", deep, "deeper than"},
		{"too long", op("equal", col("name", "string"), lit(strings.Repeat("x", maxJSONBytes), "string")), "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSON(tc.in, s)
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Fatalf("want error containing %q, got %v", tc.errPart, err)
			}
			if _, ok := got.(iceberg.AlwaysTrue); !ok {
				t.Fatalf("want AlwaysTrue, got %s", got)
			}
		})
	}
}

func TestSQLBad(t *testing.T) {
	s := testSchema()
	for _, tc := range []struct{ name, in, errPart string }{
		{"garbage", "SELECT * FROM t", "unexpected character"},
		{"garbage words", "hello world", "expected a comparison"},
		{"empty", "", "unexpected"},
		{"unterminated string", "name = 'abc", "unterminated"},
		{"unterminated ident", "`name = 'abc'", "unterminated"},
		{"backslash", `name = 'a\'b'`, "backslash"},
		{"double quotes", `name = "a"`, "unexpected character"},
		{"missing paren", "(id = 1", "missing )"},
		{"extra paren", "id = 1)", "unexpected"},
		{"dangling and", "id = 1 AND", "unexpected"},
		{"bad operator", "id <=> 1", "unexpected"},
		{"bad operator 2", "id =! 1", "unsupported operator"},
		{"like", "name LIKE 'a%'", "expected a comparison"},
		{"in list", "id IN (1, 2)", "unexpected character"},
		{"in one", "id IN (1)", "expected a comparison"},
		{"is without null", "id IS 5", "NULL"},
		{"bad number", "id = 12abc", "bad number"},
		{"unknown column", "nope = 1", "unknown column"},
		{"value does not parse", "id = 'abc'", "not a valid int"},
		{"fraction for int", "id < 1.5", "not a valid int"},
		{"number vs string column", "name = 5", "cannot be compared"},
		{"double for decimal", "amount = 1.5D", "cannot be compared"},
		{"too precise decimal", "amount = 1.234", "decimal places"},
		{"exponent decimal", "amount = 1e99999999", "cannot be compared"},
		{"inexact float", "ratio = 0.1", "not exactly"},
		{"date vs timestamp", "ts = DATE '2021-01-01'", "cannot be compared"},
		{"column vs column", "id = req", "column-vs-literal"},
		{"literal vs literal", "1 = 1", "column-vs-literal"},
		{"null lt", "id < NULL", "null literal"},
		{"zone-less timestamptz <>", "ts <> TIMESTAMP '2022-01-01 00:00:00'", "time zone"},
		{"zoned timestamp ntz <>", "ts_ntz <> TIMESTAMP '2022-01-01T00:00:00Z'", "time zone"},
		{"quoted string vs long", "big = '5'", "cannot be compared"},
		{"quoted string vs decimal", "amount = '5'", "cannot be compared"},
		{"too deep", strings.Repeat("(", 70) + "id = 1" + strings.Repeat(")", 70), "deeper than"},
		{"not not deep", strings.Repeat("NOT ", 70) + "id = 1", "deeper than"},
		{"too long", "name = '" + strings.Repeat("x", maxSQLBytes) + "'", "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SQL([]string{tc.in}, s)
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Fatalf("want error containing %q, got %v", tc.errPart, err)
			}
			if _, ok := got.(iceberg.AlwaysTrue); !ok {
				t.Fatalf("want AlwaysTrue, got %s", got)
			}
		})
	}
}

func TestPartialWidening(t *testing.T) {
	s := testSchema()
	bad := op("equal", col("nope", "int"), lit("1", "int"))
	good := op("equal", col("hireDate", "date"), lit("2021-04-29", "date"))
	for _, tc := range []struct{ name, in, want string }{
		{"AND keeps the good half", op("and", bad, good), eqHire},
		{"AND keeps the good half (other side)", op("and", good, bad), eqHire},
		{"OR with a bad half", op("or", good, bad), "AlwaysTrue()"},
		{"NOT with a bad child", op("not", bad), "AlwaysTrue()"},
		{"NOT over partly widened AND", op("not", op("and", good, bad)), "AlwaysTrue()"},
		{"AND keeps good NOT, drops bad NOT", op("and", op("not", good), op("not", op("and", good, bad))),
			"Not(child=" + eqHire + ")"},
		{"OR inside AND widens only that branch", op("and", good, op("or", good, bad)), eqHire},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSON(tc.in, s)
			if err == nil {
				t.Fatal("want an error saying what was ignored")
			}
			if got.String() != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			mustBind(t, s, got)
		})
	}

	// SQL: a hint that does not parse is dropped, the others stay.
	got, err := SQL([]string{"id = 'x", "hireDate = DATE '2021-04-29'", "nope = 1"}, s)
	if err == nil || got.String() != eqHire {
		t.Fatalf("got %s, %v", got, err)
	}
	for _, in := range []string{"hireDate = '2021-04-29' OR nope = 1", "NOT (nope = 1)", "NOT (id = 1 AND nope = 1)"} {
		got, err := SQL([]string{in}, s)
		if err == nil || got.String() != "AlwaysTrue()" {
			t.Fatalf("%s: got %s, %v", in, got, err)
		}
	}
	// Zone-less timestamptz comparisons are widened, so NOT over them is dropped.
	got, err = SQL([]string{"NOT (ts < '2022-01-01 00:00:00')", "id = 1"}, s)
	if err == nil || got.String() != `Equal(term=Reference(name='id'), literal=1)` {
		t.Fatalf("got %s, %v", got, err)
	}
}

// Binding an IsNull on a required column folds to AlwaysFalse; the filter
// must still bind and be returned as written.
func TestRequiredColumn(t *testing.T) {
	s := testSchema()
	got, err := SQL([]string{"req IS NULL"}, s)
	if err != nil || got.String() != `IsNull(term=Reference(name='req'))` {
		t.Fatalf("got %s, %v", got, err)
	}
	b, err := iceberg.BindExpr(s, got, true)
	if err != nil || b.String() != "AlwaysFalse()" {
		t.Fatalf("bound %v, %v", b, err)
	}
}

func TestNilSchema(t *testing.T) {
	if e, err := JSON(op("isNull", col("id", "int")), nil); err == nil || e.String() != "AlwaysTrue()" {
		t.Fatalf("got %s, %v", e, err)
	}
	if e, err := SQL([]string{"id = 1"}, nil); err == nil || e.String() != "AlwaysTrue()" {
		t.Fatalf("got %s, %v", e, err)
	}
}

func TestLeafLimit(t *testing.T) {
	s := testSchema()
	hs := make([]string, maxLeaves+5)
	for i := range hs {
		hs[i] = "id > 1"
	}
	got, err := SQL(hs, s)
	if err == nil || !strings.Contains(err.Error(), "comparisons") {
		t.Fatalf("want leaf-limit error, got %v", err)
	}
	mustBind(t, s, got)
}
