package contract

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// Policy is what the scenarios read of an adapter's *Policy.
type Policy interface {
	Err() error
	Stats() []tailroute.HostStats
	Counters() tailroute.Counters
	Strategy() tailroute.Strategy
	LatencyQuantile(q float64) (time.Duration, bool)
}

// Session is one driver session, bound for the scenarios.
type Session struct {
	// Exec runs stmt with args; a non-nil key is set as the query's
	// routing key (Query.RoutingKey).
	Exec func(stmt string, key []byte, args ...any) error
	// Read scans the one text column of a one-row query.
	Read func(stmt string, args ...any) (string, error)
	// ReadFeedback runs stmt with args and gives the policy the response's
	// simulator payload feedback (internal/payload.Record).
	ReadFeedback func(stmt string, args ...any) error
	// TokenAware returns, per keyspace and key, the plan of the driver's
	// own TokenAwareHostPolicy over the policy's hosts with a fallback that
	// plans nothing, so the plan ends where the replicas end.
	TokenAware func() func(ks string, key []byte) []string
	// ExecSpeculative runs stmt with args as an idempotent query with the
	// driver's own SimpleSpeculativeExecution{NumAttempts: 1, TimeoutDelay:
	// delay}.
	ExecSpeculative func(stmt string, delay time.Duration, args ...any) error
	Close           func()
}

// Config is how a test wants its sessions: the keyspace the sessions use
// (ClusterConfig.Keyspace) and, when Log is set, a driver logger writing to
// it.
type Config struct {
	Keyspace string
	Log      *Log
}

// Driver binds one adapter and its driver for the scenarios.
type Driver struct {
	// New is the adapter's New.
	New func(opts ...tailroute.Option) (Policy, error)
	// Sessions wires p into one ClusterConfig for c (5s timeout, 10s
	// connect timeout, 200ms reconnect interval, quiet logger unless
	// cfg.Log) and returns the function that creates a session from it;
	// the test closes every session it created when it ends.
	Sessions func(t testing.TB, c *sim.Cluster, p Policy, cfg Config) func() (Session, error)
	// Plan is p's whole plan for a query on ks with routing key key (Pick,
	// then every host; each host then marked with success), as connect IPs.
	Plan func(p Policy, ks string, key []byte, idempotent bool) []string
	// Replicas is p's replica set for key in ks, as connect IPs; nil when
	// p does not route ks by token (yet).
	Replicas func(p Policy, ks string, key []byte) []string
	// NoConnections is the driver's ErrNoConnections.
	NoConnections error
	// ErrorCodes are the driver's ErrCodeServer, ErrCodeUnavailable,
	// ErrCodeOverloaded, ErrCodeBootstrapping, ErrCodeWriteTimeout,
	// ErrCodeReadTimeout, ErrCodeReadFailure, ErrCodeWriteFailure,
	// ErrCodeSyntax, ErrCodeUnauthorized, ErrCodeInvalid and
	// ErrCodeUnprepared, in this order.
	ErrorCodes []int
}

// Log is a driver logger's lines, as the bindings give them.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Add appends a line.
func (l *Log) Add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

