package speculative

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

type rig struct {
	clk   *tracker.ManualClock
	h     *Hedger
	p     gocql.HostSelectionPolicy
	inner *fakePolicy
	hosts []*gocql.HostInfo
}

// newRig wraps a fake policy whose plan is hosts[0..n-1], adds the hosts as
// up and funds the budget (50% of 1000 requests).
func newRig(t *testing.T, n int, opts ...tailroute.Option) *rig {
	t.Helper()
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(10*time.Millisecond, true)
	opts = append([]tailroute.Option{tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithBudget(0.5, 10*time.Second)}, opts...)
	h, err := New(opts...)
	require.NoError(t, err)
	r := &rig{clk: clk, h: h}
	for i := 0; i < n; i++ {
		r.hosts = append(r.hosts, newHost("127.0.0."+string(rune('1'+i))))
	}
	r.inner = newFakePolicy(r.hosts...)
	r.p = h.Wrap(r.inner)
	for _, x := range r.hosts {
		r.p.AddHost(x)
	}
	for i := 0; i < 1000; i++ {
		h.core.Budget().Request(h.core.NowNs())
	}
	return r
}

func idem() *gocql.Query { return (&gocql.Query{}).Idempotent(true) }

var overloaded = reqErr{gocql.ErrCodeOverloaded}

func TestHedgeGoesToNextHostAndIsCharged(t *testing.T) {
	r := newRig(t, 3)
	q := idem()
	next := r.p.Pick(q)
	assert.Equal(t, armedType, specType(q), "armed: one extra attempt")
	st := r.h.Stats()
	assert.Equal(t, uint64(1), st.Armed)
	assert.Equal(t, int64(1), st.Reserved)

	primary := next()
	require.NotNil(t, primary)
	assert.Same(t, r.hosts[0], primary.Info(), "primary = first host of the ranking")
	hedge := next() // gocql's ticker fired while the primary is in flight
	require.NotNil(t, hedge)
	assert.Same(t, r.hosts[1], hedge.Info(), "hedge = next host of the ranking")

	st = r.h.Stats()
	assert.Equal(t, uint64(1), st.Hedges)
	assert.Equal(t, uint64(1), st.WindowHedges)
	assert.Equal(t, int64(0), st.Reserved, "the reservation became a charged hedge")
	assert.Equal(t, uint64(0), st.Unreserved)

	hedge.Mark(nil)
	primary.Mark(nil) // the loser, cancelled
	assert.Equal(t, []error{nil}, r.inner.marksOf(r.hosts[0]), "Mark is passed to the wrapped policy")
	assert.Equal(t, []error{nil}, r.inner.marksOf(r.hosts[1]))
	assert.Equal(t, int64(0), r.h.Stats().Reserved)
}

func TestFirstAttemptDoneReleasesReservation(t *testing.T) {
	r := newRig(t, 3)
	next := r.p.Pick(idem())
	primary := next()
	primary.Mark(nil)
	st := r.h.Stats()
	assert.Equal(t, int64(0), st.Reserved)
	assert.Equal(t, uint64(0), st.Hedges)
	assert.Equal(t, uint64(0), st.WindowHedges)

	// gocql's select may still pick the ticker: the late hedge is charged
	late := next()
	require.NotNil(t, late)
	assert.Same(t, r.hosts[1], late.Info())
	st = r.h.Stats()
	assert.Equal(t, uint64(1), st.Hedges)
	assert.Equal(t, uint64(1), st.Unreserved)
	assert.Equal(t, int64(0), st.Reserved)
}

func TestRetryAfterErrorIsNotAHedge(t *testing.T) {
	r := newRig(t, 3)
	next := r.p.Pick(idem())
	s1 := next()
	s1.Mark(overloaded) // RetryNextHost follows
	s2 := next()
	require.NotNil(t, s2)
	assert.Same(t, r.hosts[1], s2.Info())
	assert.Equal(t, uint64(0), r.h.Stats().Hedges, "a retry is not charged")

	s3 := next() // the ticker fires while the retry is in flight
	require.NotNil(t, s3)
	assert.Same(t, r.hosts[2], s3.Info())
	st := r.h.Stats()
	assert.Equal(t, uint64(1), st.Hedges)
	assert.Equal(t, uint64(1), st.Unreserved, "reservation was released when the first attempt ended")

	s2.Mark(overloaded)
	assert.Nil(t, next(), "plan exhausted")
	assert.Equal(t, int64(0), r.h.Stats().Reserved)
}

