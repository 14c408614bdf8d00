package hints

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// SQL converts predicateHints (each a SQL boolean expression; the list is
// ANDed) into an Iceberg filter over schema s, with the same best-effort
// widening as JSON. A hint that does not parse is dropped as a whole; the
// others still apply.
//
// Grammar (keywords case-insensitive):
//
//	expr    := and { OR and }
//	and     := not { AND not }
//	not     := NOT not | '(' expr ')' | operand cmp operand | operand IS [NOT] NULL
//	cmp     := = | == | <> | != | < | <= | > | >=
//	operand := ident { '.' ident } | `quoted ident` | 'string' | number | -number
//	         | TRUE | FALSE | NULL | DATE 'yyyy-mm-dd' | TIMESTAMP '...'
//
// Numbers may carry Spark's suffixes (5L, 5S, 5Y, 1.5BD, 1.5D, 1.5F).
// Strings escape a single quote by doubling it. A backslash in a string is
// rejected: Spark reads it as an escape, standard SQL does not, and the two
// readings can even split the hint into different tokens.
func SQL(hints []string, s *iceberg.Schema) (expr iceberg.BooleanExpression, err error) {
	defer guard(&expr, &err)
	if len(hints) == 0 {
		return iceberg.AlwaysTrue{}, nil
	}
	if s == nil {
		return iceberg.AlwaysTrue{}, errors.New("hints ignored: no schema")
	}
	total := 0
	for _, h := range hints {
		total += len(h)
	}
	if total > maxSQLBytes {
		return iceberg.AlwaysTrue{}, fmt.Errorf("predicateHints ignored: longer than %d bytes", maxSQLBytes)
	}
	c := &conv{s: s}
	rs := make([]res, 0, len(hints))
	for i, h := range hints {
		n, err := parseSQL(h)
		if err != nil {
			rs = append(rs, c.fail("predicateHints[%d] %s ignored: %v", i, quote(h), err))
			continue
		}
		rs = append(rs, c.sql(n))
	}
	return c.finish(and(rs))
}

// snode is a parsed SQL predicate.
type snode struct {
	op   string // "and", "or", "not", "cmp", "isnull", "notnull"
	kids []*snode
	cmp  iceberg.Operation
	l, r operand
}

type operand struct {
	col         string // column name, when isCol
	isCol, null bool
	raw         string // literal text
	k           kind
}

func (c *conv) sql(n *snode) res {
	switch n.op {
	case "and", "or":
		rs := make([]res, len(n.kids))
		for i, k := range n.kids {
			rs[i] = c.sql(k)
		}
		if n.op == "and" {
			return and(rs)
		}
		return or(rs)
	case "not":
		return c.not(c.sql(n.kids[0]))
	case "isnull", "notnull":
		if !n.l.isCol {
			return c.fail("IS NULL on a literal is ignored")
		}
		return c.isNull(n.l.col, kAny, n.op == "notnull")
	}
	l, r, op := n.l, n.r, n.cmp
	if !l.isCol {
		l, r, op = r, l, flip(op)
	}
	if !l.isCol || r.isCol {
		return c.fail("only column-vs-literal comparisons are supported")
	}
	var raw *string
	if !r.null {
		raw = &r.raw
	}
	return c.compare(op, l.col, kAny, raw, r.k)
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQIdent // `backquoted`
	tString
	tNumber
	tOp // comparison operator
	tPunct
)

type token struct {
	k tokKind
	s string // identifier / literal text / operator
	n kind   // number kind
}

func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		b := src[i]
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			i++
		case b == '(' || b == ')' || b == '.' && !(i+1 < len(src) && isDigit(src[i+1])):
			toks = append(toks, token{k: tPunct, s: src[i : i+1]})
			i++
		case b == '-':
			toks = append(toks, token{k: tPunct, s: "-"})
			i++
		case strings.IndexByte("=<>!", b) >= 0:
			j := i + 1
			for j < len(src) && j < i+2 && strings.IndexByte("=<>", src[j]) >= 0 {
				j++
			}
			op := src[i:j]
			if _, ok := sqlCompare[op]; !ok {
				return nil, fmt.Errorf("unsupported operator %s", quote(op))
			}
			toks = append(toks, token{k: tOp, s: op})
			i = j
		case b == '\'' || b == '`':
			s, j, err := quoted(src, i)
			if err != nil {
				return nil, err
			}
			k := tString
			if b == '`' {
				k = tQIdent
			}
			toks = append(toks, token{k: k, s: s})
			i = j
		case isDigit(b) || b == '.':
			t, j, err := number(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = j
		case isIdentStart(b):
			j := i + 1
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{k: tIdent, s: src[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %s at %d", quote(src[i:i+1]), i)
		}
	}
	return append(toks, token{k: tEOF}), nil
}

// quoted reads a '...' string or `...` identifier starting at src[i], with
// the doubled delimiter as escape.
func quoted(src string, i int) (string, int, error) {
	q := src[i]
	var sb strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case q:
			if j+1 < len(src) && src[j+1] == q {
				sb.WriteByte(q)
				j++
				continue
			}
			return sb.String(), j + 1, nil
		case '\\':
			if q == '\'' {
				return "", 0, errors.New("backslash in a string literal is ambiguous")
			}
		}
		sb.WriteByte(src[j])
	}
	return "", 0, fmt.Errorf("unterminated %c at %d", q, i)
}

