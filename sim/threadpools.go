package sim

import (
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Cassandra 4.0's node-local virtual tables that the simulator serves:
// system_views.thread_pools (one row per stage, filled from the node's queue
// model) and the system_virtual_schema tables that describe the virtual
// keyspaces, as Cassandra 4.0 shows them (virtual keyspaces are not listed in
// system_schema; gocql v1.7.0 never reads system_virtual_schema, so session
// start and keyspace metadata are unchanged). A node with
// Node.SetVirtualTables(false) answers like Cassandra 3.x: Invalid
// ("Keyspace system_views does not exist").

// Stage names as Cassandra 4.0 reports them in system_views.thread_pools.
const (
	StageRead     = "ReadStage"
	StageMutation = "MutationStage"
)

// stage indexes of Node.stages.
const (
	stageRead = iota
	stageMutation
	numStages
)

var stageNames = [numStages]string{StageRead, StageMutation}

// stageCounters is one stage's share of the queue model: requests waiting
// for a worker (pending_tasks), in service (active_tasks) and completed
// since the node (re)started (completed_tasks).
type stageCounters struct {
	pending   atomic.Int64
	active    atomic.Int64
	completed atomic.Int64
}

// stageOf returns the stage a data request is counted in: SELECT in
// ReadStage, every write in MutationStage.
func stageOf(b *boundStmt) int {
	if b != nil && b.p != nil && b.p.st != nil && b.p.st.kind != stSelect {
		return stageMutation
	}
	return stageRead
}

// ThreadPool is one row of a node's system_views.thread_pools.
type ThreadPool struct {
	Name             string
	ActiveTasks      int32 // requests in service (busy workers)
	ActiveTasksLimit int32 // W, the node's workers
	PendingTasks     int32 // requests queued for a worker
	CompletedTasks   int64 // requests served since the node (re)started
	BlockedTasks     int64 // always 0: the simulator's queue never blocks producers
}

// ThreadPools returns the node's system_views.thread_pools rows (ReadStage,
// MutationStage). The workers are shared by both stages, so each stage
// reports W as its limit.
func (n *Node) ThreadPools() []ThreadPool {
	w := int32(n.model.Load().Workers)
	out := make([]ThreadPool, numStages)
	for i := range out {
		s := &n.stages[i]
		out[i] = ThreadPool{Name: stageNames[i], ActiveTasks: int32(max(s.active.Load(), 0)), ActiveTasksLimit: w,
			PendingTasks: int32(max(s.pending.Load(), 0)), CompletedTasks: s.completed.Load()}
	}
	return out
}

// SetVirtualTables turns the node's virtual keyspaces (system_views,
// system_virtual_schema) on (default) or off. Off, the node answers queries
// on them like Cassandra 3.x, with Invalid.
func (n *Node) SetVirtualTables(on bool) { n.noVirtual.Store(!on) }

// resetStageCounters zeroes completed_tasks, as a restarted Cassandra does.
func (n *Node) resetStageCounters() {
	for i := range n.stages {
		n.stages[i].completed.Store(0)
	}
}

var virtualKeyspaces = map[string]bool{"system_views": true, "system_virtual_schema": true}

// checkVirtual answers Invalid for a virtual table on a node without them.
func (n *Node) checkVirtual(p *plan) error {
	if p != nil && p.sys != nil && virtualKeyspaces[p.sys.ks] && n.noVirtual.Load() {
		return invalidf("Keyspace %s does not exist", p.sys.ks)
	}
	return nil
}

func threadPoolRows(n *Node) [][]any {
	var out [][]any
	for _, tp := range n.ThreadPools() {
		out = append(out, []any{tp.Name, tp.ActiveTasks, tp.ActiveTasksLimit, tp.PendingTasks, tp.CompletedTasks,
			tp.BlockedTasks, int64(0)})
	}
	return out
}

// virtualTables lists the virtual tables in system_virtual_schema order.
var virtualTables = []struct{ ks, name, comment string }{
	{"system_views", "thread_pools", "metrics of internal thread pools"},
	{"system_virtual_schema", "columns", "virtual column definitions"},
	{"system_virtual_schema", "keyspaces", "virtual keyspace definitions"},
	{"system_virtual_schema", "tables", "virtual table definitions"},
}

func virtualKeyspaceRows(*Node) [][]any {
	return [][]any{{"system_views"}, {"system_virtual_schema"}}
}

func virtualTableRows(*Node) [][]any {
	var out [][]any
	for _, t := range virtualTables {
		out = append(out, []any{t.ks, t.name, t.comment})
	}
	return out
}

func virtualColumnRows(*Node) [][]any {
	var out [][]any
	for _, vt := range virtualTables {
		t := sysTables[vt.ks+"."+vt.name]
		for i, c := range t.cols {
			kind, pos := "regular", int32(-1)
			if i < t.pkCols {
				kind, pos = "partition_key", int32(i)
			} else if i < t.pkCols+t.ckCols {
				kind, pos = "clustering", int32(i-t.pkCols)
			}
			order := "none"
			if kind == "clustering" {
				order = "asc"
			}
			typ := c.typName
			if typ == "varchar" {
				typ = "text" // Cassandra's name for UTF8Type
			}
			out = append(out, []any{vt.ks, vt.name, c.name, order, []byte(c.name), kind, pos, typ})
		}
	}
	return out
}

func init() {
	defSys("system_views", "thread_pools", threadPoolRows,
		"name", tText, "active_tasks", datatype.Int, "active_tasks_limit", datatype.Int, "pending_tasks", datatype.Int,
		"completed_tasks", datatype.Bigint, "blocked_tasks", datatype.Bigint, "blocked_tasks_all_time", datatype.Bigint)
	sysTables["system_views.thread_pools"].pkCols = 1
	defSys("system_virtual_schema", "keyspaces", virtualKeyspaceRows, "keyspace_name", tText)
	sysTables["system_virtual_schema.keyspaces"].pkCols = 1
	defSys("system_virtual_schema", "tables", virtualTableRows,
		"keyspace_name", tText, "table_name", tText, "comment", tText)
	sysTables["system_virtual_schema.tables"].pkCols, sysTables["system_virtual_schema.tables"].ckCols = 1, 1
	defSys("system_virtual_schema", "columns", virtualColumnRows,
		"keyspace_name", tText, "table_name", tText, "column_name", tText, "clustering_order", tText,
		"column_name_bytes", datatype.Blob, "kind", tText, "position", datatype.Int, "type", tText)
	sysTables["system_virtual_schema.columns"].pkCols, sysTables["system_virtual_schema.columns"].ckCols = 1, 2
}
