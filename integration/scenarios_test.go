package integration

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
)

// attemptLog records which host each attempt went to and when it started,
// chained in front of the policy's own observer.
type attemptLog struct {
	next gocql.QueryObserver
	mu   sync.Mutex
	at   []attempt
}

type attempt struct {
	start time.Time
	host  string
}

func (l *attemptLog) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if q.Host != nil {
		l.mu.Lock()
		l.at = append(l.at, attempt{q.Start, q.Host.ConnectAddress().String()})
		l.mu.Unlock()
	}
	if l.next != nil {
		l.next.ObserveQuery(ctx, q)
	}
}

// share of attempts started in [from, to) that went to host, and how many there were.
func (l *attemptLog) share(host string, from, to time.Time) (float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n, h int
	for _, a := range l.at {
		if !a.start.Before(from) && a.start.Before(to) {
			n++
			if a.host == host {
				h++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(h) / float64(n), n
}

// session connects with the given policy installer and an attempt log.
func session(t *testing.T, hosts []string, ks string, install func(*gocql.ClusterConfig)) (*gocql.Session, *attemptLog) {
	t.Helper()
	cfg := clusterConfig(hosts)
	cfg.Keyspace = ks
	install(cfg)
	log := &attemptLog{next: cfg.QueryObserver}
	cfg.QueryObserver = log
	s, err := cfg.CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, log
}

func tailroute(t *testing.T, p **policy.Policy) func(*gocql.ClusterConfig) {
	pol, err := policy.New()
	require.NoError(t, err)
	*p = pol
	return func(cfg *gocql.ClusterConfig) { policy.Wire(cfg, pol) }
}

func tokenAwareRR(cfg *gocql.ClusterConfig) {
	cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
}

// op is one read as the application sees it (retries included).
type op struct {
	start time.Time
	lat   time.Duration
	err   error
}

// readLoad runs closed-loop reads of user0..user(keys-1) from `workers`
// goroutines for d and returns every operation.
func readLoad(s *gocql.Session, keys, workers int, d time.Duration) []op {
	var mu sync.Mutex
	var ops []op
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var local []op
			for i := w; time.Now().Before(end); i += workers {
				var v string
				st := time.Now()
				err := s.Query(`SELECT field0 FROM usertable WHERE y_id = ?`, fmt.Sprintf("user%d", i%keys)).Scan(&v)
				local = append(local, op{st, time.Since(st), err})
			}
			mu.Lock()
			ops = append(ops, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return ops
}

// p99 of the operations started in [from, to), and their errors.
func p99(ops []op, from, to time.Time) (time.Duration, int, []error) {
	var lats []time.Duration
	var errs []error
	for _, o := range ops {
		if o.start.Before(from) || !o.start.Before(to) {
			continue
		}
		lats = append(lats, o.lat)
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	if len(lats) == 0 {
		return 0, 0, errs
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return lats[len(lats)*99/100], len(lats), errs
}

// Scenario 1 on five containers: gocql with tailroute discovers every node
// from one contact point, and a key's requests land only on its replicas.
func TestFiveNodesDiscoveryAndReplicaRouting(t *testing.T) {
	c := startCluster(t, 5, "-mean-service", "1ms")
	p, err := policy.New()
	require.NoError(t, err)
	cfg := clusterConfig([]string{c.nodes[0].ip})
	policy.Wire(cfg, p)
	s, err := cfg.CreateSession()
	require.NoError(t, err)
	defer s.Close()

	got := map[string]bool{}
	for _, h := range p.Stats() {
		ip, _, err := net.SplitHostPort(h.Address)
		require.NoError(t, err)
		got[ip] = h.Up
	}
	for _, ip := range c.hosts() {
		assert.True(t, got[ip], "node %s not discovered as up (policy sees %v)", ip, got)
	}

	createSchema(t, s, "routing", 2, 0)
	const key = "user-routing-check"
	require.NoError(t, s.Query(`INSERT INTO routing.usertable (y_id, field0) VALUES (?, 'x')`, key).Exec())
	// Replicas of key with 5 evenly spaced tokens (cqlsim's default, in member
	// order) and RF 2: the first node whose token >= the key's token, and the next.
	toks, kt := sim.SplitTokens(5), sim.Murmur3Token([]byte(key))
	primary := 0
	for i, tok := range toks {
		if tok >= kt {
			primary = i
			break
		}
	}
	if kt > toks[len(toks)-1] {
		primary = 0
	}
	replica := map[int]bool{primary: true, (primary + 1) % 5: true}

	before := make([]uint64, 5)
	for i, n := range c.nodes {
		before[i] = served(t, n)
	}
	for i := 0; i < 300; i++ {
		var v string
		require.NoError(t, s.Query(`SELECT field0 FROM routing.usertable WHERE y_id = ?`, key).Scan(&v))
		require.Equal(t, "x", v)
	}
	var onReplicas uint64
	for i, n := range c.nodes {
		d := served(t, n) - before[i]
		if replica[i] {
			onReplicas += d
		} else {
			assert.Zero(t, d, "non-replica %s served %d reads of %s", n.ip, d, key)
		}
	}
	assert.GreaterOrEqual(t, onReplicas, uint64(300), "the replicas served the reads")
}

// Scenarios 2-4 share one three-node cluster, RF 3 (every node is a replica
// of every key): slow node via the admin endpoint, docker pause, docker stop/start.
func TestThreeNodeFaults(t *testing.T) {
	c := startCluster(t, 3, "-mean-service", "2ms")
	const keys = 300
	setup, _ := session(t, []string{c.nodes[0].ip}, "", tokenAwareRR)
	createSchema(t, setup, "faults", 3, keys)
	setup.Close()

	var pol *policy.Policy
	s, log := session(t, c.hosts(), "faults", tailroute(t, &pol))
	readLoad(s, keys, 8, time.Second) // warm up the policy's estimates

	t.Run("slow node loses its share", func(t *testing.T) {
		slow := c.nodes[2]
		t0 := time.Now()
		readLoad(s, keys, 8, 2*time.Second)
		base, n0 := log.share(slow.ip, t0, time.Now())
		setModel(t, slow, `{"Slowdown": 10}`)
		defer setModel(t, slow, `{"Slowdown": 1}`)
		readLoad(s, keys, 8, time.Second) // adapt
		t1 := time.Now()
		readLoad(s, keys, 8, 3*time.Second)
		slowShare, n1 := log.share(slow.ip, t1, time.Now())
		t.Logf("share of %s: %.3f of %d attempts healthy, %.3f of %d slowed 10x", slow.ip, base, n0, slowShare, n1)
		assert.Greater(t, base, 0.2, "a healthy node gets about a third")
		assert.Less(t, slowShare, 0.5*base, "the slowed node's share must drop")
	})

	t.Run("paused node avoided, p99 far below token-aware round robin", func(t *testing.T) {
		rr, _ := session(t, c.hosts(), "faults", tokenAwareRR)
		victim := c.nodes[1]
		const pauseFor = 2 * time.Second
		type result struct {
			p99  time.Duration
			n    int
			errs []error
			log  float64
			slow float64 // share of reads slower than 200ms
		}
		run := func(s *gocql.Session, l *attemptLog) result {
			var ops []op
			done := make(chan struct{})
			go func() { ops = readLoad(s, keys, 8, 4*time.Second); close(done) }()
			time.Sleep(time.Second)
			pausedAt := time.Now()
			c.pause(t, victim)
			time.Sleep(pauseFor)
			c.unpause(t, victim)
			resumed := time.Now()
			<-done
			r := result{}
			r.p99, r.n, r.errs = p99(ops, pausedAt, resumed)
			var slow int
			for _, o := range ops {
				if !o.start.Before(pausedAt) && o.start.Before(resumed) && o.lat > 200*time.Millisecond {
					slow++
				}
			}
			if r.n > 0 {
				r.slow = float64(slow) / float64(r.n)
			}
			if l != nil {
				// new attempts to the frozen node, from 400 ms after the pause on
				r.log, _ = l.share(victim.ip, pausedAt.Add(400*time.Millisecond), resumed)
			}
			return r
		}
		tr := run(s, log)
		time.Sleep(2 * time.Second) // let connections to the victim recover
		base := run(rr, nil)
		t.Logf("during a %v pause: tailroute p99 %v, %.3f slow, over %d reads (%d errors, %.3f of attempts to the frozen node after 400ms); token-aware RR p99 %v, %.3f slow, over %d reads (%d errors)",
			pauseFor, tr.p99, tr.slow, tr.n, len(tr.errs), tr.log, base.p99, base.slow, base.n, len(base.errs))
		assert.Empty(t, tr.errs, "idempotent reads with a retry policy must not fail")
		assert.Less(t, tr.log, 0.08, "tailroute must stop sending new requests to the frozen node within a few hundred ms")
		// Both p99s sit at the client timeout (the reads in flight on the node
		// when it froze wait for it), so compare how many reads were slow.
		assert.Less(t, tr.slow, 0.25*base.slow, "tailroute's share of reads slower than 200ms during the pause must be far below round robin's")
		assert.LessOrEqual(t, tr.p99, base.p99+50*time.Millisecond)
	})

	t.Run("stopped node: reads succeed; restarted node gets traffic again", func(t *testing.T) {
		victim := c.nodes[2]
		timeout := 2 * time.Second
		require.NoError(t, victim.ctr.Stop(context.Background(), &timeout))
		ops := readLoad(s, keys, 8, 3*time.Second)
		_, n, errs := p99(ops, time.Time{}, time.Now().Add(time.Hour))
		assert.Empty(t, errs, "reads with one of three replicas stopped (of %d)", n)

		require.NoError(t, victim.ctr.Start(context.Background()))
		// A restarted simulator is empty, and gocql's connections to it fail
		// on USE faults until it has the keyspace again: once its admin
		// endpoint answers, create the schema on it directly.
		waitUntil(t, 30*time.Second, func() bool { _, err := tryServed(victim); return err == nil })
		direct := clusterConfig([]string{victim.ip})
		direct.DisableInitialHostLookup = true
		direct.HostFilter = gocql.WhiteListHostFilter(victim.ip)
		ds, err := direct.CreateSession()
		require.NoError(t, err)
		require.NoError(t, ds.Query(`CREATE KEYSPACE IF NOT EXISTS faults WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Exec())
		require.NoError(t, ds.Query(`CREATE TABLE IF NOT EXISTS faults.usertable (y_id text PRIMARY KEY, field0 text)`).Exec())
		ds.Close()
		before := served(t, victim)
		deadline := time.Now().Add(45 * time.Second)
		var got uint64
		for time.Now().Before(deadline) {
			readLoad(s, keys, 4, 500*time.Millisecond)
			if got = served(t, victim) - before; got > 0 {
				break
			}
		}
		if !assert.Greater(t, got, uint64(0), "restarted node %s received no reads within 45s", victim.ip) {
			for _, h := range pol.Stats() {
				t.Logf("policy view: %s up=%v inflight=%d score=%.0f", h.Address, h.Up, h.InFlight, h.Score)
			}
			sh, n := log.share(victim.ip, deadline.Add(-45*time.Second), time.Now())
			t.Logf("attempts to %s since restart: %.3f of %d", victim.ip, sh, n)
		}
	})
}
