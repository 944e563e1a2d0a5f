package policy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/contract"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// The server-load tests both adapters run (this file is the source of
// apache/policy/serverload_shared_test.go, see internal/v2gen).

// Polling is on by default for C3 (within the default budget); off with
// WithServerLoad(false) and for the strategies that do not read it.
func TestServerLoadOptions(t *testing.T) {
	p, err := New()
	require.NoError(t, err)
	cfg := p.r.Config()
	assert.True(t, cfg.ServerLoad, "on by default")
	assert.Equal(t, tailroute.DefaultPollShare, cfg.PollShare)
	assert.Equal(t, tailroute.DefaultPollMinInterval, cfg.PollMin)
	assert.Equal(t, tailroute.DefaultPollMaxInterval, cfg.PollMax)
	assert.Equal(t, ServerLoadCounters{}, p.ServerLoadCounters(), "no session yet")
	_, err = New(tailroute.WithPollBudget(0, time.Second, time.Second))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithPollBudget: PollShare = 0, allowed (0, 1]")
	p, err = New(tailroute.WithServerLoad(false))
	require.NoError(t, err)
	assert.False(t, p.r.Config().ServerLoad)
}

// fixedPoll polls every d (WithPollBudget(1, d, d)): one poll per request
// at most.
func fixedPoll(d time.Duration) tailroute.Option { return tailroute.WithPollBudget(1, d, d) }