func TestHedgeNeverReusesAHost(t *testing.T) {
	r := newRig(t, 2)
	a, b := r.hosts[0], r.hosts[1]
	// a plan with duplicates, including a distinct *HostInfo with the same host ID
	aCopy := newHost("127.0.0.1")
	r.inner.plan = []*gocql.HostInfo{a, a, aCopy, b, a}
	next := r.p.Pick(idem())
	assert.Same(t, a, next().Info())
	h := next()
	require.NotNil(t, h)
	assert.Same(t, b, h.Info())
	h.Mark(overloaded)
	assert.Nil(t, next(), "only used hosts are left")
	// every duplicate pulled from the wrapped iterator was released, the
	// hosts handed out got gocql's Mark
	assert.Equal(t, []error{context.Canceled, context.Canceled}, r.inner.marksOf(a))
	assert.Equal(t, []error{context.Canceled}, r.inner.marksOf(aCopy))
	assert.Equal(t, []error{overloaded}, r.inner.marksOf(b))
}

func TestHedgeSkipsRecentlyFailedHost(t *testing.T) {
	r := newRig(t, 3) // default ErrorHoldoff 1s
	h1, h2, h3 := r.hosts[0], r.hosts[1], r.hosts[2]

	// h2 answers with an overload error
	r.inner.plan = []*gocql.HostInfo{h2}
	r.p.Pick(idem())().Mark(overloaded)
	// h3 answers with a syntax error: not a host error
	r.inner.plan = []*gocql.HostInfo{h3}
	r.p.Pick(idem())().Mark(reqErr{gocql.ErrCodeSyntax})

	r.inner.plan = []*gocql.HostInfo{h1, h2, h3}
	next := r.p.Pick(idem())
	s1 := next()
	hedge := next()
	require.NotNil(t, hedge)
	assert.Same(t, h3, hedge.Info(), "the hedge skips h2, which failed 0s ago")
	assert.Equal(t, []error{context.Canceled}, r.inner.marksOf(h2)[1:], "the skipped host is released to the wrapped policy")
	s1.Mark(overloaded)
	assert.Nil(t, next(), "h2 was released; no host left for a retry")

	r.clk.Advance(time.Second)
	next = r.p.Pick(idem())
	next()
	assert.Same(t, h2, next().Info(), "after the holdoff h2 is a hedge target again")
}

func TestHedgeFallsBackToFailedHostThenNone(t *testing.T) {
	r := newRig(t, 2)
	h1, h2 := r.hosts[0], r.hosts[1]
	r.inner.plan = []*gocql.HostInfo{h2}
	r.p.Pick(idem())().Mark(overloaded)

	r.inner.plan = []*gocql.HostInfo{h1, h2}
	next := r.p.Pick(idem())
	next()
	hedge := next()
	require.NotNil(t, hedge)
	assert.Same(t, h2, hedge.Info(), "a recently failed host beats no host")

	before := r.h.Stats()
	r.inner.plan = []*gocql.HostInfo{h1}
	next = r.p.Pick(idem())
	next()
	assert.Nil(t, next(), "no host left for the hedge")
	st := r.h.Stats()
	assert.Equal(t, before.NoTarget+1, st.NoTarget)
	assert.Equal(t, before.Hedges, st.Hedges, "no host, no charge")
	assert.Equal(t, int64(0), st.Reserved)
}

func TestHedgeWithoutErrorHoldoff(t *testing.T) {
	r := newRig(t, 2, tailroute.WithErrorHoldoff(0))
	h1, h2 := r.hosts[0], r.hosts[1]
	r.inner.plan = []*gocql.HostInfo{h2}
	r.p.Pick(idem())().Mark(overloaded)
	r.inner.plan = []*gocql.HostInfo{h1, h2}
	next := r.p.Pick(idem())
	next()
	assert.Same(t, h2, next().Info())
}

func TestNonIdempotentQueriesAreUntouched(t *testing.T) {
	r := newRig(t, 3)
	q := &gocql.Query{} // not idempotent
	next := r.p.Pick(q)
	assert.Nil(t, specType(q), "spec untouched")
	s := next()
	_, wrapped := s.(*hostSlot)
	assert.False(t, wrapped, "the wrapped policy's iterator is returned as is")
	st := r.h.Stats()
	assert.Equal(t, uint64(1), st.Executions)
	assert.Equal(t, uint64(0), st.Eligible)
	assert.Equal(t, uint64(0), st.Armed)

	b := gocql.NewBatch(gocql.LoggedBatch)
	b.Entries = []gocql.BatchEntry{{Stmt: "x", Idempotent: true}, {Stmt: "y"}}
	r.p.Pick(b)
	assert.Equal(t, uint64(0), r.h.Stats().Eligible, "a batch with a non-idempotent entry")
}

