package sim

import (
	"context"
	"fmt"
	"net"
	"sort"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freePort returns a port currently free on every ip.
func freePort(t *testing.T, ips []string) int {
	lns, port, err := listenAll(context.Background(), ips, 0)
	require.NoError(t, err)
	for _, l := range lns {
		l.Close()
	}
	return port
}

// TestProcessModeCluster runs three StartNode "processes" (one node each,
// peers from config) and drives them with gocql as if they were separate.
func TestProcessModeCluster(t *testing.T) {
	ips := []string{"127.0.0.21", "127.0.0.22", "127.0.0.23"}
	var nodes []*Cluster
	var cqlPort int
	for attempt := 0; attempt < 5 && nodes == nil; attempt++ {
		cqlPort = freePort(t, ips)
		adminPort := freePort(t, ips)
		toks := SplitTokens(3)
		peers := make([]PeerConfig, 3)
		for i, ip := range ips {
			peers[i] = PeerConfig{IP: ip, DC: "dc1", Rack: fmt.Sprintf("rack%d", i%2+1), Tokens: []int64{toks[i]},
				Admin: net.JoinHostPort(ip, fmt.Sprint(adminPort))}
		}
		var started []*Cluster
		var err error
		for i := range ips {
			var others []PeerConfig
			for j := range ips {
				if j != i {
					others = append(others, peers[j])
				}
			}
			var c *Cluster
			c, err = StartNode(context.Background(), NodeConfig{Self: peers[i], Port: cqlPort, Peers: others,
				AdminListen: peers[i].Admin, Model: ServiceModel{ZeroService: true}})
			if err != nil {
				break
			}
			started = append(started, c)
		}
		if err != nil { // a port was taken meanwhile: retry
			for _, c := range started {
				c.Close()
			}
			continue
		}
		nodes = started
	}
	require.Len(t, nodes, 3)
	t.Cleanup(func() {
		for _, c := range nodes {
			assert.NoError(t, c.Close())
		}
	})
	hosts := nodes[1].Hosts()
	sort.Strings(hosts)
	assert.Equal(t, ips, hosts, "each process knows every member")

	rec := &connectRecorder{hosts: map[string]bool{}}
	cl := gocql.NewCluster(ips[0])
	cl.Port = cqlPort
	cl.ConnectObserver = rec
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s, err := cl.CreateSession()
	require.NoError(t, err)
	defer s.Close()
	require.Eventually(t, func() bool { return len(rec.list()) == 3 }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, s.Query("CREATE KEYSPACE ycsb WITH replication = {'class':'NetworkTopologyStrategy','dc1':2}").Exec())
	require.NoError(t, s.Query("CREATE TABLE ycsb.usertable (y_id text PRIMARY KEY, field0 text)").Exec())
	for _, c := range nodes {
		require.NotNil(t, c.schema.table("ycsb", "usertable"), "DDL forwarded to every process")
	}
	s2 := newSessionHosts(t, ips, cqlPort, "ycsb")
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("user%d", i)
		require.NoError(t, s2.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", key, "v"+key).Exec())
		reps := nodes[0].ReplicasFor("ycsb", []byte(key))
		require.Len(t, reps, 2)
		for _, c := range nodes {
			n := c.Nodes()[0]
			isRep := n.IP() == reps[0] || n.IP() == reps[1]
			assert.Equal(t, isRep, n.store.get("ycsb", "usertable", []byte(key)) != nil, "key %s on %s", key, n.IP())
		}
		// a read on a non-replica coordinator is forwarded to a replica
		for _, ip := range ips {
			on := sessionOnHosts(t, cqlPort, "ycsb", ip)
			var f string
			require.NoError(t, on.Query("SELECT field0 FROM usertable WHERE y_id = ?", key).Scan(&f), "via %s", ip)
			assert.Equal(t, "v"+key, f)
			on.Close()
		}
	}
	var n int64
	require.NoError(t, s2.Query("SELECT count(*) FROM usertable").Scan(&n))
	assert.EqualValues(t, 30, n, "scans merge all processes")
}

func newSessionHosts(t *testing.T, hosts []string, port int, ks string) *gocql.Session {
	cl := gocql.NewCluster(hosts...)
	cl.Port = port
	cl.Keyspace = ks
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func sessionOnHosts(t *testing.T, port int, ks, ip string) *gocql.Session {
	cl := gocql.NewCluster(ip)
	cl.Port = port
	cl.Keyspace = ks
	cl.HostFilter = gocql.WhiteListHostFilter(ip)
	s, err := cl.CreateSession()
	require.NoError(t, err)
	return s
}
