// CQL parser, data statements: SELECT, INSERT, UPDATE and DELETE with their
// WHERE relations and USING clauses.

package sim

func (ps *parser) selectStmt() *statement {
	st := &statement{kind: stSelect}
	if ps.accept("*") {
		st.columns = nil
	} else if ps.isKw("count") {
		ps.next()
		ps.expect("(")
		if ps.peek().kind == tkNumber {
			ps.next()
		} else if !ps.accept("*") {
			ps.ident()
		}
		ps.expect(")")
		st.countStar = true
	} else {
		for {
			st.columns = append(st.columns, ps.ident())
			if !ps.accept(",") {
				break
			}
		}
	}
	ps.expect("from")
	st.keyspace, st.table = ps.qualified()
	if ps.accept("where") {
		st.where = ps.relations()
	}
	if ps.accept("limit") {
		l := ps.term()
		st.limit = &l
	}
	if ps.accept("allow") {
		ps.expect("filtering")
	}
	return st
}

func (ps *parser) relations() []relation {
	var rels []relation
	for {
		var r relation
		if ps.isKw("token") && ps.p+1 < len(ps.toks) && ps.toks[ps.p+1].text == "(" {
			ps.next()
			ps.expect("(")
			r.col = ps.ident()
			ps.expect(")")
			r.token = true
		} else {
			r.col = ps.ident()
		}
		op := ps.next()
		switch op.text {
		case "=", ">", ">=", "<", "<=":
			r.op = op.text
		default:
			ps.p--
			ps.fail("unsupported operator")
		}
		if r.token && r.op == "=" {
			ps.fail("token() equality is not supported")
		}
		if !r.token && r.op != "=" {
			ps.fail("only equality restrictions are supported on columns")
		}
		if r.token && ps.isKw("token") {
			ps.next()
			ps.expect("(")
			r.val = ps.term()
			ps.expect(")")
			r.tokenOf = true
		} else {
			r.val = ps.term()
		}
		rels = append(rels, r)
		if !ps.accept("and") {
			return rels
		}
	}
}

func (ps *parser) using() {
	if ps.accept("using") {
		for {
			if !ps.accept("ttl") && !ps.accept("timestamp") {
				ps.fail("expected TTL or TIMESTAMP")
			}
			ps.term()
			if !ps.accept("and") {
				break
			}
		}
	}
}

func (ps *parser) insertStmt() *statement {
	ps.expect("into")
	st := &statement{kind: stInsert}
	st.keyspace, st.table = ps.qualified()
	ps.expect("(")
	for {
		st.columns = append(st.columns, ps.ident())
		if !ps.accept(",") {
			break
		}
	}
	ps.expect(")")
	ps.expect("values")
	ps.expect("(")
	for {
		st.values = append(st.values, ps.term())
		if !ps.accept(",") {
			break
		}
	}
	ps.expect(")")
	if len(st.values) != len(st.columns) {
		ps.fail("unmatched column names/values (%d columns, %d values)", len(st.columns), len(st.values))
	}
	if ps.accept("if") {
		ps.expect("not")
		ps.expect("exists")
		st.ifNotExists = true
	}
	ps.using()
	return st
}

func (ps *parser) updateStmt() *statement {
	st := &statement{kind: stUpdate}
	st.keyspace, st.table = ps.qualified()
	ps.using()
	ps.expect("set")
	for {
		c := ps.ident()
		ps.expect("=")
		st.sets = append(st.sets, assignment{col: c, val: ps.term()})
		if !ps.accept(",") {
			break
		}
	}
	ps.expect("where")
	st.where = ps.relations()
	if ps.accept("if") {
		ps.expect("exists")
		st.ifExists = true
	}
	return st
}

func (ps *parser) deleteStmt() *statement {
	st := &statement{kind: stDelete}
	if !ps.isKw("from") {
		for {
			st.columns = append(st.columns, ps.ident())
			if !ps.accept(",") {
				break
			}
		}
	}
	ps.expect("from")
	st.keyspace, st.table = ps.qualified()
	ps.using()
	ps.expect("where")
	st.where = ps.relations()
	if ps.accept("if") {
		ps.expect("exists")
		st.ifExists = true
	}
	return st
}
