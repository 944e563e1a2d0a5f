package sim

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
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

// boundStmt is a plan with its bound values.
type boundStmt struct {
	p        *plan
	values   []*primitive.Value
	skipMeta bool
	ksession string
	version  uint8
	// result paging (paging.go): rows per page (<= 0: one page) and the
	// state returned with the previous page
	pageSize    int32
	pagingState []byte
}

// prepared is a prepared statement of a node.
type prepared struct {
	id       []byte
	query    string
	keyspace string
	mu       sync.Mutex
	p        *plan
}

func (c *conn) handle(version uint8, stream int16, msg message.Message) {
	switch m := msg.(type) {
	case *message.Options:
		c.sendMsg(version, stream, &message.Supported{Options: map[string][]string{
			"CQL_VERSION": {"3.4.4"}, "COMPRESSION": {}, "PROTOCOL_VERSIONS": {"3/v3", "4/v4"}}}, nil)
	case *message.Startup:
		if comp := m.GetCompression(); comp != primitive.CompressionNone && comp != "" {
			c.sendMsg(version, stream, &message.ProtocolError{ErrorMessage: "sim: compression " + string(comp) + " is not supported (allowed: none)"}, nil)
			return
		}
		c.sendMsg(version, stream, &message.Ready{}, nil)
	case *message.Register:
		var mask uint32
		for _, t := range m.EventTypes {
			switch t {
			case primitive.EventTypeTopologyChange:
				mask |= evTopology
			case primitive.EventTypeStatusChange:
				mask |= evStatus
			case primitive.EventTypeSchemaChange:
				mask |= evSchema
			}
		}
		c.registered.Or(mask)
		c.sendMsg(version, stream, &message.Ready{}, nil)
	case *message.Query:
		opts := m.Options
		if opts == nil {
			opts = &message.QueryOptions{}
		}
		ks := c.sessionKeyspace()
		if opts.Keyspace != "" {
			ks = opts.Keyspace
		}
		p, err := c.n.planQuery(m.Query, ks)
		if err != nil {
			c.sendMsg(version, stream, errorMessage(err), nil)
			return
		}
		c.run(version, stream, p, opts, ks)
	case *message.Prepare:
		ks := c.sessionKeyspace()
		if m.Keyspace != "" {
			ks = m.Keyspace
		}
		res, err := c.n.prepare(m.Query, ks)
		if err != nil {
			c.sendMsg(version, stream, errorMessage(err), nil)
			return
		}
		c.sendMsg(version, stream, res, nil)
	case *message.Execute:
		v, ok := c.n.prepared.Load(string(m.QueryId))
		if !ok {
			c.sendMsg(version, stream, &message.Unprepared{ErrorMessage: "Prepared query with ID " +
				hexID(m.QueryId) + " not found", Id: m.QueryId}, nil)
			return
		}
		ps := v.(*prepared)
		p, err := c.n.currentPlan(ps)
		if err != nil {
			c.sendMsg(version, stream, errorMessage(err), nil)
			return
		}
		opts := m.Options
		if opts == nil {
			opts = &message.QueryOptions{}
		}
		c.run(version, stream, p, opts, ps.keyspace)
	case *message.Batch:
		c.sendMsg(version, stream, &message.Invalid{ErrorMessage: "sim: BATCH is not supported by the simulator"}, nil)
	default:
		c.sendMsg(version, stream, &message.ProtocolError{ErrorMessage: "sim: unexpected message " + msg.GetOpCode().String()}, nil)
	}
}

func hexID(b []byte) string {
	const h = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, x := range b {
		out[2*i], out[2*i+1] = h[x>>4], h[x&15]
	}
	return string(out)
}

