package sim

import (
	"fmt"
	"strings"
)

// This file holds the statement tree and the parser for exactly the statement
// shapes the simulator serves (see doc.go); the tokenizer is in cql_lex.go,
// SELECT/INSERT/UPDATE/DELETE in cql_dml.go and CREATE KEYSPACE/TABLE in
// cql_ddl.go. Everything else is rejected with a
// SyntaxError naming the offending token.

type stmtKind int

const (
	stSelect stmtKind = iota + 1
	stInsert
	stUpdate
	stDelete
	stCreateKeyspace
	stCreateTable
	stUse
	stDropKeyspace
	stDropTable
	stTruncate
)

// term is a value in a statement: a bind marker or a literal.
type term struct {
	bind    int    // index of the bind marker, -1 for a literal
	name    string // named marker (":name"), if any
	litKind tokKind
	lit     string
	null    bool
}

// relation is "col = term" or "token(col) op token(term)" / "token(col) op term".
type relation struct {
	col     string
	op      string // "=", ">", ">=", "<", "<=", "in" not supported
	token   bool   // token(col) relation
	tokenOf bool   // right side is token(term) (else a bigint term)
	val     term
}

type assignment struct {
	col string
	val term
}

type colSpec struct {
	name string
	typ  string
}

type statement struct {
	kind        stmtKind
	keyspace    string // explicit keyspace, "" = session keyspace
	table       string
	columns     []string // SELECT/INSERT/DELETE column list; nil = *
	countStar   bool
	where       []relation
	limit       *term
	values      []term
	sets        []assignment
	ifNotExists bool
	ifExists    bool
	// DDL
	replication map[string]string
	durable     bool
	colSpecs    []colSpec
	primaryKey  []string // partition key columns
	clustering  []string
	nBind       int
}

type parser struct {
	toks  []token
	p     int
	nBind int
	src   string
}

type syntaxErr struct{ msg string }

func (e *syntaxErr) Error() string { return e.msg }

func parseStatement(src string) (st *statement, err error) {
	toks, lerr := lex(src)
	if lerr != nil {
		return nil, &syntaxErr{lerr.Error()}
	}
	ps := &parser{toks: toks, src: src}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*syntaxErr)
			if !ok {
				panic(r)
			}
			st, err = nil, se
		}
	}()
	st = ps.statement()
	ps.accept(";")
	if ps.peek().kind != tkEOF {
		ps.fail("unexpected input")
	}
	st.nBind = ps.nBind
	return st, nil
}

func (ps *parser) peek() token {
	if ps.p >= len(ps.toks) {
		return ps.toks[len(ps.toks)-1] // EOF
	}
	return ps.toks[ps.p]
}

// next returns the next token and always advances, so that p-- undoes it.
func (ps *parser) next() token {
	t := ps.peek()
	ps.p++
	return t
}

func (ps *parser) fail(format string, args ...any) {
	t := ps.peek()
	near := t.text
	if t.kind == tkEOF {
		near = "<EOF>"
	}
	panic(&syntaxErr{fmt.Sprintf("line 1:%d %s near %q", t.pos, fmt.Sprintf(format, args...), near)})
}

// isKw reports whether the next token is the given unquoted keyword or punctuation.
func (ps *parser) isKw(kw string) bool {
	t := ps.peek()
	return (t.kind == tkIdent || t.kind == tkPunct) && t.text == kw
}

func (ps *parser) accept(kw string) bool {
	if ps.isKw(kw) {
		ps.p++
		return true
	}
	return false
}

func (ps *parser) expect(kw string) {
	if !ps.accept(kw) {
		ps.fail("expected %q", strings.ToUpper(kw))
	}
}

func (ps *parser) ident() string {
	t := ps.peek()
	if t.kind == tkIdent || t.kind == tkQuotedIdent {
		ps.p++
		return t.text
	}
	ps.fail("expected an identifier")
	return ""
}

// qualified parses [keyspace.]name.
func (ps *parser) qualified() (ks, name string) {
	name = ps.ident()
	if ps.accept(".") {
		ks = name
		name = ps.ident()
	}
	return ks, name
}

func (ps *parser) term() term {
	t := ps.next()
	switch t.kind {
	case tkPunct:
		switch t.text {
		case "?":
			ps.nBind++
			return term{bind: ps.nBind - 1}
		case ":":
			n := ps.ident()
			ps.nBind++
			return term{bind: ps.nBind - 1, name: n}
		}
	case tkString, tkNumber, tkHex:
		return term{bind: -1, litKind: t.kind, lit: t.text}
	case tkIdent:
		switch t.text {
		case "true", "false":
			return term{bind: -1, litKind: tkIdent, lit: t.text}
		case "null":
			return term{bind: -1, null: true}
		}
	}
	ps.p--
	ps.fail("expected a value")
	return term{}
}

func (ps *parser) statement() *statement {
	t := ps.next()
	if t.kind != tkIdent {
		ps.p--
		ps.fail("expected a statement")
	}
	switch t.text {
	case "select":
		return ps.selectStmt()
	case "insert":
		return ps.insertStmt()
	case "update":
		return ps.updateStmt()
	case "delete":
		return ps.deleteStmt()
	case "create":
		if ps.accept("keyspace") || ps.accept("schema") {
			return ps.createKeyspace()
		}
		if ps.accept("table") || ps.accept("columnfamily") {
			return ps.createTable()
		}
		ps.fail("only CREATE KEYSPACE and CREATE TABLE are supported")
	case "use":
		return &statement{kind: stUse, keyspace: ps.ident()}
	case "drop":
		st := &statement{}
		switch {
		case ps.accept("keyspace"):
			st.kind = stDropKeyspace
		case ps.accept("table"):
			st.kind = stDropTable
		default:
			ps.fail("only DROP KEYSPACE and DROP TABLE are supported")
		}
		if ps.accept("if") {
			ps.expect("exists")
			st.ifExists = true
		}
		if st.kind == stDropKeyspace {
			st.keyspace = ps.ident()
		} else {
			st.keyspace, st.table = ps.qualified()
		}
		return st
	case "truncate":
		ps.accept("table")
		st := &statement{kind: stTruncate}
		st.keyspace, st.table = ps.qualified()
		return st
	}
	ps.p--
	ps.fail("unsupported statement")
	return nil
}