// keepSending sends reads, one a millisecond, of keys whose only replica
// is ip (in a keyspace of replication factor 1) until stop is called or
// the test ends: requests that earn the poller its credit
// (WithPollBudget) without measuring any other host.
func keepSending(t *testing.T, s *gocql.Session, p *Policy, ip string) (stop func()) {
	t.Helper()
	const ks = "slsend"
	createKeyspace(t, s, p, ks, "{'class':'SimpleStrategy','replication_factor':1}")
	var keys []string
	for i := 0; len(keys) < 8; i++ {
		if k := fmt.Sprint("k", i); fmt.Sprint(p.replicaIPs(ks, []byte(k))) == fmt.Sprint([]string{ip}) {
			keys = append(keys, k)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			var v string
			_ = s.Query("SELECT field0 FROM "+ks+".usertable WHERE y_id = ?", keys[i%len(keys)]).WithContext(ctx).Scan(&v)
			time.Sleep(time.Millisecond)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// countPolls wraps the poller's query to count the polls of each host, by
// IP, whatever their outcome.
func countPolls(p *Policy) func() map[string]int {
	var mu sync.Mutex
	n := map[string]int{}
	q := p.pollQuery
	p.pollQuery = func(ctx context.Context, s *gocql.Session, e *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
		mu.Lock()
		n[e.ConnectAddress().String()]++
		mu.Unlock()
		return q(ctx, s, e, id)
	}
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(n)
	}
}

// insertRows creates keyspace ks (replication factor 3) and inserts n rows
// through s: user requests, which earn poll credit.
func insertRows(t *testing.T, s *gocql.Session, p *Policy, ks string, n int) {
	t.Helper()
	createKeyspace(t, s, p, ks, "{'class':'SimpleStrategy','replication_factor':3}")
	for i := 0; i < n; i++ {
		require.NoError(t, s.Query("INSERT INTO "+ks+".usertable (y_id, field0) VALUES (?, 'v')", fmt.Sprint(i)).Exec())
	}
}

// A policy with no option polls (C3, the default budget): samples arrive
// as the client sends, the counters show the cost, and each host is polled
// within the budget (the warm-up, the first credit, share/M per request).
func TestServerLoadOnByDefault(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 9, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	p, err := New()
	require.NoError(t, err)
	polls := countPolls(p)
	insertRows(t, loadSession(t, c, p, quietLogger{}), p, "sldef", 100)
	require.Eventually(t, func() bool { return p.ServerLoadCounters().Samples > 0 }, 10*time.Second, 10*time.Millisecond,
		"polled by default: %+v", p.ServerLoadCounters())
	lc := p.ServerLoadCounters()
	t.Logf("counters %+v, polls by host %v", lc, polls())
	assert.GreaterOrEqual(t, lc.Requests, uint64(100))
	assert.Greater(t, lc.PollsPerSecond, 0.0)
	assert.GreaterOrEqual(t, lc.Interval, tailroute.DefaultPollMinInterval)
	assert.LessOrEqual(t, lc.Interval, tailroute.DefaultPollMaxInterval)
	assert.Empty(t, lc.Skipped)
	for ip, n := range polls() {
		assert.LessOrEqual(t, float64(n), route.WarmPolls+1+tailroute.DefaultPollShare*float64(p.ServerLoadCounters().Requests)/3, ip)
	}
}

// A cluster that does not serve system_views.thread_pools (Cassandra 3.x
// on every node) is polled no more once each host has answered so, and
// costs one log line; user queries see nothing of it. (A poll that times
// out, as one may on a busy machine, is not an answer: that host is polled
// again.)
func TestServerLoadOffOnLegacyCluster(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 10, Model: sim.ServiceModel{Workers: 4, MeanService: time.Millisecond}})
	for _, ip := range c.Hosts() {
		c.Node(ip).SetVirtualTables(false)
	}
	p, err := New(tailroute.WithPollBudget(1, 50*time.Millisecond, 50*time.Millisecond))
	require.NoError(t, err)
	var mu sync.Mutex
	refused := map[string]int{}      // host -> polls answered Invalid
	afterRefusal := map[string]int{} // host -> polls sent after such an answer
	q := p.pollQuery
	p.pollQuery = func(ctx context.Context, s *gocql.Session, e *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
		ip := e.ConnectAddress().String()
		mu.Lock()
		if refused[ip] > 0 {
			afterRefusal[ip]++
		}
		mu.Unlock()
		smp, err := q(ctx, s, e, id)
		if permanentPollError(err) {
			mu.Lock()
			refused[ip]++
			mu.Unlock()
		}
		return smp, err
	}
	log := &contract.Log{}
	s := loadSession(t, c, p, logTo(log))
	insertRows(t, s, p, "sl3x", 300)
	require.Eventually(t, func() bool { return len(p.ServerLoadCounters().Skipped) == 3 }, 10*time.Second, 5*time.Millisecond)
	for i := 0; i < 300; i++ {
		var v string
		require.NoError(t, s.Query("SELECT field0 FROM sl3x.usertable WHERE y_id = ?", fmt.Sprint(i)).Scan(&v))
	}
	lc := p.ServerLoadCounters()
	mu.Lock()
	assert.Equal(t, map[string]int{c.Hosts()[0]: 1, c.Hosts()[1]: 1, c.Hosts()[2]: 1}, refused, "each host answered Invalid once")
	assert.Empty(t, afterRefusal, "and was not polled again")
	mu.Unlock()
	assert.Equal(t, lc.Polls, lc.Failures, "every poll failed")
	assert.Zero(t, lc.Samples)
	assert.Len(t, log.Find("server-load polling is off"), 1, "one log line per policy")
	for _, st := range p.Stats() {
		assert.False(t, st.HasServerLoad, st.Address)
	}
}

// WithServerLoad(false), and P2C (which does not read it), poll nothing.
func TestServerLoadOffNoPoll(t *testing.T) {
	for _, opt := range []tailroute.Option{tailroute.WithServerLoad(false), tailroute.WithStrategy(tailroute.P2C)} {
		c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 11, Model: sim.ServiceModel{ZeroService: true}})
		p, err := New(opt, tailroute.WithPollBudget(1, 10*time.Millisecond, 10*time.Millisecond))
		require.NoError(t, err)
		polls := countPolls(p)
		insertRows(t, loadSession(t, c, p, quietLogger{}), p, "sloff", 200)
		time.Sleep(50 * time.Millisecond) // 5 poll intervals: a poller, if any, would poll
		assert.Empty(t, polls())
		assert.Equal(t, ServerLoadCounters{}, p.ServerLoadCounters())
		for _, st := range p.Stats() {
			assert.False(t, st.HasServerLoad, st.Address)
		}
	}
}