// run binds and executes a plan: data requests go through the node's queue,
// everything else is answered at once.
func (c *conn) run(version uint8, stream int16, p *plan, opts *message.QueryOptions, sessionKS string) {
	if len(opts.NamedValues) > 0 {
		c.sendMsg(version, stream, &message.Invalid{ErrorMessage: "sim: named values are not supported, bind positionally"}, nil)
		return
	}
	if len(opts.PositionalValues) != len(p.vars) {
		c.sendMsg(version, stream, &message.Invalid{ErrorMessage: "There were " + itoa(len(p.vars)) +
			" markers(?) in CQL but " + itoa(len(opts.PositionalValues)) + " bound variables"}, nil)
		return
	}
	b := &boundStmt{p: p, values: opts.PositionalValues, skipMeta: opts.SkipMetadata, ksession: sessionKS, version: version,
		pageSize: opts.PageSize, pagingState: opts.PagingState}
	if p.isData() {
		c.n.admit(&request{c: c, stream: stream, version: version, bound: b})
		return
	}
	c.sendMsg(version, stream, c.execControl(b), nil)
}

func itoa(i int) string { return strconvItoa(i) }

// errorMessage maps an execution error to a CQL error message.
func errorMessage(err error) message.Message {
	var se *syntaxErr
	var ie *invalidErr
	var ae *errAlreadyExists
	var ce *configErr
	var ue *unavailableErr
	var un *unauthorizedErr
	var pe *protocolErr
	switch {
	case errors.As(err, &pe):
		return &message.ProtocolError{ErrorMessage: pe.msg}
	case errors.As(err, &se):
		return &message.SyntaxError{ErrorMessage: se.msg}
	case errors.As(err, &ie):
		return &message.Invalid{ErrorMessage: ie.msg}
	case errors.As(err, &ae):
		return &message.AlreadyExists{ErrorMessage: ae.Error(), Keyspace: ae.ks, Table: ae.table}
	case errors.As(err, &ce):
		return &message.ConfigError{ErrorMessage: ce.msg}
	case errors.As(err, &un):
		return &message.Unauthorized{ErrorMessage: un.msg}
	case errors.As(err, &ue):
		return &message.Unavailable{ErrorMessage: ue.msg, Consistency: primitive.ConsistencyLevelOne, Required: 1}
	}
	return &message.ServerError{ErrorMessage: "sim: " + err.Error()}
}

type unavailableErr struct{ msg string }

func (e *unavailableErr) Error() string { return e.msg }

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
	st, err := parseStatement(q)
	if err != nil {
		return nil, err
	}
	p, err := n.c.makePlan(st, q, ks)
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
	st, err := parseStatement(q)
	if err != nil {
		return nil, err
	}
	p, err := n.c.makePlan(st, q, ks)
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
	st, err := parseStatement(ps.query)
	if err != nil {
		return nil, err
	}
	p, err := n.c.makePlan(st, ps.query, ps.keyspace)
	if err != nil {
		return nil, err
	}
	ps.p = p
	return p, nil
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

type unauthorizedErr struct{ msg string }

func (e *unauthorizedErr) Error() string { return e.msg }

// value returns the bytes of t (bound or literal) for column type dt.
func (b *boundStmt) value(t term, dt datatype.DataType, name string) ([]byte, bool, error) {
	if t.bind >= 0 {
		v := b.values[t.bind]
		switch v.Type {
		case primitive.ValueTypeNull:
			return nil, true, nil
		case primitive.ValueTypeUnset:
			return nil, false, nil
		}
		return v.Contents, true, nil
	}
	v, err := encodeLiteral(t, dt, name)
	return v, true, err
}

// execControl executes non-data statements (USE, DDL, system tables).
func (c *conn) execControl(b *boundStmt) message.Message {
	p := b.p
	st := p.st
	switch st.kind {
	case stUse:
		if c.n.c.schema.keyspace(st.keyspace) == nil && !isSystemKeyspace(st.keyspace) {
			return &message.Invalid{ErrorMessage: "Keyspace '" + st.keyspace + "' does not exist"}
		}
		ks := st.keyspace
		c.keyspace.Store(&ks)
		return &message.SetKeyspaceResult{Keyspace: ks}
	case stCreateKeyspace, stCreateTable, stDropKeyspace, stDropTable:
		return c.n.c.execDDL(st, p.query, b.ksession, true)
	case stSelect:
		if p.sys != nil {
			return c.n.selectSystem(b)
		}
	}
	return &message.ServerError{ErrorMessage: "sim: statement is not a control statement"}
}

