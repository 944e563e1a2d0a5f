package policy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/payload"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// simSession connects gocql to c through policy p (wired).
func simSession(t testing.TB, c *sim.Cluster, p *Policy) *gocql.Session {
	t.Helper()
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second // a loaded -race run once saw no answer to the startup within 5s
	cl.ReconnectInterval = 200 * time.Millisecond
	cl.Logger = quietLogger{}
	require.NoError(t, Wire(cl, p))
	s, err := cl.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}

func createKeyspace(t testing.TB, s *gocql.Session, ks, replication string) {
	t.Helper()
	require.NoError(t, s.Query("CREATE KEYSPACE IF NOT EXISTS "+ks+" WITH replication = "+replication).Exec())
	require.NoError(t, s.Query("CREATE TABLE IF NOT EXISTS "+ks+".usertable (y_id text PRIMARY KEY, field0 text)").Exec())
}

// markerFallback ends gocql's token-aware plan where the replicas end: its
// Pick is only reached after the replicas.
type markerFallback struct{ gocql.HostSelectionPolicy }

func (markerFallback) Pick(gocql.ExecutableQuery) gocql.NextHost {
	return func() gocql.SelectedHost { return nil }
}

func hasDup(xs []string) bool { return len(simtest.Set(xs)) != len(xs) }

func (p *Policy) replicaIPs(ks string, key []byte) []string {
	reps, ok := p.r.Replicas(p.query(&fakeQuery{key: key, ks: ks}))
	if !ok {
		return nil
	}
	var out []string
	for _, h := range reps {
		out = append(out, h.ConnectAddress().String())
	}
	return out
}

// TestReplicaSetsMatchGocql compares our replica sets with those of gocql's
// own TokenAwareHostPolicy on the same ring (and with the simulator's data
// placement) for SimpleStrategy and NetworkTopologyStrategy.
func TestReplicaSetsMatchGocql(t *testing.T) {
	keyspaces := map[string]string{
		"rs_simple3": "{'class':'SimpleStrategy','replication_factor':3}",
		"rs_simple1": "{'class':'SimpleStrategy','replication_factor':1}",
		"rs_nts22":   "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}",
		"rs_nts31":   "{'class':'NetworkTopologyStrategy','dc1':3,'dc2':1}",
		"rs_nts_dc1": "{'class':'NetworkTopologyStrategy','dc1':2}",
	}
	for _, vn := range []int{1, 8} {
		t.Run(fmt.Sprintf("vnodes=%d", vn), func(t *testing.T) {
			c := simtest.Start(t, sim.Config{Nodes: 7, DCs: 2, Racks: 2, VNodes: vn, Seed: 3, Model: sim.ServiceModel{ZeroService: true}})
			p, err := New()
			require.NoError(t, err)
			s := simSession(t, c, p)
			for ks, rep := range keyspaces {
				createKeyspace(t, s, ks, rep)
			}
			tap := gocql.TokenAwareHostPolicy(markerFallback{gocql.RoundRobinHostPolicy()})
			tap.Init(s)
			for _, h := range p.r.Hosts() {
				tap.AddHost(h)
			}
			tap.SetPartitioner("org.apache.cassandra.dht.Murmur3Partitioner")
			rng := rand.New(rand.NewPCG(1, uint64(vn)))
			for ks := range keyspaces {
				tap.KeyspaceChanged(gocql.KeyspaceUpdateEvent{Keyspace: ks})
				same, dups := 0, 0
				for i := 0; i < 1500; i++ {
					key := []byte(fmt.Sprintf("user%d", rng.Uint64()))
					next := tap.Pick(&fakeQuery{key: key, ks: ks})
					var theirs []string
					for h := next(); h != nil; h = next() {
						theirs = append(theirs, h.Info().ConnectAddress().String())
					}
					ours := p.replicaIPs(ks, key)
					require.NotEmpty(t, ours, "%s routed", ks)
					require.False(t, hasDup(ours), "%s: no host twice: %v", ks, ours)
					if hasDup(theirs) {
						// gocql lists a vnode host twice (NetworkTopologyStrategy
						// only); its distinct set is contained in ours
						dups++
						require.Contains(t, keyspaces[ks], "NetworkTopology")
						require.Subset(t, ours, simtest.Set(theirs), "%s key %s", ks, key)
					} else {
						require.Equal(t, simtest.Set(theirs), simtest.Set(ours), "%s key %s", ks, key)
						same++
					}
					// and both agree with where the simulator stores the row
					assert.Equal(t, simtest.Set(c.ReplicasFor(ks, key)), simtest.Set(ours), "%s key %s: simulator placement", ks, key)
				}
				t.Logf("%s vnodes=%d: %d identical sets, %d where gocql repeats a host", ks, vn, same, dups)
				if vn == 1 {
					assert.Zero(t, dups)
				}
			}
		})
	}
}

// runLoad reads random keys from ks.usertable with `workers` goroutines
// until n requests are done and returns the requests served per node IP.
func runLoad(t *testing.T, c *sim.Cluster, s *gocql.Session, p *Policy, ks string, n, workers int, feedback bool) map[string]uint64 {
	t.Helper()
	served, errs := simtest.ClosedLoop(c, n, workers, func(rng *rand.Rand) error {
		iter := s.Query("SELECT field0 FROM "+ks+".usertable WHERE y_id = ?", fmt.Sprintf("user%d", rng.IntN(100000))).Iter()
		if feedback {
			payload.Record(p, iter.Host(), iter.GetCustomPayload())
		}
		return iter.Close()
	})
	require.Empty(t, errs)
	return served
}