// Find returns the lines containing sub.
func (l *Log) Find(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// Policies runs every policy scenario against d, each as a subtest.
func Policies(t *testing.T, d Driver) {
	run(t, d, []scenario[Driver]{
		{"StrategyRoundTrip", StrategyRoundTrip},
		{"ErrorCodesMatchDriver", ErrorCodesMatchDriver},
		{"ReplicaSetsMatchDriver", ReplicaSetsMatchDriver},
		{"WhatTokenAwarenessNeeds", WhatTokenAwarenessNeeds},
		{"SlowNode", SlowNode},
		{"PausedNode", PausedNode},
		{"NodeDownAndBack", NodeDownAndBack},
		{"LocalDCFirst", LocalDCFirst},
		{"UnknownLocalDC", UnknownLocalDC},
		{"SecondSessionRefused", SecondSessionRefused},
		{"SessionAfterClose", SessionAfterClose},
		{"DriverSpeculation", DriverSpeculation},
	})
}

func (d Driver) policy(t testing.TB, opts ...tailroute.Option) Policy {
	t.Helper()
	p, err := d.New(opts...)
	require.NoError(t, err)
	return p
}

// session opens one session of c through p.
func (d Driver) session(t testing.TB, c *sim.Cluster, p Policy, cfg Config) Session {
	t.Helper()
	s, err := d.Sessions(t, c, p, cfg)()
	require.NoError(t, err)
	return s
}

// createKeyspace creates ks with its usertable (y_id text PRIMARY KEY,
// field0 text) and waits until p routes by its tokens: the v2 driver
// refreshes its schema metadata about a second after a change (debounced)
// and only then tells the policy.
func (d Driver) createKeyspace(t testing.TB, s Session, p Policy, ks, replication string) {
	t.Helper()
	require.NoError(t, s.Exec("CREATE KEYSPACE IF NOT EXISTS "+ks+" WITH replication = "+replication, nil))
	require.NoError(t, s.Exec("CREATE TABLE IF NOT EXISTS "+ks+".usertable (y_id text PRIMARY KEY, field0 text)", nil))
	require.Eventually(t, func() bool { return len(d.Replicas(p, ks, []byte("k"))) > 0 },
		10*time.Second, 50*time.Millisecond, "keyspace %s routed by token", ks)
}

// StrategyRoundTrip pins the adapter's Strategy to the routing engine's:
// each constant's String parses back to itself, WithStrategy accepts it and
// the Policy reports it.
func StrategyRoundTrip(t *testing.T, d Driver) {
	want := map[tailroute.Strategy]string{tailroute.C3: "c3", tailroute.P2C: "p2c", tailroute.RoundRobin: "roundrobin"}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), name)
		}
		got, err := tailroute.ParseStrategy(name)
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", name, got, err, s)
		}
		p, err := d.New(tailroute.WithStrategy(s))
		if err != nil {
			t.Fatalf("New(WithStrategy(%v)): %v", s, err)
		}
		if p.Strategy() != s {
			t.Errorf("Policy.Strategy() = %v, want %v", p.Strategy(), s)
		}
	}
	if got := tailroute.Strategy(7).String(); got != "Strategy(7)" {
		t.Errorf("Strategy(7).String() = %q", got)
	}
}

// ErrorCodesMatchDriver pins the protocol's error codes that
// internal/cqlerr classifies by to the driver's.
func ErrorCodesMatchDriver(t *testing.T, d Driver) {
	assert.Equal(t, []int{cqlerr.CodeServer, cqlerr.CodeUnavailable, cqlerr.CodeOverloaded, cqlerr.CodeBootstrapping,
		cqlerr.CodeWriteTimeout, cqlerr.CodeReadTimeout, cqlerr.CodeReadFailure, cqlerr.CodeWriteFailure,
		cqlerr.CodeSyntax, cqlerr.CodeUnauthorized, cqlerr.CodeInvalid, 0x2500}, d.ErrorCodes)
}

