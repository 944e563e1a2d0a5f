package sim

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinnedSession connects gocql to one node only.
func pinnedSession(t *testing.T, c *Cluster, ip string) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(ip)
	cl.Port = c.Port()
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second
	cl.HostFilter = gocql.WhiteListHostFilter(ip)
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

type tpRow struct {
	name                       string
	active, limit, pending     int
	completed, blocked, blkAll int64
}

func readThreadPools(t *testing.T, s *gocql.Session, where string) []tpRow {
	t.Helper()
	iter := s.Query("SELECT * FROM system_views.thread_pools" + where).Iter()
	var out []tpRow
	var r tpRow
	for iter.Scan(&r.name, &r.active, &r.limit, &r.pending, &r.completed, &r.blocked, &r.blkAll) {
		out = append(out, r)
	}
	require.NoError(t, iter.Close())
	return out
}

func poolByName(rows []tpRow, name string) tpRow {
	for _, r := range rows {
		if r.name == name {
			return r
		}
	}
	return tpRow{name: "missing " + name}
}

func TestThreadPoolsFollowTheQueueModel(t *testing.T) {
	c := startCluster(t, Config{Nodes: 2, Model: ServiceModel{Workers: 2, MeanService: 40 * time.Millisecond}})
	createYCSB(t, c, "ycsb", "{'class': 'SimpleStrategy', 'replication_factor': 2}", 1)
	ip0, ip1 := c.Hosts()[0], c.Hosts()[1]
	s0, s1 := pinnedSession(t, c, ip0), pinnedSession(t, c, ip1)

	// The column metadata is Cassandra 4.0's.
	iter := s0.Query("SELECT * FROM system_views.thread_pools").Iter()
	var names, types []string
	for _, col := range iter.Columns() {
		names = append(names, col.Name)
		types = append(types, col.TypeInfo.Type().String())
	}
	require.NoError(t, iter.Close())
	assert.Equal(t, []string{"name", "active_tasks", "active_tasks_limit", "pending_tasks", "completed_tasks",
		"blocked_tasks", "blocked_tasks_all_time"}, names)
	assert.Equal(t, []string{"varchar", "int", "int", "int", "bigint", "bigint", "bigint"}, types)

	idle := readThreadPools(t, s0, "")
	require.Len(t, idle, 2)
	assert.Equal(t, tpRow{name: StageRead, limit: 2}, poolByName(idle, StageRead))
	assert.Equal(t, tpRow{name: StageMutation, limit: 2}, poolByName(idle, StageMutation))

	require.NoError(t, s0.Query("INSERT INTO ycsb.usertable (y_id, field0) VALUES ('k', 'v')").Exec())
	assert.EqualValues(t, 1, poolByName(readThreadPools(t, s0, ""), StageMutation).completed)

	// 12 reads on node 0 with 2 workers of 40 ms: 2 active, the rest pending.
	const reads = 12
	var wg sync.WaitGroup
	for i := 0; i < reads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v string
			assert.NoError(t, s0.Query("SELECT field0 FROM ycsb.usertable WHERE y_id = 'k'").Scan(&v))
		}()
	}
	require.Eventually(t, func() bool {
		r := poolByName(readThreadPools(t, s0, " WHERE name = 'ReadStage'"), StageRead)
		return r.active == 2 && r.pending >= 4
	}, 5*time.Second, 5*time.Millisecond, "node 0's ReadStage never showed the queue")
	// Only the node queried answers for itself: node 1 serves nothing.
	assert.Equal(t, tpRow{name: StageRead, limit: 2}, poolByName(readThreadPools(t, s1, ""), StageRead))
	wg.Wait()

	one := readThreadPools(t, s0, " WHERE name = 'ReadStage'")
	require.Len(t, one, 1)
	assert.Equal(t, tpRow{name: StageRead, limit: 2, completed: reads}, one[0])
	assert.Empty(t, readThreadPools(t, s0, " WHERE name = 'NoSuchStage'"))

	// A restart resets the counters, as Cassandra's do.
	n0 := c.Node(ip0)
	require.NoError(t, n0.Stop())
	require.NoError(t, n0.Restart())
	for _, tp := range n0.ThreadPools() {
		assert.Zero(t, tp.CompletedTasks, tp.Name)
	}
}