// Many clients on one cluster, each polling at a fixed 10 ms within a
// tenth of its own requests: each client polls each node at most
// route.WarmPolls + 1 + share*R/M times for its R requests (the warm-up:
// the zero service time gives no 1/mu_s). Each client keeps sending until
// it has polled every node more than the warm-up allows, so the bound is
// checked where the budget, not the warm-up, holds the polls back. (How
// many polls a fixed number of requests buys depends on how long they
// take: the bucket holds one credit, so credit earned faster than a poll
// per interval is lost.)
func TestServerLoadPollsBoundedByRequests(t *testing.T) {
	const (
		clients = 12
		share   = 0.1
		maxReqs = 20000 // per client: the test ends well before, or fails
	)
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 12, Model: sim.ServiceModel{ZeroService: true}})
	ps := make([]*Policy, clients)
	ss := make([]*gocql.Session, clients)
	counts := make([]func() map[string]int, clients)
	for i := range ps {
		p, err := New(tailroute.WithPollBudget(share, 10*time.Millisecond, 10*time.Millisecond))
		require.NoError(t, err)
		ps[i], counts[i] = p, countPolls(p)
		ss[i] = loadSession(t, c, p, quietLogger{})
	}
	createKeyspace(t, ss[0], ps[0], "slmany", "{'class':'SimpleStrategy','replication_factor':3}")
	const beyond = route.WarmPolls + 1
	beyondWarmUp := func(i int) bool {
		n := counts[i]()
		return len(n) == 3 && n[c.Hosts()[0]] >= beyond && n[c.Hosts()[1]] >= beyond && n[c.Hosts()[2]] >= beyond
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range ss {
		wg.Add(1)
		go func(i int, s *gocql.Session) {
			defer wg.Done()
			for j := 0; j < maxReqs && !beyondWarmUp(i); j++ {
				var v string
				if err := s.Query("SELECT field0 FROM slmany.usertable WHERE y_id = ?", fmt.Sprint(j)).Scan(&v); !errors.Is(err, gocql.ErrNotFound) {
					errs <- err
					return
				}
			}
		}(i, ss[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	time.Sleep(100 * time.Millisecond) // 10 poll intervals more: a client polling beyond its credit would show
	for i, p := range ps {
		lc := p.ServerLoadCounters()
		assert.True(t, beyondWarmUp(i), "client %d: every node polled beyond the warm-up within %d requests: %v", i, lc.Requests, counts[i]())
		bound := route.WarmPolls + 1 + share*float64(lc.Requests)/3
		for ip, n := range counts[i]() {
			assert.LessOrEqual(t, float64(n), bound, "client %d, node %s: %d polls for %d requests", i, ip, n, lc.Requests)
		}
	}
}

// loadSession connects through p (wired) with logger.
func loadSession(t *testing.T, c *sim.Cluster, p *Policy, logger driverLogger) *gocql.Session {
	t.Helper()
	s, err := simConfig(t, c, p, logger).CreateSession()
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func hostStats(p *Policy, ip string) HostStats {
	for _, st := range p.Stats() {
		if strings.HasPrefix(st.Address, ip+":") {
			return st
		}
	}
	return HostStats{}
}

// pollRecorder wraps the poller's query to record each host's samples.
type pollRecorder struct {
	mu      sync.Mutex
	samples map[string][]route.ThreadPoolSample
}

func recordPolls(p *Policy) *pollRecorder {
	r := &pollRecorder{samples: map[string][]route.ThreadPoolSample{}}
	q := p.pollQuery
	p.pollQuery = func(ctx context.Context, s *gocql.Session, e *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
		smp, err := q(ctx, s, e, id)
		if err == nil {
			r.mu.Lock()
			r.samples[e.ConnectAddress().String()] = append(r.samples[e.ConnectAddress().String()], smp)
			r.mu.Unlock()
		}
		return smp, err
	}
	return r
}

func (r *pollRecorder) of(ip string) []route.ThreadPoolSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]route.ThreadPoolSample(nil), r.samples[ip]...)
}

// TestServerLoadFollowsSlowNode: a node is slowed and loaded by another
// client; the poller's q_s for it rises by the second poll after the queue
// formed (sample-counted, not timed), and falls back when the load stops.
// The concurrency weight in force (w = 4) falls toward 1 while every queue
// is short and is back at 4 while the loaded node's queue is long.
func TestServerLoadFollowsSlowNode(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: 2 * time.Millisecond}})
	const interval = 50 * time.Millisecond
	p, err := New(fixedPoll(interval), tailroute.WithConcurrencyWeight(4))
	require.NoError(t, err)
	rec := recordPolls(p)
	s := loadSession(t, c, p, quietLogger{})
	createKeyspace(t, s, p, "sl", "{'class':'SimpleStrategy','replication_factor':3}")
	require.NoError(t, s.Query("INSERT INTO sl.usertable (y_id, field0) VALUES ('k', 'v')").Exec())
	keepSending(t, s, p, c.Hosts()[0]) // the credit of the polls; the slow node is not measured by this client
	slow := c.Hosts()[2]
	require.Eventually(t, func() bool { return hostStats(p, slow).HasServerLoad }, 5*time.Second, 10*time.Millisecond)
	assert.Less(t, hostStats(p, slow).ServerQueue, 2.0)
	require.Eventually(t, func() bool { return p.ServerLoadCounters().Weight < 1.5 }, 5*time.Second, 5*time.Millisecond,
		"idle cluster: w_eff toward 1 (%+v)", p.ServerLoadCounters())

	m := c.Node(slow).Model()
	m.Slowdown = 10
	require.NoError(t, c.Node(slow).SetModel(m))
	// Another client (not this policy) queues 16 reads at a time on it.
	other := gocql.NewCluster(slow)
	other.Port = c.Port()
	other.HostFilter = gocql.WhiteListHostFilter(slow)
	other.Timeout = 10 * time.Second
	other.Logger = quietLogger{}
	os, err := other.CreateSession()
	require.NoError(t, err)
	defer os.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var v string
				_ = os.Query("SELECT field0 FROM sl.usertable WHERE y_id = 'k'").WithContext(ctx).Scan(&v)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	require.Eventually(t, func() bool {
		tp := c.Node(slow).ThreadPools()
		return tp[0].PendingTasks >= 8
	}, 5*time.Second, time.Millisecond)
	before := len(rec.of(slow))
	require.Eventually(t, func() bool { return len(rec.of(slow)) >= before+2 }, 5*time.Second, 5*time.Millisecond)
	got := rec.of(slow)[before : before+2]
	assert.True(t, got[0].Pending+got[0].Active >= 8 || got[1].Pending+got[1].Active >= 8, "samples after the queue formed: %+v", got)
	require.Eventually(t, func() bool { return hostStats(p, slow).ServerQueue >= 8 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 4.0, p.ServerLoadCounters().Weight, "a queue of 8 or more: the configured w")
	// 1/mu_s needs 8 completions in the estimator's window: a few polls.
	require.Eventually(t, func() bool { return hostStats(p, slow).ServerServiceTime > 5*time.Millisecond }, 5*time.Second, 5*time.Millisecond,
		"1/mu_s of a node 10x slower than 2ms")
	st := hostStats(p, slow)
	for _, ip := range c.Hosts()[:2] {
		assert.Less(t, hostStats(p, ip).ServerQueue, 8.0, ip)
	}
	// C3 now ranks the slow node last for our reads.
	v := p.r.Tracker().Host(st.ID).View(p.r.Tracker().Clock().Now())
	assert.Equal(t, 1.0, v.ServerLoadWeight)
	assert.Equal(t, 2.0, v.Workers, "W_s: the node's active_tasks_limit")
	cancel()
	wg.Wait()
	require.Eventually(t, func() bool { return hostStats(p, slow).ServerQueue < 2 }, 5*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return p.ServerLoadCounters().Weight < 1.5 }, 5*time.Second, 5*time.Millisecond,
		"load gone: w_eff falls again (%+v)", p.ServerLoadCounters())
	assert.Zero(t, p.ServerLoadCounters().Skipped)
}

