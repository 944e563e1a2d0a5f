package sim

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connectRecorder records the hosts gocql opened connections to.
type connectRecorder struct {
	mu    sync.Mutex
	hosts map[string]bool
}

func (r *connectRecorder) ObserveConnect(c gocql.ObservedConnect) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.Err == nil {
		r.hosts[c.Host.ConnectAddress().String()] = true
	}
}

func (r *connectRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for h := range r.hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

func TestGocqlDiscoversAllPeers(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d-nodes", n), func(t *testing.T) {
			c := startCluster(t, Config{Nodes: n, DCs: 1, Model: ServiceModel{ZeroService: true}})
			rec := &connectRecorder{hosts: map[string]bool{}}
			cl := gocql.NewCluster(c.Hosts()[0]) // only one contact point
			cl.Port = c.Port()
			cl.ConnectObserver = rec
			s, err := cl.CreateSession()
			require.NoError(t, err)
			defer s.Close()
			want := c.Hosts()
			sort.Strings(want)
			require.Eventually(t, func() bool { return len(rec.list()) == n }, 10*time.Second, 20*time.Millisecond)
			assert.Equal(t, want, rec.list())

			// every node reports itself and its peers
			var peers []string
			iter := s.Query("SELECT rpc_address, data_center, rack FROM system.peers").Iter()
			var ip, dc, rack string
			for iter.Scan(&ip, &dc, &rack) {
				peers = append(peers, ip)
				assert.Equal(t, "dc1", dc)
				assert.Equal(t, "rack1", rack)
			}
			require.NoError(t, iter.Close())
			assert.Len(t, peers, n-1)
		})
	}
}

func servedBy(c *Cluster) map[string]uint64 {
	out := map[string]uint64{}
	for _, n := range c.Nodes() {
		out[n.IP()] = n.Stats().Served
	}
	return out
}

func TestTokenAwareRoutingHitsReplicas(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		repl string
		rf   int
	}{
		{"simple-rf1-3n", Config{Nodes: 3}, "{'class':'SimpleStrategy','replication_factor':1}", 1},
		{"simple-rf2-5n-vnodes", Config{Nodes: 5, VNodes: 8, Seed: 7}, "{'class':'SimpleStrategy','replication_factor':2}", 2},
		{"nts-2dc-2racks", Config{Nodes: 6, DCs: 2, Racks: 2, VNodes: 4, Seed: 3}, "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':1}", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Model = ServiceModel{ZeroService: true}
			c := startCluster(t, tc.cfg)
			createYCSB(t, c, "ycsb", tc.repl, 2)
			s := newSession(t, c, "ycsb", true)
			for i := 0; i < 60; i++ {
				key := fmt.Sprintf("user%d", i*7919)
				reps := c.ReplicasFor("ycsb", []byte(key))
				require.Len(t, reps, tc.rf)
				before := servedBy(c)
				require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", key, "v").Exec())
				after := servedBy(c)
				var hit []string
				for ip, v := range after {
					if v != before[ip] {
						hit = append(hit, ip)
					}
				}
				require.Len(t, hit, 1, "key %s", key)
				// with NTS gocql's local DC is every DC under RoundRobin, so any replica is fine
				assert.Contains(t, reps, hit[0], "key %s served by %s, replicas %v", key, hit[0], reps)
				// the row is stored on every replica and only there
				for _, n := range c.Nodes() {
					has := n.store.get("ycsb", "usertable", []byte(key)) != nil
					isRep := false
					for _, r := range reps {
						isRep = isRep || r == n.IP()
					}
					assert.Equal(t, isRep, has, "key %s on %s", key, n.IP())
				}
			}
		})
	}
}
