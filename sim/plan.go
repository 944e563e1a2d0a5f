// Statement planning: a parsed statement resolved against the schema (plan),
// cached per query and per prepared statement.

package sim

import (
	"crypto/md5"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
)

// plan is a statement resolved against the schema.
type plan struct {
	st        *statement
	query     string
	ks        string
	td        *tableDef // user table (data request)
	sys       *sysTable // system table (answered at once)
	schemaVer [16]byte
	vars      []*message.ColumnMetadata
	pkIdx     []uint16
	result    []*message.ColumnMetadata
	sel       []int // selected column indexes
	keyRel    int   // index in st.where of the partition-key equality, -1 if none
}

func (p *plan) isData() bool { return p.td != nil }

// prepared is a prepared statement of a node.
type prepared struct {
	id       []byte
	query    string
	keyspace string
	mu       sync.Mutex
	p        *plan
}

// planCache caches plans of unprepared queries per (keyspace, query).
type planKey struct{ ks, q string }

func (n *Node) planQuery(q, ks string) (*plan, error) {
	key := planKey{ks, q}
	if v, ok := n.c.planCache.Load(key); ok {
		p := v.(*plan)
		if p.schemaVer == n.c.schema.schemaVersion() {
			return p, nil
		}
	}
	p, err := n.c.parseAndPlan(q, ks)
	if err != nil {
		return nil, err
	}
	if p.isData() || p.sys != nil {
		if n.c.planCacheSize.Add(1) < 10000 {
			n.c.planCache.Store(key, p)
		}
	}
	return p, nil
}

func (n *Node) prepare(q, ks string) (*message.PreparedResult, error) {
	p, err := n.c.parseAndPlan(q, ks)
	if err != nil {
		return nil, err
	}
	if err := n.checkVirtual(p); err != nil {
		return nil, err
	}
	sum := md5.Sum([]byte(ks + "\x00" + q))
	id := sum[:]
	n.prepared.Store(string(id), &prepared{id: id, query: q, keyspace: ks, p: p})
	res := &message.PreparedResult{PreparedQueryId: id,
		VariablesMetadata: &message.VariablesMetadata{PkIndices: p.pkIdx, Columns: p.vars},
		ResultMetadata:    &message.RowsMetadata{ColumnCount: int32(len(p.result)), Columns: p.result}}
	return res, nil
}

// currentPlan returns the prepared plan, re-planned if the schema changed.
func (n *Node) currentPlan(ps *prepared) (*plan, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.p.schemaVer == n.c.schema.schemaVersion() || (!ps.p.isData() && ps.p.sys == nil) {
		return ps.p, nil
	}
	p, err := n.c.parseAndPlan(ps.query, ps.keyspace)
	if err != nil {
		return nil, err
	}
	ps.p = p
	return p, nil
}

// parseAndPlan parses query q and resolves it against the schema with
// session keyspace ks.
func (c *Cluster) parseAndPlan(q, ks string) (*plan, error) {
	st, err := parseStatement(q)
	if err != nil {
		return nil, err
	}
	return c.makePlan(st, q, ks)
}