// TestServerLoadSkipsHostWithoutTable: a node that answers like Cassandra
// 3.x is logged once and not polled again; user queries see no error.
func TestServerLoadSkipsHostWithoutTable(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{Workers: 4, MeanService: time.Millisecond}})
	legacy := c.Hosts()[1]
	c.Node(legacy).SetVirtualTables(false)
	const interval = 20 * time.Millisecond
	p, err := New(fixedPoll(interval))
	require.NoError(t, err)
	log := &contract.Log{}
	s := loadSession(t, c, p, logTo(log))
	createKeyspace(t, s, p, "sl3", "{'class':'SimpleStrategy','replication_factor':3}")
	keepSending(t, s, p, c.Hosts()[0])
	require.Eventually(t, func() bool { return len(p.ServerLoadCounters().Skipped) == 1 }, 5*time.Second, 5*time.Millisecond)
	for i := 0; i < 200; i++ {
		require.NoError(t, s.Query("INSERT INTO sl3.usertable (y_id, field0) VALUES (?, 'v')", fmt.Sprint(i)).Exec())
		var v string
		require.NoError(t, s.Query("SELECT field0 FROM sl3.usertable WHERE y_id = ?", fmt.Sprint(i)).Scan(&v))
	}
	polls := p.ServerLoadCounters().Polls
	require.Eventually(t, func() bool { return p.ServerLoadCounters().Polls >= polls+10 }, 5*time.Second, 5*time.Millisecond)
	lines := log.Find("server-load polling is off")
	require.Len(t, lines, 1, "one log line")
	assert.Contains(t, lines[0], legacy)
	assert.False(t, hostStats(p, legacy).HasServerLoad)
	for _, ip := range []string{c.Hosts()[0], c.Hosts()[2]} {
		assert.True(t, hostStats(p, ip).HasServerLoad, ip)
	}
	assert.Equal(t, []string{hostStats(p, legacy).ID}, p.ServerLoadCounters().Skipped)
}