func (n *Node) selectSystem(b *boundStmt) message.Message {
	p := b.p
	t := p.sys
	if err := n.checkVirtual(p); err != nil {
		return errorMessage(err)
	}
	var data message.RowSet
	limit := math.MaxInt
	if p.st.limit != nil {
		l, err := b.limit()
		if err != nil {
			return errorMessage(err)
		}
		limit = l
	}
	for _, vals := range t.rows(n) {
		enc, err := t.encodeRow(vals)
		if err != nil {
			return errorMessage(err)
		}
		match := true
		for _, r := range p.st.where {
			ci := t.colIdx[r.col]
			want, _, err := b.value(r.val, t.cols[ci].typ, r.col)
			if err != nil {
				return errorMessage(err)
			}
			if !bytes.Equal(enc[ci], want) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if len(data) >= limit {
			break
		}
		if p.st.countStar {
			data = append(data, nil)
			continue
		}
		row := make(message.Row, len(p.sel))
		for i, ci := range p.sel {
			row[i] = enc[ci]
		}
		data = append(data, row)
	}
	if p.st.countStar {
		return countResult(p, len(data))
	}
	page, state, err := pageOfRows(b, data)
	if err != nil {
		return errorMessage(err)
	}
	return rowsResult(p, b, page, state)
}

func countResult(p *plan, n int) message.Message {
	v := binary.BigEndian.AppendUint64(nil, uint64(n))
	return &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 1, Columns: p.result}, Data: message.RowSet{{v}}}
}

// rowsResult answers rows; pagingState is non-nil when more pages follow.
func rowsResult(p *plan, b *boundStmt, data message.RowSet, pagingState []byte) message.Message {
	md := &message.RowsMetadata{ColumnCount: int32(len(p.result)), Columns: p.result, PagingState: pagingState}
	if b.skipMeta {
		md = &message.RowsMetadata{ColumnCount: int32(len(p.result)), PagingState: pagingState}
	}
	return &message.RowsResult{Metadata: md, Data: data}
}

func (b *boundStmt) limit() (int, error) {
	v, ok, err := b.value(*b.p.st.limit, datatype.Int, "[limit]")
	if err != nil {
		return 0, err
	}
	if !ok || v == nil {
		return math.MaxInt, nil
	}
	if len(v) != 4 {
		return 0, invalidf("Invalid LIMIT value: expected a 4-byte int, got %d bytes", len(v))
	}
	l := int32(binary.BigEndian.Uint32(v))
	if l <= 0 {
		return 0, invalidf("LIMIT must be strictly positive, got %d", l)
	}
	return int(l), nil
}

// execDDL applies a schema statement (and forwards it to remote peers when
// forward is set), then notifies registered connections.
func (c *Cluster) execDDL(st *statement, q, sessionKS string, forward bool) message.Message {
	changed, ks, table, err := c.schema.applyDDL(st, sessionKS)
	if err != nil {
		return errorMessage(err)
	}
	if !changed {
		return &message.VoidResult{}
	}
	if forward {
		c.forwardDDL(q, sessionKS)
	}
	var res *message.SchemaChangeResult
	switch st.kind {
	case stCreateKeyspace:
		res = &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: ks}
	case stCreateTable:
		res = &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: table}
	case stDropKeyspace:
		for _, n := range c.nodes {
			n.store.dropKeyspace(ks)
		}
		res = &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: ks}
	case stDropTable:
		for _, n := range c.nodes {
			n.store.dropTable(ks, table)
		}
		res = &message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: table}
	}
	ev := &message.SchemaChangeEvent{ChangeType: res.ChangeType, Target: res.Target, Keyspace: res.Keyspace, Object: res.Object}
	c.broadcast(evSchema, ev)
	return res
}

// broadcast pushes an event to every registered connection of local nodes.
func (c *Cluster) broadcast(mask uint32, ev message.Message) {
	for _, n := range c.nodes {
		n.mu.Lock()
		conns := make([]*conn, 0, len(n.conns))
		for cn := range n.conns {
			conns = append(conns, cn)
		}
		n.mu.Unlock()
		for _, cn := range conns {
			cn.pushEvent(mask, ev)
		}
	}
}