func TestIdempotentBatchIsArmed(t *testing.T) {
	r := newRig(t, 3)
	b := gocql.NewBatch(gocql.LoggedBatch)
	b.Entries = []gocql.BatchEntry{{Stmt: "x", Idempotent: true}, {Stmt: "y", Idempotent: true}}
	r.p.Pick(b)
	assert.Equal(t, armedType, specType(b))
	assert.Equal(t, uint64(1), r.h.Stats().Armed)
}

func TestDisableLeavesQueryAlone(t *testing.T) {
	r := newRig(t, 3)
	own := &gocql.SimpleSpeculativeExecution{NumAttempts: 2, TimeoutDelay: time.Millisecond}
	q := idem().SetSpeculativeExecutionPolicy(own).WithContext(Disable(context.Background()))
	r.p.Pick(q)
	assert.Equal(t, specType(idem().SetSpeculativeExecutionPolicy(own)), specType(q), "user's own policy kept")
	assert.Equal(t, uint64(0), r.h.Stats().Eligible)
}

func TestTooFewHostsUp(t *testing.T) {
	r := newRig(t, 2)
	r.p.HostDown(r.hosts[1])
	q := idem()
	r.p.Pick(q)
	assert.Equal(t, noneType, specType(q))
	assert.Equal(t, uint64(1), r.h.Stats().TooFewHosts)
	r.p.HostUp(r.hosts[1])
	r.p.Pick(q)
	assert.Equal(t, armedType, specType(q))
	r.p.RemoveHost(r.hosts[0])
	r.p.Pick(q)
	assert.Equal(t, noneType, specType(q), "re-picking the same query disarms it")
}

func TestBudgetSpentDisarms(t *testing.T) {
	r := newRig(t, 3, tailroute.WithBudget(0.05, time.Second))
	// newRig funded 1000 requests: 50 tokens (+5% of the picks themselves)
	armed := 0
	for i := 0; i < 60; i++ {
		q := idem()
		next := r.p.Pick(q)
		if specType(q) == armedType {
			armed++
			next()
			next() // every armed execution hedges
		} else {
			assert.Equal(t, noneType, specType(q))
		}
	}
	st := r.h.Stats()
	// pick k is armed iff hedges so far + 1 <= 0.05 x (1000 + k): picks 1..52
	// and 60 (53 <= 0.05 x 1060), not 53..59
	assert.Equal(t, 53, armed)
	assert.Equal(t, uint64(7), st.BudgetDenied)
	assert.Equal(t, uint64(53), st.Hedges)

	// a window later the old requests are gone and so is the budget
	r.clk.Advance(time.Second)
	q := idem()
	r.p.Pick(q)
	assert.Equal(t, noneType, specType(q))
}

func TestWrapForwardsAndReady(t *testing.T) {
	h, err := New(tailroute.WithSource(&fakeSource{}))
	require.NoError(t, err)
	inner := newFakePolicy()
	p := h.Wrap(inner)
	_, isReady := p.(gocql.ReadyPolicy)
	assert.False(t, isReady, "not a ReadyPolicy when the wrapped one is not")
	x := newHost("127.0.0.9")
	p.AddHost(x)
	p.(interface{ AddHosts([]*gocql.HostInfo) }).AddHosts([]*gocql.HostInfo{newHost("127.0.0.8")})
	assert.Len(t, inner.added, 2)
	assert.Same(t, inner, p.(*Policy).Inner())
	assert.Same(t, h, p.(*Policy).Hedger())

	rf := &readyFake{fakePolicy: newFakePolicy()}
	rp, ok := h.Wrap(rf).(gocql.ReadyPolicy)
	require.True(t, ok)
	assert.False(t, rp.Ready())
	rf.ready = true
	assert.True(t, rp.Ready())

	def := h.Wrap(nil).(*Policy)
	assert.NotNil(t, def.Inner(), "nil = gocql's default round robin")
}

type countObs struct{ n int }

func (c *countObs) ObserveQuery(context.Context, gocql.ObservedQuery) { c.n++ }
func (c *countObs) ObserveBatch(context.Context, gocql.ObservedBatch) { c.n++ }

