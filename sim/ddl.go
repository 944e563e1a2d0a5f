// Schema changes: DDL applied to the shared schema, its SCHEMA_CHANGE result
// and the events pushed to registered connections.

package sim

import (
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

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