// execData executes a data statement on this (coordinator) node.
func (n *Node) execData(b *boundStmt) message.Message {
	p := b.p
	st := p.st
	td := p.td
	c := n.c
	switch st.kind {
	case stSelect:
		limit := math.MaxInt
		if st.limit != nil {
			l, err := b.limit()
			if err != nil {
				return errorMessage(err)
			}
			limit = l
		}
		var rows [][][]byte
		if p.keyRel >= 0 {
			r := st.where[p.keyRel]
			key, ok, err := b.value(r.val, td.cols[td.pk].typ, r.col)
			if err != nil {
				return errorMessage(err)
			}
			if !ok || key == nil {
				return &message.Invalid{ErrorMessage: "Invalid null value in condition for column " + r.col}
			}
			vals, err := n.readRow(p.ks, td, key)
			if err != nil {
				return errorMessage(err)
			}
			if vals != nil && limit > 0 {
				rows = append(rows, vals)
			}
		} else {
			from, fromEx, to, toEx, err := b.tokenBounds()
			if err != nil {
				return errorMessage(err)
			}
			if b.pageSize > 0 && !st.countStar {
				return n.scanPage(b, from, fromEx, to, toEx, limit)
			}
			sr, err := n.scanRows(p.ks, td, from, fromEx, limit)
			if err != nil {
				return errorMessage(err)
			}
			for _, r := range sr {
				if r.token > to || (toEx && r.token == to) {
					break
				}
				rows = append(rows, r.vals)
			}
		}
		if st.countStar {
			return countResult(p, len(rows))
		}
		return rowsResult(p, b, project(p, rows), nil)
	case stInsert, stUpdate, stDelete:
		m := &mutation{Keyspace: p.ks, Table: td.name}
		var err error
		switch st.kind {
		case stInsert:
			for i, name := range st.columns {
				ci := td.colIdx[name]
				v, ok, verr := b.value(st.values[i], td.cols[ci].typ, name)
				if verr != nil {
					return errorMessage(verr)
				}
				if ci == td.pk {
					m.Key = v
					continue
				}
				if ok {
					m.Sets = append(m.Sets, colValue{Col: ci, Val: v})
				}
			}
		case stUpdate:
			r := st.where[p.keyRel]
			m.Key, _, err = b.value(r.val, td.cols[td.pk].typ, r.col)
			for _, a := range st.sets {
				ci := td.colIdx[a.col]
				v, ok, verr := b.value(a.val, td.cols[ci].typ, a.col)
				if verr != nil {
					return errorMessage(verr)
				}
				if ok {
					m.Sets = append(m.Sets, colValue{Col: ci, Val: v})
				}
			}
		case stDelete:
			r := st.where[p.keyRel]
			m.Key, _, err = b.value(r.val, td.cols[td.pk].typ, r.col)
			if len(st.columns) == 0 {
				m.DeleteRow = true
			}
			for _, name := range st.columns {
				m.Sets = append(m.Sets, colValue{Col: td.colIdx[name], Val: nil})
			}
		}
		if err != nil {
			return errorMessage(err)
		}
		if m.Key == nil {
			return &message.Invalid{ErrorMessage: "Invalid null value for partition key part " + td.cols[td.pk].name}
		}
		if err := n.write(m, len(td.cols)); err != nil {
			return errorMessage(err)
		}
		return &message.VoidResult{}
	case stTruncate:
		m := &mutation{Keyspace: p.ks, Table: td.name, Truncate: true}
		for _, mb := range c.members {
			if err := c.applyOn(mb, m, len(td.cols)); err != nil {
				return errorMessage(err)
			}
		}
		return &message.VoidResult{}
	}
	return &message.ServerError{ErrorMessage: "sim: unsupported data statement"}
}