// TestServerLoadPollTimeoutDoesNotTouchUserQueries: polls of one host
// hang until their timeout; user queries on that host are neither delayed
// nor failed, the host keeps being polled and gets no sample. "Not
// delayed" is checked as an order of events: with one poll of the host
// held (past its timeout) until the test lets it go, 300 user queries on
// replica sets that all contain the host complete first.
func TestServerLoadPollTimeoutDoesNotTouchUserQueries(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 7, Model: sim.ServiceModel{ZeroService: true}})
	const interval = 30 * time.Millisecond
	p, err := New(fixedPoll(interval))
	require.NoError(t, err)
	hung := c.Hosts()[0]
	var timeouts atomic.Int64
	var hold atomic.Pointer[chan struct{}] // set: the next timed-out poll of hung waits for it to close
	held := make(chan struct{}, 1)
	q := p.pollQuery
	p.pollQuery = func(ctx context.Context, s *gocql.Session, e *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
		if e.ConnectAddress().String() == hung {
			<-ctx.Done() // a poll that never comes back in time
			timeouts.Add(1)
			if rel := hold.Load(); rel != nil {
				held <- struct{}{}
				<-*rel
			}
		}
		return q(ctx, s, e, id) // the real query with the expired context
	}
	s := loadSession(t, c, p, quietLogger{})
	createKeyspace(t, s, p, "slt", "{'class':'SimpleStrategy','replication_factor':3}")
	stop := keepSending(t, s, p, c.Hosts()[1])
	require.Eventually(t, func() bool { return timeouts.Load() >= 3 }, 5*time.Second, 5*time.Millisecond)

	rel := make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(rel) })
	hold.Store(&rel)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the hung host is no longer polled")
	}
	hold.Store(nil)
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 300; i++ {
			var v string
			if err := s.Query("SELECT field0 FROM slt.usertable WHERE y_id = ?", fmt.Sprint(i)).Scan(&v); !errors.Is(err, gocql.ErrNotFound) {
				done <- fmt.Errorf("query %d: %v, want %v", i, err, gocql.ErrNotFound)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("user queries wait for the held poll")
	}
	release.Do(func() { close(rel) })
	stop()
	for _, st := range p.Stats() {
		assert.Zero(t, st.InFlight, st.Address)
	}
	assert.False(t, hostStats(p, hung).HasServerLoad)
	assert.True(t, hostStats(p, c.Hosts()[1]).HasServerLoad)
	keepSending(t, s, p, c.Hosts()[1])
	n := timeouts.Load()
	require.Eventually(t, func() bool { return timeouts.Load() > n }, 5*time.Second, 5*time.Millisecond, "still polled")
	assert.GreaterOrEqual(t, p.ServerLoadCounters().Failures, uint64(n))
	assert.Empty(t, p.ServerLoadCounters().Skipped, "a timeout is not permanent")
}

