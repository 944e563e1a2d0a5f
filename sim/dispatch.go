// Protocol dispatch: one CQL request message of a connection to its answer;
// data statements go through the node's queue, control statements are
// answered at once.

package sim

import (
	"strconv"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func (c *conn) handle(version uint8, stream int16, msg message.Message) {
	switch m := msg.(type) {
	case *message.Options:
		c.sendMsg(version, stream, &message.Supported{Options: map[string][]string{
			"CQL_VERSION": {"3.4.4"}, "COMPRESSION": {}, "PROTOCOL_VERSIONS": servedVersionList}}, nil)
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
// system_views queries (the node's live load) are answered once a pause is
// over, as a stopped JVM answers nothing, and everything else at once.
func (c *conn) run(version uint8, stream int16, p *plan, opts *message.QueryOptions, sessionKS string) {
	if len(opts.NamedValues) > 0 {
		c.sendMsg(version, stream, &message.Invalid{ErrorMessage: "sim: named values are not supported, bind positionally"}, nil)
		return
	}
	if len(opts.PositionalValues) != len(p.vars) {
		c.sendMsg(version, stream, &message.Invalid{ErrorMessage: "There were " + strconv.Itoa(len(p.vars)) +
			" markers(?) in CQL but " + strconv.Itoa(len(opts.PositionalValues)) + " bound variables"}, nil)
		return
	}
	b := &boundStmt{p: p, values: opts.PositionalValues, skipMeta: opts.SkipMetadata, ksession: sessionKS, version: version,
		pageSize: opts.PageSize, pagingState: opts.PagingState}
	if p.isData() {
		req := &request{c: c, stream: stream, version: version, bound: b}
		if c.zn != nil {
			c.zn.f.requests.Add(1)
			req.arrive = time.Now().Add(c.zn.toNode())
			req.toClient = c.zn.toClient()
			req.back = req.toClient
		}
		c.n.route(req)
		return
	}
	if p.sys != nil && p.sys.ks == "system_views" {
		c.n.afterPause(func() { c.sendMsg(version, stream, c.execControl(b), nil) })
		return
	}
	c.sendMsg(version, stream, c.execControl(b), nil)
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