// ReplicaSetsMatchDriver compares the policy's replica sets with those of
// the driver's own TokenAwareHostPolicy on the same ring, and with the
// simulator's data placement, for SimpleStrategy and
// NetworkTopologyStrategy. Both drivers (gocql v1.7.0, v2.1.2) list a host
// twice in some NetworkTopologyStrategy plans with vnodes; their distinct
// set is then contained in ours. Without vnodes their sets are exact.
func ReplicaSetsMatchDriver(t *testing.T, d Driver) {
	keyspaces := map[string]string{
		"rs_simple3": "{'class':'SimpleStrategy','replication_factor':3}",
		"rs_simple1": "{'class':'SimpleStrategy','replication_factor':1}",
		"rs_nts22":   "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}",
		"rs_nts31":   "{'class':'NetworkTopologyStrategy','dc1':3,'dc2':1}",
		"rs_nts_dc1": "{'class':'NetworkTopologyStrategy','dc1':2}",
	}
	dupsAt := map[int]int{}
	for _, vn := range []int{1, 8} {
		t.Run(fmt.Sprintf("vnodes=%d", vn), func(t *testing.T) {
			c := simtest.Start(t, sim.Config{Nodes: 7, DCs: 2, Racks: 2, VNodes: vn, Seed: 3, Model: sim.ServiceModel{ZeroService: true}})
			p := d.policy(t)
			s := d.session(t, c, p, Config{})
			for ks, rep := range keyspaces {
				d.createKeyspace(t, s, p, ks, rep)
			}
			driverPlan := s.TokenAware()
			rng := rand.New(rand.NewPCG(1, uint64(vn)))
			for ks := range keyspaces {
				same, dups := 0, 0
				for i := 0; i < 1500; i++ {
					key := []byte(fmt.Sprintf("user%d", rng.Uint64()))
					theirs := driverPlan(ks, key)
					ours := d.Replicas(p, ks, key)
					require.NotEmpty(t, ours, "%s routed", ks)
					require.Len(t, simtest.Set(ours), len(ours), "%s: no host twice: %v", ks, ours)
					if len(simtest.Set(theirs)) != len(theirs) {
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
				dupsAt[vn] += dups
				t.Logf("%s vnodes=%d: %d identical sets, %d where the driver repeats a host", ks, vn, same, dups)
			}
		})
	}
	assert.Zero(t, dupsAt[1], "without vnodes the driver's sets are exact")
	assert.Positive(t, dupsAt[8], "the driver repeats hosts with vnodes and NTS; if it no longer does, update docs/RESULTS.md and the package docs")
}

// WhatTokenAwarenessNeeds pins the README's rule on keyspace ta with table
// usertable: over a session without ClusterConfig.Keyspace (plain) and one
// whose ClusterConfig.Keyspace is ta (withKS), a bound ? marker on a
// qualified table, or a routing key with the session's keyspace, is
// routed; a literal value, or a routing key without a keyspace, counts as
// Unrouted.
func WhatTokenAwarenessNeeds(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	type session struct {
		Session
		p Policy
	}
	var sessions []session
	for _, keyspace := range []string{"", "ta"} {
		p := d.policy(t)
		s := d.session(t, c, p, Config{Keyspace: keyspace})
		if keyspace == "" {
			d.createKeyspace(t, s, p, "ta", "{'class':'SimpleStrategy','replication_factor':2}")
		}
		sessions = append(sessions, session{s, p})
	}
	const ks = "ta"
	plain, withKS := sessions[0], sessions[1]
	cases := []struct {
		name     string
		s        session
		stmt     string
		key      []byte
		args     []any
		unrouted uint64
	}{
		{"bound marker, qualified table", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
		{"literal value", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"routing key, no keyspace", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", []byte("user1"), nil, 1},
		{"routing key, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", []byte("user1"), nil, 0},
		{"literal value, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"bound marker, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
	}
	for _, c := range cases {
		before := c.s.p.Counters().Unrouted
		if err := c.s.Exec(c.stmt, c.key, c.args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.s.p.Counters().Unrouted - before; got != c.unrouted {
			t.Errorf("%s: Unrouted grew by %d, want %d", c.name, got, c.unrouted)
		}
	}
}

// load reads random keys of ks.usertable with workers goroutines until n
// requests are done (with feedback, each response's payload feedback goes
// to the policy) and returns the requests served per node IP.
func load(t *testing.T, c *sim.Cluster, s Session, ks string, n, workers int, feedback bool) map[string]uint64 {
	t.Helper()
	stmt := "SELECT field0 FROM " + ks + ".usertable WHERE y_id = ?"
	served, errs := simtest.ClosedLoop(c, n, workers, func(rng *rand.Rand) error {
		key := fmt.Sprintf("user%d", rng.IntN(100000))
		if feedback {
			return s.ReadFeedback(stmt, key)
		}
		return s.Exec(stmt, nil, key)
	})
	require.Empty(t, errs)
	return served
}

// SlowNode: 5 simulated nodes, RF 3, one node serving 5x slower. Round
// robin over the replicas sends it about 1/5 of the requests; C3 (with and
// without the simulator's payload feedback) sends it clearly less, P2C
// less. Every read is token-aware and every in-flight count returns to 0.
func SlowNode(t *testing.T, d Driver) {
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
		p := d.policy(t, tailroute.WithStrategy(run.strategy))
		s := d.session(t, c, p, Config{})
		d.createKeyspace(t, s, p, "e2e", "{'class':'SimpleStrategy','replication_factor':3}")
		load(t, c, s, "e2e", 200, 8, run.feedback) // warm up
		unrouted := p.Counters().Unrouted          // DDL has no routing key
		served := load(t, c, s, "e2e", 1600, 8, run.feedback)
		shares[run.name] = simtest.Share(served, slow)
		t.Logf("%-12s slow node share %.3f served %v counters %+v", run.name, shares[run.name], served, p.Counters())
		for _, st := range p.Stats() {
			assert.EqualValues(t, 0, st.InFlight, st.Address)
			if run.feedback {
				assert.True(t, st.HasFeedback, st.Address)
			}
		}
		_, ok := p.LatencyQuantile(0.99)
		assert.True(t, ok)
		assert.Equal(t, unrouted, p.Counters().Unrouted, "every read was token-aware")
		s.Close()
	}
	assert.InDelta(t, 0.2, shares["roundrobin"], 0.06, "round robin: each node is 1 of 3 replicas for 3/5 of the keys")
	assert.Less(t, shares["c3"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["c3+feedback"], 0.6*shares["roundrobin"])
	assert.Less(t, shares["p2c"], shares["roundrobin"])
}

// PausedNode: a node frozen for a while (stop-the-world pause) is avoided
// while it stalls: of the requests sent while it is paused, C3 sends it far
// less than its replica share, and no request fails. The load stops before
// the pause ends, so what is counted does not depend on how many requests
// the machine manages in that time: a request sent to the paused node is
// answered (and counted) when the pause ends.
func PausedNode(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{Workers: 4, MeanService: time.Millisecond}})
	p := d.policy(t)
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "pause", "{'class':'SimpleStrategy','replication_factor':3}")
	load(t, c, s, "pause", 300, 6, false)
	victim := c.Node(c.Hosts()[0])
	const pause = 1500 * time.Millisecond
	start := time.Now()
	victim.Pause(pause)
	served, errs := simtest.ClosedLoopUntil(c, start.Add(pause*2/3), 6, func(rng *rand.Rand) error {
		return s.Exec("SELECT field0 FROM pause.usertable WHERE y_id = ?", nil, fmt.Sprintf("user%d", rng.IntN(100000)))
	})
	require.Empty(t, errs)
	during := served[victim.IP()]
	var tot uint64
	for _, v := range served {
		tot += v
	}
	t.Logf("paused node got %d of the %d requests sent during its pause (its replica share would be 1/3)", during, tot)
	require.Greater(t, tot, uint64(6), "more requests than workers were sent during the pause (test premise)")
	assert.Less(t, float64(during), 0.15*float64(tot), "the paused node is avoided")
}

// NodeDownAndBack: a stopped node is skipped without errors and gets
// traffic again after it restarts.
func NodeDownAndBack(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "updown", "{'class':'SimpleStrategy','replication_factor':3}")
	victim := c.Node(c.Hosts()[1])
	require.NoError(t, victim.Stop())
	require.Eventually(t, func() bool {
		for _, st := range p.Stats() {
			if strings.HasPrefix(st.Address, victim.IP()+":") {
				return !st.Up
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the driver reports the node down")
	served := load(t, c, s, "updown", 200, 4, false)
	assert.Zero(t, served[victim.IP()])
	require.NoError(t, victim.Restart())
	require.Eventually(t, func() bool {
		return load(t, c, s, "updown", 60, 2, false)[victim.IP()] > 5
	}, 15*time.Second, 100*time.Millisecond, "restarted node gets traffic again")
}

// LocalDCFirst: with a local DC, the plan starts with local replicas;
// remote hosts appear only WithRemoteDCs, after the local replicas (remote
// replicas first), and never without it.
func LocalDCFirst(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 6, DCs: 2, Seed: 4, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := dcs(c)
	for _, remote := range []bool{false, true} {
		p := d.policy(t, tailroute.WithLocalDC("dc1"), tailroute.WithRemoteDCs(remote))
		s := d.session(t, c, p, Config{})
		d.createKeyspace(t, s, p, "dcks", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
		for i := 0; i < 200; i++ {
			key := []byte(fmt.Sprintf("user%d", i))
			isRep := map[string]bool{}
			for _, r := range c.ReplicasFor("dcks", key) {
				isRep[r] = true
			}
			ips := d.Plan(p, "dcks", key, true)
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

// dcs returns each node's data center, by IP.
func dcs(c *sim.Cluster) map[string]string {
	out := map[string]string{}
	for _, nd := range c.Nodes() {
		out[nd.IP()] = nd.DC()
	}
	return out
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

// UnknownLocalDC: a local DC that no host is in is reported (log and Err)
// once the session lists its hosts, and queries keep working: a name
// differing only in case falls back to that DC, an unknown one to every
// host.
func UnknownLocalDC(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 4, DCs: 2, Seed: 5, Model: sim.ServiceModel{ZeroService: true}})
	dcOf := dcs(c)
	for _, tc := range []struct {
		name    string
		want    string // in the error
		planDCs []string
	}{
		{"DC1", `using "dc1", which differs only in case`, []string{"dc1"}},
		{"no-such-dc", "every host is treated as local", []string{"dc1", "dc2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := d.New(tailroute.WithLocalDC(tc.name))
			require.NoError(t, err, "not knowable at New")
			log := &Log{}
			s := d.session(t, c, p, Config{Log: log})
			defer s.Close()
			d.createKeyspace(t, s, p, "unknowndc", "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}")
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("user%d", i)
				require.NoError(t, s.Exec("INSERT INTO unknowndc.usertable (y_id, field0) VALUES (?, ?)", nil, key, "v"))
				v, err := s.Read("SELECT field0 FROM unknowndc.usertable WHERE y_id = ?", key)
				require.NoError(t, err)
				assert.Equal(t, "v", v)
			}
			err = p.Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("WithLocalDC(%q)", tc.name))
			assert.Contains(t, err.Error(), `the hosts' data centers: "dc1", "dc2"`)
			assert.Contains(t, err.Error(), tc.want)
			assert.Len(t, log.Find(tc.want), 1, "logged once")

			var planDCs []string
			for _, ip := range d.Plan(p, "unknowndc", []byte("user1"), true) {
				planDCs = append(planDCs, dcOf[ip])
			}
			assert.ElementsMatch(t, tc.planDCs, simtest.Set(planDCs))
		})
	}
}

// SecondSessionRefused checks the rule of a Policy shared by two sessions
// (the adapters' Init): the first, serving, session keeps working (writes
// and reads, before and after the second closes); the second gets no hosts
// (the driver's NoConnections); one log line names the problem and the
// fix; Err returns it.
func SecondSessionRefused(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	log := &Log{}
	open := d.Sessions(t, c, p, Config{Log: log})
	first, err := open()
	require.NoError(t, err)
	defer first.Close()
	d.createKeyspace(t, first, p, "shared", "{'class':'SimpleStrategy','replication_factor':2}")

	const read = "SELECT field0 FROM shared.usertable WHERE y_id = 'a'"
	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'b')", nil))
	require.NoError(t, p.Err())

	second, err := open()
	require.NoError(t, err, "the driver's Init cannot refuse: the second session is created")
	defer second.Close()
	err = p.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "second gocql.Session")
	lines := log.Find("second gocql.Session")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "give each session its own Policy", "the log line says how to fix it")

	require.NoError(t, first.Exec("INSERT INTO shared.usertable (y_id, field0) VALUES ('a', 'c')", nil), "the first session keeps working")
	for range 20 {
		v, err := first.Read(read)
		require.NoError(t, err, "the first session keeps serving reads")
		assert.Equal(t, "c", v)
	}
	_, err = second.Read(read)
	assert.ErrorIs(t, err, d.NoConnections, "the second session gets no hosts")
	assert.Equal(t, 3, len(p.Stats()), "the first session's hosts are kept")
	second.Close()
	_, err = first.Read(read)
	require.NoError(t, err, "closing the second session leaves the first alone")
}

// SessionAfterClose: a config reused after its session closed (a
// reconnect) is served from a clean slate.
func SessionAfterClose(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t)
	open := d.Sessions(t, c, p, Config{})
	s1, err := open()
	require.NoError(t, err)
	d.createKeyspace(t, s1, p, "again", "{'class':'SimpleStrategy','replication_factor':2}")
	require.NoError(t, s1.Exec("INSERT INTO again.usertable (y_id, field0) VALUES ('a', 'b')", nil))
	s1.Close()
	s2, err := open()
	require.NoError(t, err)
	defer s2.Close()
	v, err := s2.Read("SELECT field0 FROM again.usertable WHERE y_id = 'a'")
	require.NoError(t, err)
	assert.Equal(t, "b", v)
	assert.NoError(t, p.Err())
	st := p.Stats()
	assert.Len(t, st, 3)
	var n uint64
	for _, s := range st {
		n += s.TotalAttempts
	}
	assert.EqualValues(t, 1, n, "only the new session's attempt: the hosts started from a clean slate")
}

// DriverSpeculation: the driver's own speculative execution over this
// policy's pooled plans. With RoundRobin ranking a paused replica is first
// for about a third of the reads; a speculative attempt after 20ms on the
// next replica answers them, so no read waits for the pause, none fails,
// and every host's in-flight count returns to zero (race-free under -race,
// late calls included).
func DriverSpeculation(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 8, Model: sim.ServiceModel{ZeroService: true}})
	p := d.policy(t, tailroute.WithStrategy(tailroute.RoundRobin))
	s := d.session(t, c, p, Config{})
	d.createKeyspace(t, s, p, "spec", "{'class':'SimpleStrategy','replication_factor':3}")
	read := func(i int) (time.Duration, error) {
		start := time.Now()
		err := s.ExecSpeculative("SELECT field0 FROM spec.usertable WHERE y_id = ?", 20*time.Millisecond, fmt.Sprintf("user%d", i))
		return time.Since(start), err
	}
	for i := 0; i < 30; i++ { // warm-up
		_, err := read(i)
		require.NoError(t, err)
	}
	// Long enough that the 60 reads end before it does on a loaded
	// machine: a read that waited for the paused replica would be served
	// by it, so the replica's count, unchanged after the reads, says none
	// did (an order of events, not a latency bound).
	const pause = 4 * time.Second
	victim := c.Node(c.Hosts()[0])
	before := victim.Stats().Served
	victim.Pause(pause)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		worst time.Duration
		errs  []error
	)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				d, err := read(w*100 + i)
				mu.Lock()
				worst = max(worst, d)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	held := victim.Stats().InFlight
	require.Empty(t, errs)
	t.Logf("slowest of 60 reads during a %v pause: %v; the paused replica holds %d", pause, worst, held)
	assert.Equal(t, before, victim.Stats().Served, "speculative attempts answered the reads the paused replica held: it served none of them")
	assert.Positive(t, held, "the paused replica was first for some reads (test premise)")
	require.Eventually(t, func() bool {
		for _, st := range p.Stats() {
			if st.InFlight != 0 {
				return false
			}
		}
		return victim.Stats().Served > before
	}, pause+10*time.Second, 20*time.Millisecond, "in-flight counts return to zero once the pause ends")
}