func TestWire(t *testing.T) {
	h, err := New()
	require.NoError(t, err)
	cfg := gocql.NewCluster("127.0.0.1")
	tok := gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cfg.PoolConfig.HostSelectionPolicy = tok
	prev := &countObs{}
	cfg.QueryObserver = prev
	require.NoError(t, Wire(cfg, h))
	p, ok := cfg.PoolConfig.HostSelectionPolicy.(*Policy)
	require.True(t, ok)
	assert.Same(t, tok, p.Inner())
	now := time.Now()
	cfg.QueryObserver.ObserveQuery(context.Background(), gocql.ObservedQuery{Start: now.Add(-time.Millisecond), End: now})
	assert.Equal(t, 1, prev.n, "existing observer still called")
	assert.Same(t, h.Recorder(), cfg.BatchObserver)

	err = Wire(cfg, h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already")
	assert.Error(t, Wire(nil, h))
	assert.Error(t, Wire(gocql.NewCluster(), nil))

	// with an external source no observer is installed
	h2, err := New(tailroute.WithSource(&fakeSource{}))
	require.NoError(t, err)
	cfg2 := gocql.NewCluster("127.0.0.1")
	require.NoError(t, Wire(cfg2, h2))
	assert.Nil(t, cfg2.QueryObserver)
	_, ok = cfg2.PoolConfig.HostSelectionPolicy.(*Policy)
	assert.True(t, ok)
}

// TestConcurrentExecutions drives the wrapper the way gocql's executor does
// (NextHost serialised per execution, Mark from the attempts' goroutines)
// from many goroutines; run with -race.
func TestConcurrentExecutions(t *testing.T) {
	r := newRig(t, 4, tailroute.WithBudget(0.05, time.Hour))
	var wg sync.WaitGroup
	var bad sync.Map
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for i := 0; i < 500; i++ {
				q := idem()
				next := r.p.Pick(q)
				var mu sync.Mutex
				call := func() gocql.SelectedHost { mu.Lock(); defer mu.Unlock(); return next() }
				first := call()
				if specType(q) != armedType {
					first.Mark(nil)
					continue
				}
				var inner sync.WaitGroup
				got := make(chan *gocql.HostInfo, 2)
				got <- first.Info()
				if rnd.Intn(4) == 0 { // hedge fires
					inner.Add(1)
					go func() {
						defer inner.Done()
						s := call()
						if s != nil {
							got <- s.Info()
							s.Mark(nil)
						}
					}()
				}
				first.Mark(nil)
				inner.Wait()
				close(got)
				seen := map[*gocql.HostInfo]bool{}
				for x := range got {
					if seen[x] {
						bad.Store(x, true)
					}
					seen[x] = true
				}
			}
		}(int64(g))
	}
	wg.Wait()
	n := 0
	bad.Range(func(any, any) bool { n++; return true })
	assert.Zero(t, n, "an execution used a host twice")
	st := r.h.Stats()
	assert.Equal(t, int64(0), st.Reserved, "every reservation resolved")
	assert.LessOrEqual(t, float64(st.WindowHedges-st.Unreserved), 0.05*float64(st.WindowRequests))
	assert.Greater(t, st.Hedges, uint64(0))
}

// TestLoadRuleV1: the load rule decides at the v1 adapter's Pick: while
// every host queues, an execution is armed with the deferred delay
// (Stats.Queueing); the hedges of executions armed with the delay are
// recorded as won or lost, and once they mostly lose the next execution is
// deferred too (Stats.Losing); those of deferred executions are not.
func TestLoadRuleV1(t *testing.T) {
	src := &loadSource{sat: true}
	src.set(10*time.Millisecond, true)
	clk := tracker.NewManualClock(time.Hour)
	h, err := New(tailroute.WithSource(src), tailroute.WithBudget(1, time.Second), tailroute.WithClock(clk), tailroute.WithLoadRule(true))
	require.NoError(t, err)
	p := h.Wrap(gocql.RoundRobinHostPolicy())
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		p.AddHost(newHost(ip))
	}
	lose := func(q *gocql.Query) {
		next := p.Pick(q)
		first := next()
		hedge := next()
		first.Mark(nil) // the first attempt wins: the hedge lost
		hedge.Mark(context.Canceled)
	}
	for i := 0; i < 10; i++ {
		q := idem()
		lose(q)
		require.Equal(t, armedType, specType(q), "every host queueing: armed")
		require.Equal(t, 30*time.Millisecond, specDelay(q), "deferred: 3 x the delay")
	}
	st := h.Stats()
	assert.Equal(t, uint64(10), st.Queueing)
	assert.Equal(t, uint64(10), st.Lost)

	src.sat = false
	clk.Advance(10 * time.Millisecond) // the next reading of the hosts' load
	for i := 0; i < 10; i++ {
		q := idem()
		lose(q)
		require.Equal(t, 10*time.Millisecond, specDelay(q), "execution %d: the deferred hedges' losses are not on record", i)
	}
	q := idem()
	p.Pick(q)().Mark(nil)
	assert.Equal(t, 30*time.Millisecond, specDelay(q), "10 hedges at the delay lost: deferred")
	assert.Equal(t, uint64(1), h.Stats().Losing)
}
