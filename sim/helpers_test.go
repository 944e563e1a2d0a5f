package sim

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"
)

func startCluster(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Start(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func newSession(t testing.TB, c *Cluster, keyspace string, tokenAware bool) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Keyspace = keyspace
	cl.Timeout = 5 * time.Second
	// 10s: one loaded CI run (race detector, three test packages at once on
	// 2 cores) saw a 1-node cluster not answer gocql's OPTIONS within 5s
	// ("no response to connection startup within timeout"); not reproduced
	// in isolation.
	cl.ConnectTimeout = 10 * time.Second
	// gocql's periodic reconnection of down hosts (default 60s) backs up the
	// STATUS_CHANGE UP event, which a loaded run sometimes loses when the
	// control connection is moving between nodes.
	cl.ReconnectInterval = time.Second
	if tokenAware {
		cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	}
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// createYCSB creates keyspace ks with the given replication and usertable.
func createYCSB(t testing.TB, c *Cluster, ks, replication string, fields int) {
	t.Helper()
	s := newSession(t, c, "", false)
	require.NoError(t, s.Query("CREATE KEYSPACE IF NOT EXISTS "+ks+" WITH replication = "+replication).Exec())
	q := "CREATE TABLE IF NOT EXISTS " + ks + ".usertable (y_id text PRIMARY KEY"
	for i := 0; i < fields; i++ {
		q += ", field" + strconv.Itoa(i) + " text"
	}
	require.NoError(t, s.Query(q+")").Exec())
	s.Close()
}