// number reads digits[.digits][e[+-]digits] and an optional Spark suffix.
func number(src string, i int) (token, int, error) {
	j := i
	digits := func() {
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	digits()
	k := kNumber
	if j < len(src) && src[j] == '.' {
		j++
		digits()
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		j++
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		digits()
		k = kDouble // Spark reads 1e3 as a double
	}
	text := src[i:j]
	if text == "." {
		return token{}, 0, errors.New("bad number")
	}
	end := j
	for end < len(src) && isIdentStart(src[end]) {
		end++
	}
	switch strings.ToUpper(src[j:end]) {
	case "":
	case "L", "S", "Y", "BD":
		if k == kDouble {
			return token{}, 0, fmt.Errorf("bad number %s", quote(src[i:end]))
		}
	case "D":
		k = kDouble
	case "F":
		k = kFloat
	default:
		return token{}, 0, fmt.Errorf("bad number %s", quote(src[i:end]))
	}
	if end < len(src) && isDigit(src[end]) {
		return token{}, 0, fmt.Errorf("bad number %s", quote(src[i:end+1]))
	}
	return token{k: tNumber, s: text, n: k}, end, nil
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
func isIdentStart(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

var sqlCompare = map[string]iceberg.Operation{
	"=": iceberg.OpEQ, "==": iceberg.OpEQ, "<>": iceberg.OpNEQ, "!=": iceberg.OpNEQ,
	"<": iceberg.OpLT, "<=": iceberg.OpLTEQ, ">": iceberg.OpGT, ">=": iceberg.OpGTEQ,
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func parseSQL(src string) (*snode, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().k != tEOF {
		return nil, fmt.Errorf("unexpected %s", quote(p.peek().s))
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.k != tEOF {
		p.i++
	}
	return t
}

// kw consumes the keyword w if it comes next.
func (p *parser) kw(w string) bool {
	if t := p.peek(); t.k == tIdent && strings.EqualFold(t.s, w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) punct(s string) bool {
	if t := p.peek(); t.k == tPunct && t.s == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) or() (*snode, error)  { return p.list("or", p.and) }
func (p *parser) and() (*snode, error) { return p.list("and", p.not) }

func (p *parser) list(op string, sub func() (*snode, error)) (*snode, error) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	if !p.kw(op) {
		return n, nil
	}
	out := &snode{op: op, kids: []*snode{n}}
	for {
		n, err := sub()
		if err != nil {
			return nil, err
		}
		out.kids = append(out.kids, n)
		if !p.kw(op) {
			return out, nil
		}
	}
}

func (p *parser) not() (*snode, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	defer func() { p.depth-- }()
	if p.kw("not") {
		n, err := p.not()
		if err != nil {
			return nil, err
		}
		return &snode{op: "not", kids: []*snode{n}}, nil
	}
	if p.punct("(") {
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.punct(")") {
			return nil, errors.New("missing )")
		}
		return n, nil
	}
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.kw("is") {
		op := "isnull"
		if p.kw("not") {
			op = "notnull"
		}
		if !p.kw("null") {
			return nil, errors.New("IS must be followed by [NOT] NULL")
		}
		return &snode{op: op, l: l}, nil
	}
	t := p.next()
	cmp, ok := sqlCompare[t.s]
	if t.k != tOp || !ok {
		return nil, fmt.Errorf("expected a comparison, got %s", quote(t.s))
	}
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	return &snode{op: "cmp", cmp: cmp, l: l, r: r}, nil
}

func (p *parser) operand() (operand, error) {
	t := p.next()
	switch t.k {
	case tString:
		return operand{raw: t.s, k: kSQLString}, nil
	case tNumber:
		return operand{raw: t.s, k: t.n}, nil
	case tPunct:
		if t.s == "-" && p.peek().k == tNumber {
			n := p.next()
			return operand{raw: "-" + n.s, k: n.n}, nil
		}
	case tQIdent:
		return p.path(t.s)
	case tIdent:
		switch strings.ToLower(t.s) {
		case "null":
			return operand{null: true}, nil
		case "true", "false":
			return operand{raw: strings.ToLower(t.s), k: kBool}, nil
		case "date", "timestamp":
			if s := p.peek(); s.k == tString {
				p.next()
				k := kDate
				if strings.EqualFold(t.s, "timestamp") {
					k = kTimestamp
				}
				return operand{raw: s.s, k: k}, nil
			}
		case "and", "or", "not", "is":
			return operand{}, fmt.Errorf("unexpected %s", strings.ToUpper(t.s))
		}
		return p.path(t.s)
	}
	return operand{}, fmt.Errorf("unexpected %s", quote(t.s))
}

// path reads a column name, joining a.b.c for nested struct fields.
func (p *parser) path(first string) (operand, error) {
	parts := []string{first}
	for p.punct(".") {
		t := p.next()
		if t.k != tIdent && t.k != tQIdent {
			return operand{}, errors.New("expected a name after '.'")
		}
		parts = append(parts, t.s)
	}
	return operand{col: strings.Join(parts, "."), isCol: true}, nil
}
