// CQL parser, schema statements: CREATE KEYSPACE and CREATE TABLE with their
// option maps and column types.

package sim

import (
	"strings"
)

func (ps *parser) createKeyspace() *statement {
	st := &statement{kind: stCreateKeyspace, durable: true}
	if ps.accept("if") {
		ps.expect("not")
		ps.expect("exists")
		st.ifNotExists = true
	}
	st.keyspace = ps.ident()
	ps.expect("with")
	for {
		prop := ps.ident()
		ps.expect("=")
		switch prop {
		case "replication":
			st.replication = ps.mapLiteral()
		case "durable_writes":
			v := ps.next()
			st.durable = v.text != "false"
		default:
			ps.p--
			ps.fail("unknown keyspace property %q", prop)
		}
		if !ps.accept("and") {
			break
		}
	}
	if st.replication == nil {
		ps.fail("missing mandatory replication strategy class")
	}
	return st
}

func (ps *parser) mapLiteral() map[string]string {
	ps.expect("{")
	m := map[string]string{}
	if ps.accept("}") {
		return m
	}
	for {
		k := ps.next()
		if k.kind != tkString {
			ps.p--
			ps.fail("expected a string key")
		}
		ps.expect(":")
		v := ps.next()
		if v.kind != tkString && v.kind != tkNumber && v.kind != tkIdent {
			ps.p--
			ps.fail("expected a value")
		}
		m[k.text] = v.text
		if !ps.accept(",") {
			break
		}
	}
	ps.expect("}")
	return m
}

func (ps *parser) createTable() *statement {
	st := &statement{kind: stCreateTable}
	if ps.accept("if") {
		ps.expect("not")
		ps.expect("exists")
		st.ifNotExists = true
	}
	st.keyspace, st.table = ps.qualified()
	ps.expect("(")
	for {
		if ps.accept("primary") {
			ps.expect("key")
			ps.expect("(")
			if ps.accept("(") {
				for {
					st.primaryKey = append(st.primaryKey, ps.ident())
					if !ps.accept(",") {
						break
					}
				}
				ps.expect(")")
			} else {
				st.primaryKey = []string{ps.ident()}
			}
			for ps.accept(",") {
				st.clustering = append(st.clustering, ps.ident())
			}
			ps.expect(")")
		} else {
			name := ps.ident()
			typ := ps.typeName()
			st.colSpecs = append(st.colSpecs, colSpec{name: name, typ: typ})
			if ps.accept("primary") {
				ps.expect("key")
				if st.primaryKey != nil {
					ps.fail("multiple PRIMARY KEY definitions")
				}
				st.primaryKey = []string{name}
			}
		}
		if !ps.accept(",") {
			break
		}
	}
	ps.expect(")")
	if ps.accept("with") {
		// Table options are accepted and ignored.
		depth := 0
		for ps.peek().kind != tkEOF && !(depth <= 0 && ps.isKw(";")) {
			t := ps.next()
			if t.text == "{" || t.text == "(" {
				depth++
			} else if t.text == "}" || t.text == ")" {
				depth--
			}
		}
	}
	if len(st.primaryKey) == 0 {
		ps.fail("no PRIMARY KEY specified")
	}
	return st
}

func (ps *parser) typeName() string {
	t := ps.ident()
	if ps.accept("<") {
		var parts []string
		for {
			parts = append(parts, ps.typeName())
			if !ps.accept(",") {
				break
			}
		}
		ps.expect(">")
		return t + "<" + strings.Join(parts, ", ") + ">"
	}
	return t
}