// TestEndToEndSlowNode: 5 simulated nodes, RF 3, one node serving 5x slower.
// Round robin over the replicas sends it about 1/5 of the requests; C3 (with
// and without server feedback) sends it clearly less. Ratio-based bounds.
func TestEndToEndSlowNode(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 5, Seed: 11, Feedback: true, Model: sim.ServiceModel{Workers: 4, MeanService: 2 * time.Millisecond}})
	slow := c.Hosts()[2]
	m := c.Node(slow).Model()
	m.Slowdown = 5
	require.NoError(t, c.Node(slow).SetModel(m))

	shares := map[string]float64{}
	for _, run := range []struct {
		name     string
		strategy tailroute.Strategy
		feedback bool
	}{{"roundrobin", tailroute.RoundRobin, false}, {"c3", tailroute.C3, false}, {"c3+feedback", tailroute.C3, true}, {"p2c", tailroute.P2C, false}} {
		p, err := New(tailroute.WithStrategy(run.strategy))
		require.NoError(t, err)
		s := simSession(t, c, p)
		createKeyspace(t, s, "e2e", "{'class':'SimpleStrategy','replication_factor':3}")
		runLoad(t, c, s, p, "e2e", 200, 8, run.feedback) // warm up
		unrouted := p.Counters().Unrouted                // DDL has no routing key
		served := runLoad(t, c, s, p, "e2e", 1600, 8, run.feedback)
		shares[run.name] = simtest.Share(served, slow)
		t.Logf("%-12s slow node share %.3f served %v counters %+v", run.name, shares[run.name], served, p.Counters())
		for _, st := range p.Stats() {
			assert.EqualValues(t, 0, st.InFlight, st.Address)
			if run.feedback {
				assert.True(t, st.HasFeedback, st.Address)
			}
		}
		_, ok := p.r.Tracker().LatencyQuantile(0.99)
		assert.True(t, ok)
		assert.Equal(t, unrouted, p.Counters().Unrouted, "every read was token-aware")
		s.Close()
	}
	assert.InDelta(t, 0.2, shares["roundrobin"], 0.06, "round robin: each node is 1 of 3 replicas for 3/5 of the keys")
	assert.Less(t, shares["c3"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["c3+feedback"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["p2c"], shares["roundrobin"])
}

// TestEndToEndNodeDownAndBack: a stopped node is skipped without errors and
// gets traffic again after it restarts.
func TestEndToEndNodeDownAndBack(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New()
	require.NoError(t, err)
	s := simSession(t, c, p)
	createKeyspace(t, s, "updown", "{'class':'SimpleStrategy','replication_factor':3}")
	victim := c.Node(c.Hosts()[1])
	require.NoError(t, victim.Stop())
	require.Eventually(t, func() bool {
		for _, st := range p.Stats() {
			if strings.HasPrefix(st.Address, victim.IP()+":") {
				return !st.Up
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "gocql reports the node down")
	served := runLoad(t, c, s, p, "updown", 200, 4, false)
	assert.Zero(t, served[victim.IP()])
	require.NoError(t, victim.Restart())
	require.Eventually(t, func() bool {
		return runLoad(t, c, s, p, "updown", 60, 2, false)[victim.IP()] > 5
	}, 15*time.Second, 100*time.Millisecond, "restarted node gets traffic again")
}

// TestLocalDCFirst: with a local DC, the plan starts with local replicas;
// remote hosts appear only WithRemoteDCs, after the local replicas (remote
// replicas first), and never without it.
func TestLocalDCFirst(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 6, DCs: 2, Seed: 4, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := map[string]string{}
	for _, nd := range c.Nodes() {
		dcOf[nd.IP()] = nd.DC()
	}
	for _, remote := range []bool{false, true} {
		p, err := New(tailroute.WithLocalDC("dc1"), tailroute.WithRemoteDCs(remote))
		require.NoError(t, err)
		s := simSession(t, c, p)
		createKeyspace(t, s, "dcks", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
		for i := 0; i < 200; i++ {
			key := []byte(fmt.Sprintf("user%d", i))
			reps := c.ReplicasFor("dcks", key)
			isRep := map[string]bool{}
			for _, r := range reps {
				isRep[r] = true
			}
			qi := &fakeQuery{key: key, ks: "dcks", idempotent: true}
			next := p.Pick(qi)
			var ips []string
			var hs []gocql.SelectedHost
			for h := next(); h != nil; h = next() {
				ips = append(ips, h.Info().ConnectAddress().String())
				hs = append(hs, h)
			}
			for _, h := range hs {
				h.Mark(nil)
			}
			require.Len(t, simtest.Set(ips), len(ips), "no host twice")
			// expected sections: local replicas, [remote replicas], local others, [remote others]
			var kinds []string
			for _, ip := range ips {
				k := "local-"
				if dcOf[ip] != "dc1" {
					k = "remote-"
				}
				if isRep[ip] {
					k += "replica"
				} else {
					k += "other"
				}
				kinds = append(kinds, k)
			}
			want := []string{"local-replica"}
			if remote {
				want = append(want, "remote-replica")
			}
			want = append(want, "local-other")
			if remote {
				want = append(want, "remote-other")
			}
			assert.Equal(t, want, compact(kinds), "key %s plan %v", key, ips)
			assert.Equal(t, []string{"local-replica", "local-replica"}, kinds[:2])
			assert.Len(t, ips, map[bool]int{false: 3, true: 6}[remote])
		}
		s.Close()
	}
}

// compact collapses runs of equal strings.
func compact(xs []string) []string {
	var out []string
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}