// TestServerLoadHostDownMidPollAndRestart: the node goes down while its
// poll is in flight, other hosts are still polled, and after the restart
// (thread-pool counters reset) its samples give non-negative estimates.
func TestServerLoadHostDownMidPollAndRestart(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 8, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	const interval = 30 * time.Millisecond
	p, err := New(fixedPoll(interval))
	require.NoError(t, err)
	victim := c.Hosts()[2]
	var stopOnce sync.Once
	stopped := make(chan error, 1)
	arm := make(chan struct{})
	rec := recordPolls(p)
	q := p.pollQuery
	p.pollQuery = func(ctx context.Context, s *gocql.Session, e *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
		if e.ConnectAddress().String() == victim {
			select {
			case <-arm:
				stopOnce.Do(func() { stopped <- c.Node(victim).Stop() }) // down mid-poll
			default:
			}
		}
		return q(ctx, s, e, id)
	}
	s := loadSession(t, c, p, quietLogger{})
	createKeyspace(t, s, p, "sld", "{'class':'SimpleStrategy','replication_factor':3}")
	keepSending(t, s, p, c.Hosts()[0])
	// Counters to reset: writes coordinated by the victim itself (a
	// session that knows only the victim), since the simulator counts a
	// task on the coordinator and C3 may route the policy's own writes
	// elsewhere.
	dcl := gocql.NewCluster(victim)
	dcl.Port = c.Port()
	dcl.ConnectTimeout = 10 * time.Second
	dcl.DisableInitialHostLookup = true
	dcl.HostFilter = gocql.WhiteListHostFilter(victim)
	direct, err := dcl.CreateSession()
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		require.NoError(t, direct.Query("INSERT INTO sld.usertable (y_id, field0) VALUES (?, 'v')", fmt.Sprint(i)).Exec())
	}
	direct.Close()
	require.Eventually(t, func() bool {
		smp := rec.of(victim)
		return len(smp) >= 2 && smp[len(smp)-1].Completed > 0
	}, 5*time.Second, 5*time.Millisecond, "the victim served some of the writes")
	before := rec.of(victim)
	close(arm)
	require.NoError(t, <-stopped)
	others := len(rec.of(c.Hosts()[0]))
	require.Eventually(t, func() bool { return len(rec.of(c.Hosts()[0])) >= others+3 }, 5*time.Second, 5*time.Millisecond,
		"the other hosts are still polled")
	// User queries keep working on the remaining replicas.
	for i := 0; i < 50; i++ {
		var v string
		require.NoError(t, s.Query("SELECT field0 FROM sld.usertable WHERE y_id = ?", fmt.Sprint(i)).Scan(&v))
	}
	require.NoError(t, c.Node(victim).Restart())
	require.Eventually(t, func() bool { return len(rec.of(victim)) >= len(before)+3 }, 10*time.Second, 5*time.Millisecond,
		"polled again after the restart")
	all := rec.of(victim)
	assert.Less(t, all[len(all)-1].Completed, before[len(before)-1].Completed, "the restart reset the counters")
	st := hostStats(p, victim)
	assert.GreaterOrEqual(t, st.ServerServiceTime, time.Duration(0))
	assert.GreaterOrEqual(t, st.ServerQueue, 0.0)
	assert.True(t, st.HasServerLoad)
}

// TestServerLoadEveryHostPolled: every host is polled (with the first
// credit of its bucket, before any request) through its own pinned query
// (a poll answered by another host is an error, so samples prove the
// pinning), the samples reach each host's state, and the polls are neither
// user traffic for the tracker nor counted in os_s.
func TestServerLoadEveryHostPolled(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	p, err := New(fixedPoll(50 * time.Millisecond))
	require.NoError(t, err)
	simSession(t, c, p)
	require.Eventually(t, func() bool {
		st := p.Stats()
		if len(st) != 3 {
			return false
		}
		for _, h := range st {
			if !h.HasServerLoad {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every host has a polled sample")
	lc := p.ServerLoadCounters()
	t.Logf("counters %+v", lc)
	assert.GreaterOrEqual(t, lc.Samples, uint64(3))
	assert.Empty(t, lc.Skipped)
	for _, h := range p.Stats() {
		assert.Zero(t, h.TotalAttempts, "%s: polls are not user traffic", h.Address)
		assert.Zero(t, h.InFlight, h.Address)
		assert.True(t, strings.HasPrefix(h.Address, "127.0.0."), h.Address)
	}
}