// tokenBounds returns the token range of a scan from its token() relations.
func (b *boundStmt) tokenBounds() (from int64, fromEx bool, to int64, toEx bool, err error) {
	from, to = math.MinInt64, math.MaxInt64
	for _, r := range b.p.st.where {
		if !r.token {
			continue
		}
		var t int64
		if r.tokenOf {
			v, ok, verr := b.value(r.val, b.p.td.cols[b.p.td.pk].typ, r.col)
			if verr != nil {
				return 0, false, 0, false, verr
			}
			if !ok || v == nil {
				return 0, false, 0, false, invalidf("Invalid null value for token(%s)", r.col)
			}
			t = Murmur3Token(v)
		} else {
			v, ok, verr := b.value(r.val, datatype.Bigint, "partition key token")
			if verr != nil {
				return 0, false, 0, false, verr
			}
			if !ok || len(v) != 8 {
				return 0, false, 0, false, invalidf("Invalid token value: expected an 8-byte bigint")
			}
			t = int64(binary.BigEndian.Uint64(v))
		}
		switch r.op {
		case ">":
			if t > from || (t == from && !fromEx) {
				from, fromEx = t, true
			}
		case ">=":
			if t > from {
				from, fromEx = t, false
			}
		case "<":
			if t < to || (t == to && !toEx) {
				to, toEx = t, true
			}
		case "<=":
			if t < to {
				to, toEx = t, false
			}
		}
	}
	return from, fromEx, to, toEx, nil
}

// readRow reads a partition on its replica: this node's store when it is a
// replica, otherwise the first replica's store (in-process) or the replica
// over the admin endpoint (process mode).
func (n *Node) readRow(ks string, td *tableDef, key []byte) ([][]byte, error) {
	c := n.c
	reps := c.schema.replicasOf(ks, Murmur3Token(key))
	if len(reps) == 0 {
		return nil, &unavailableErr{"Cannot achieve consistency level ONE: keyspace " + ks + " has no replica for this key"}
	}
	for _, r := range reps {
		if r == n.m.idx {
			return n.store.get(ks, td.name, key), nil
		}
	}
	var lastErr error
	for _, r := range reps {
		mb := c.members[r]
		if mb.node != nil {
			return mb.node.store.get(ks, td.name, key), nil
		}
		vals, err := c.remoteGet(mb, ks, td.name, key)
		if err == nil {
			return vals, nil
		}
		lastErr = err
	}
	return nil, &unavailableErr{"Cannot achieve consistency level ONE: " + lastErr.Error()}
}

// scanRows merges a token-ordered scan over every member's store.
func (n *Node) scanRows(ks string, td *tableDef, from int64, fromEx bool, limit int) ([]*storedRow, error) {
	c := n.c
	seen := map[string]bool{}
	var all []*storedRow
	pk := td.pk
	for _, mb := range c.members {
		var rs []*storedRow
		if mb.node != nil {
			rs = mb.node.store.scan(ks, td.name, from, fromEx, limit)
		} else {
			var err error
			rs, err = c.remoteScan(mb, ks, td.name, from, fromEx, limit)
			if err != nil {
				continue // an unreachable peer's ranges are missed (CL ONE, best effort)
			}
		}
		for _, r := range rs {
			k := string(r.vals[pk])
			if !seen[k] {
				seen[k] = true
				all = append(all, r)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].token != all[j].token {
			return all[i].token < all[j].token
		}
		return string(all[i].vals[pk]) < string(all[j].vals[pk])
	})
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// write applies a mutation on every replica of its key.
func (n *Node) write(m *mutation, ncols int) error {
	c := n.c
	// the partition key value is stored as a column too
	td := c.schema.table(m.Keyspace, m.Table)
	if td != nil && !m.DeleteRow {
		m.Sets = append(m.Sets, colValue{Col: td.pk, Val: m.Key})
	}
	reps := c.schema.replicasOf(m.Keyspace, Murmur3Token(m.Key))
	if len(reps) == 0 {
		return &unavailableErr{"Cannot achieve consistency level ONE: keyspace " + m.Keyspace + " has no replica for this key"}
	}
	ok := 0
	var lastErr error
	for _, r := range reps {
		if err := c.applyOn(c.members[r], m, ncols); err != nil {
			lastErr = err
			continue
		}
		ok++
	}
	if ok == 0 {
		return &unavailableErr{"Cannot achieve consistency level ONE: " + lastErr.Error()}
	}
	return nil
}

func (c *Cluster) applyOn(mb *member, m *mutation, ncols int) error {
	if mb.node != nil {
		mb.node.store.apply(m, ncols)
		return nil
	}
	return c.remoteApply(mb, m)
}