func TestVirtualKeyspacesAreDescribedLikeCassandra4(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	s := pinnedSession(t, c, c.Hosts()[0])

	var ks, table, comment string
	var tables []string
	iter := s.Query("SELECT keyspace_name, table_name, comment FROM system_virtual_schema.tables WHERE keyspace_name = 'system_views'").Iter()
	for iter.Scan(&ks, &table, &comment) {
		tables = append(tables, ks+"."+table)
	}
	require.NoError(t, iter.Close())
	assert.Equal(t, []string{"system_views.thread_pools"}, tables)

	var col, kind, typ string
	var pos int
	cols := map[string]string{}
	iter = s.Query("SELECT column_name, kind, position, type FROM system_virtual_schema.columns WHERE keyspace_name = 'system_views' AND table_name = 'thread_pools'").Iter()
	for iter.Scan(&col, &kind, &pos, &typ) {
		cols[col] = kind + "/" + typ
	}
	require.NoError(t, iter.Close())
	assert.Equal(t, "partition_key/text", cols["name"])
	assert.Equal(t, "regular/int", cols["pending_tasks"])
	assert.Equal(t, "regular/bigint", cols["completed_tasks"])

	// Like Cassandra 4.0, system_schema does not list virtual keyspaces, so
	// gocql's keyspace metadata does not see them.
	var n int
	require.NoError(t, s.Query("SELECT count(*) FROM system_schema.keyspaces WHERE keyspace_name = 'system_views'").Scan(&n))
	assert.Zero(t, n)
	_, err := s.KeyspaceMetadata("system_views")
	assert.ErrorIs(t, err, gocql.ErrKeyspaceDoesNotExist)

	// Read-only, and unknown virtual tables are Invalid.
	assert.Error(t, s.Query("INSERT INTO system_views.thread_pools (name) VALUES ('x')").Exec())
	assert.Error(t, s.Query("SELECT * FROM system_views.no_such_table").Exec())
}

func TestNodeWithoutVirtualTablesAnswersInvalidLikeCassandra3(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	s := pinnedSession(t, c, c.Hosts()[0])
	c.Nodes()[0].SetVirtualTables(false)
	for _, q := range []string{"SELECT * FROM system_views.thread_pools", "SELECT * FROM system_views.thread_pools WHERE name = 'ReadStage'"} {
		err := s.Query(q).Exec()
		var re gocql.RequestError
		require.True(t, errors.As(err, &re), "%s: %v", q, err)
		assert.Equal(t, gocql.ErrCodeInvalid, re.Code(), q)
		assert.Contains(t, re.Message(), "system_views")
	}
	c.Nodes()[0].SetVirtualTables(true)
	assert.NoError(t, s.Query("SELECT * FROM system_views.thread_pools").Exec())
}

// TestThreadPoolsWaitForPause: a stopped node reports no load either: a
// thread_pools query sent during a pause is answered after it ends, while
// system.local is still answered at once.
func TestThreadPoolsWaitForPause(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	s := pinnedSession(t, c, c.Hosts()[0])
	readThreadPools(t, s, "") // prepared before the pause
	const pause = 2 * time.Second
	start := time.Now()
	c.Nodes()[0].Pause(pause)
	var key string
	require.NoError(t, s.Query("SELECT key FROM system.local").Scan(&key))
	assert.Less(t, time.Since(start), pause/2, "system.local answered during the pause")
	readThreadPools(t, s, "")
	assert.GreaterOrEqual(t, time.Since(start), pause-5*time.Millisecond, "thread_pools answered only after the pause")
}