// makePlan resolves a statement against the schema.
func (c *Cluster) makePlan(st *statement, q, sessionKS string) (*plan, error) {
	p := &plan{st: st, query: q, keyRel: -1, schemaVer: c.schema.schemaVersion()}
	switch st.kind {
	case stUse, stCreateKeyspace, stCreateTable, stDropKeyspace, stDropTable:
		if st.nBind > 0 {
			return nil, invalidf("bind markers are not allowed in schema statements")
		}
		return p, nil
	}
	ks := st.keyspace
	if ks == "" {
		ks = sessionKS
	}
	if ks == "" {
		return nil, invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	p.ks = ks
	p.vars = make([]*message.ColumnMetadata, st.nBind)
	var cols []colDef
	var colIdx map[string]int
	if sys := sysTables[ks+"."+st.table]; sys != nil {
		if st.kind != stSelect {
			return nil, &unauthorizedErr{"sim: system tables are read-only"}
		}
		p.sys = sys
		cols, colIdx = sys.cols, sys.colIdx
	} else if isSystemKeyspace(ks) {
		return nil, invalidf("unconfigured table %s", st.table)
	} else {
		td := c.schema.table(ks, st.table)
		if td == nil {
			if c.schema.keyspace(ks) == nil {
				return nil, invalidf("Keyspace %s does not exist", ks)
			}
			return nil, invalidf("unconfigured table %s", st.table)
		}
		p.td = td
		cols, colIdx = td.cols, td.colIdx
	}
	if st.ifExists || st.ifNotExists {
		return nil, invalidf("sim: conditional statements (IF [NOT] EXISTS) are not supported on data")
	}
	col := func(name string) (int, error) {
		i, ok := colIdx[name]
		if !ok {
			return 0, invalidf("Undefined column name %s", name)
		}
		return i, nil
	}
	bindVar := func(t term, name string, dt datatype.DataType) {
		if t.bind >= 0 {
			p.vars[t.bind] = &message.ColumnMetadata{Keyspace: ks, Table: st.table, Name: name, Index: int32(t.bind), Type: dt}
		}
	}
	checkLit := func(t term, cd colDef) error {
		if t.bind < 0 {
			_, err := encodeLiteral(t, cd.typ, cd.name)
			return err
		}
		return nil
	}
	// WHERE clause
	for i, r := range st.where {
		ci, err := col(r.col)
		if err != nil {
			return nil, err
		}
		cd := cols[ci]
		if r.token {
			if p.td == nil || ci != p.td.pk {
				return nil, invalidf("The token function arguments must be the partition key columns")
			}
			if st.kind != stSelect {
				return nil, invalidf("token() restrictions are only supported in SELECT")
			}
			if r.tokenOf {
				bindVar(r.val, cd.name, cd.typ)
				if err := checkLit(r.val, cd); err != nil {
					return nil, err
				}
			} else {
				bindVar(r.val, "partition key token", datatype.Bigint)
				if err := checkLit(r.val, colDef{name: "token", typ: datatype.Bigint}); err != nil {
					return nil, err
				}
			}
			continue
		}
		bindVar(r.val, cd.name, cd.typ)
		if err := checkLit(r.val, cd); err != nil {
			return nil, err
		}
		if p.td != nil {
			if ci != p.td.pk {
				return nil, invalidf("Cannot execute this query as it might involve data filtering: only the partition key %s can be restricted (got %s)", p.td.cols[p.td.pk].name, cd.name)
			}
			if p.keyRel >= 0 {
				return nil, invalidf("%s cannot be restricted by more than one relation if it includes an Equal", cd.name)
			}
			p.keyRel = i
			if r.val.bind >= 0 {
				p.pkIdx = []uint16{uint16(r.val.bind)}
			}
		}
	}
	if p.keyRel >= 0 {
		for _, r := range st.where {
			if r.token {
				return nil, invalidf("token() and partition key equality restrictions cannot be mixed")
			}
		}
	}
	switch st.kind {
	case stSelect:
		if st.limit != nil {
			bindVar(*st.limit, "[limit]", datatype.Int)
			if err := checkLit(*st.limit, colDef{name: "[limit]", typ: datatype.Int}); err != nil {
				return nil, err
			}
		}
		if st.countStar {
			p.result = []*message.ColumnMetadata{{Keyspace: ks, Table: st.table, Name: "count", Type: datatype.Bigint}}
			break
		}
		if st.columns == nil {
			for i := range cols {
				p.sel = append(p.sel, i)
			}
		} else {
			for _, name := range st.columns {
				ci, err := col(name)
				if err != nil {
					return nil, err
				}
				p.sel = append(p.sel, ci)
			}
		}
		for i, ci := range p.sel {
			p.result = append(p.result, &message.ColumnMetadata{Keyspace: ks, Table: st.table, Name: cols[ci].name, Index: int32(i), Type: cols[ci].typ})
		}
	case stInsert:
		seenPK := false
		for i, name := range st.columns {
			ci, err := col(name)
			if err != nil {
				return nil, err
			}
			cd := cols[ci]
			bindVar(st.values[i], cd.name, cd.typ)
			if err := checkLit(st.values[i], cd); err != nil {
				return nil, err
			}
			if ci == p.td.pk {
				seenPK = true
				if st.values[i].bind >= 0 {
					p.pkIdx = []uint16{uint16(st.values[i].bind)}
				}
			}
		}
		if !seenPK {
			return nil, invalidf("Some partition key parts are missing: %s", p.td.cols[p.td.pk].name)
		}
	case stUpdate, stDelete:
		if p.keyRel < 0 {
			return nil, invalidf("Some partition key parts are missing: %s", p.td.cols[p.td.pk].name)
		}
		for _, a := range st.sets {
			ci, err := col(a.col)
			if err != nil {
				return nil, err
			}
			if ci == p.td.pk {
				return nil, invalidf("PRIMARY KEY part %s found in SET part", a.col)
			}
			bindVar(a.val, cols[ci].name, cols[ci].typ)
			if err := checkLit(a.val, cols[ci]); err != nil {
				return nil, err
			}
		}
		for _, name := range st.columns { // DELETE col, ...
			ci, err := col(name)
			if err != nil {
				return nil, err
			}
			if ci == p.td.pk {
				return nil, invalidf("Invalid identifier %s for deletion (should not be a PRIMARY KEY part)", name)
			}
		}
	case stTruncate:
		if p.td == nil {
			return nil, invalidf("cannot truncate a system table")
		}
	}
	for i, v := range p.vars {
		if v == nil { // marker in an unsupported position (e.g. USING TTL ?)
			p.vars[i] = &message.ColumnMetadata{Keyspace: ks, Table: st.table, Name: "[ignored]", Index: int32(i), Type: datatype.Int}
		}
	}
	// prepared statements of the same query share the plan: the sys/td
	// pointer is stable until the schema changes (schemaVer).
	return p, nil
}
