package route

import (
	"context"
	"errors"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// waitTimers waits (in real time, bounded) until n timers of clk are armed:
// the poller's goroutines have scheduled their next wake-up.
func waitTimers(t *testing.T, clk *tracker.ManualClock, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Timers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers armed, want %d", clk.Timers(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// recvPolls receives n polls (bounded in real time) and returns the hosts
// polled, sorted.
func recvPolls(t *testing.T, polls <-chan string, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case id := <-polls:
			got = append(got, id)
		case <-time.After(10 * time.Second):
			t.Fatalf("got polls %v, want %d", got, n)
		}
	}
	sort.Strings(got)
	return got
}

// noPoll checks that no poll arrives while the clock stands still.
func noPoll(t *testing.T, polls <-chan string, why string) {
	t.Helper()
	select {
	case id := <-polls:
		t.Fatalf("poll of %s: %s", id, why)
	case <-time.After(20 * time.Millisecond):
	}
}

// The server-load poller takes its schedule from the policy's clock: with
// a ManualClock nothing is polled while time stands still, every host is
// polled once within the first interval (spending the credit its bucket
// starts with), then every minimum interval, credit or not, until its
// first 1/mu_s estimate, at most WarmPolls times (the warm-up; here the
// polls fail, so it runs out), and then each host's next poll comes 1 to
// 1.2 intervals after its previous one (the jitter's 0.8 is raised to the
// minimum interval) while requests earn the credit; with no request since,
// no host is polled again.
func TestPollScheduleFollowsClock(t *testing.T) {
	const iv = 100 * time.Millisecond
	r, _, clk := testRouter(t, 2, tailroute.WithPollBudget(1, iv, iv))
	polls := make(chan string, 16)
	var closed atomic.Bool
	r.StartServerLoad(PollDriver[*testHost]{
		Closed: closed.Load,
		Query: func(_ context.Context, _ *testHost, id string) (ThreadPoolSample, error) {
			polls <- id
			return ThreadPoolSample{}, errors.New("no sample") // dropped; polled again next time
		},
	})
	defer func() { closed.Store(true); clk.Advance(2 * iv) }() // the loops see the session closed and stop

	waitTimers(t, clk, 3) // the supervisor's and one per host
	noPoll(t, polls, "the clock has not moved")

	clk.Advance(iv) // the first polls are spread over one interval
	assert.Equal(t, []string{"h0", "h1"}, recvPolls(t, polls, 2))
	waitTimers(t, clk, 3)
	for i := 1; i < WarmPolls; i++ { // the warm-up: every interval, credit or not
		clk.Advance(iv - time.Nanosecond)
		noPoll(t, polls, "the warm-up polls every minimum interval")
		clk.Advance(time.Nanosecond)
		assert.Equal(t, []string{"h0", "h1"}, recvPolls(t, polls, 2), "warm-up turn %d", i)
		waitTimers(t, clk, 3)
	}
	clk.Advance(2 * iv)
	waitTimers(t, clk, 3)
	noPoll(t, polls, "the warm-up is over and no request earned a credit")
	for i := 0; i < 2; i++ { // share 1, 2 hosts: a credit for each
		plan(r, Query{})
	}

	clk.Advance(iv - time.Nanosecond)
	noPoll(t, polls, "less than the minimum interval after the previous poll")
	clk.Advance(iv/5 + time.Nanosecond) // 1.2 intervals after
	assert.Equal(t, []string{"h0", "h1"}, recvPolls(t, polls, 2))
	waitTimers(t, clk, 3)
	noPoll(t, polls, "one poll per host per interval")

	clk.Advance(3 * iv)
	waitTimers(t, clk, 3)
	noPoll(t, polls, "no request since the previous polls: no credit")
	assert.EqualValues(t, 2*(WarmPolls+1), r.ServerLoadCounters().Polls)
	assert.EqualValues(t, 2*(WarmPolls+1), r.ServerLoadCounters().Failures)
	assert.Equal(t, iv, r.ServerLoadCounters().Interval)
}

// The warm-up ends at a host's first 1/mu_s estimate (5 samples here):
// the turns after it take credit, which no request earns in this test.
func TestPollWarmUpEndsAtFirstEstimate(t *testing.T) {
	const iv = 100 * time.Millisecond
	r, _, clk := testRouter(t, 1, tailroute.WithPollBudget(1, iv, time.Second))
	var completed atomic.Int64
	var closed atomic.Bool
	r.StartServerLoad(PollDriver[*testHost]{
		Closed: closed.Load,
		Query: func(context.Context, *testHost, string) (ThreadPoolSample, error) {
			return ThreadPoolSample{Active: 2, Completed: completed.Add(10), Workers: 4}, nil
		},
	})
	defer func() { closed.Store(true); clk.Advance(2 * time.Second) }()
	waitTimers(t, clk, 2)
	for i := 0; i < 30; i++ { // 3 s
		clk.Advance(iv)
		waitTimers(t, clk, 2)
	}
	// 5 warm-up polls give the estimate (4 pairs, 40 completions); the
	// first spent the bucket's credit, and no request earned another.
	assert.EqualValues(t, estimatorMinPairs+1, r.ServerLoadCounters().Polls)
}

// pollCounter starts polling on a router over n hosts with opts and a
// manual clock; each poll of a host answers sample(k), k its polls so far
// including this one (nil: one request active, 10 completed, whatever k).
// It returns the router, the polls counted per host so far, and
// run(steps, perStep): perStep requests planned, then the clock advanced
// by step, steps times. The loops stop when the test ends.
func pollCounter(t *testing.T, n int, step time.Duration, sample func(k int) ThreadPoolSample, opts ...tailroute.Option) (*Router[*testHost, any], func() map[string]int, func(steps, perStep int)) {
	r, _, clk := testRouter(t, n, opts...)
	var mu sync.Mutex
	polled := map[string]int{}
	var closed atomic.Bool
	r.StartServerLoad(PollDriver[*testHost]{
		Closed: closed.Load,
		Query: func(_ context.Context, _ *testHost, id string) (ThreadPoolSample, error) {
			mu.Lock()
			polled[id]++
			k := polled[id]
			mu.Unlock()
			if sample == nil {
				return ThreadPoolSample{Active: 1, Completed: 10}, nil
			}
			return sample(k), nil
		},
	})
	t.Cleanup(func() { closed.Store(true); clk.Advance(time.Hour) })
	waitTimers(t, clk, n+1)
	counts := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(polled)
	}
	run := func(steps, perStep int) {
		for i := 0; i < steps; i++ {
			for j := 0; j < perStep; j++ {
				plan(r, Query{})
			}
			clk.Advance(step)
			waitTimers(t, clk, n+1)
		}
	}
	return r, counts, run
}

// A client's polls are bounded by its own requests (WithPollBudget): each
// host is polled at most WarmPolls + 1 + share*R/M times over R requests
// (the warm-up, here run out as the samples give no estimate; its bucket
// starts with one credit and earns share/M per request), at most once per
// minimum interval however many requests earn credit, and once the client
// stops sending each host is polled at most once more. Counted on a manual
// clock, step by step.
func TestPollBudgetBoundsPolls(t *testing.T) {
	const (
		share       = 0.1
		minIv, step = 10 * time.Millisecond, 5 * time.Millisecond
		hosts       = 3
	)
	r, counts, run := pollCounter(t, hosts, step, nil, tailroute.WithPollBudget(share, minIv, time.Second))

	// 2000 requests/s: I = M/(share*r) = 15ms; the credit bounds the polls.
	run(400, 10)
	busy := counts()
	require.Len(t, busy, hosts)
	for id, n := range busy {
		assert.LessOrEqual(t, float64(n), WarmPolls+1+share*4000/hosts, "%s: at most WarmPolls + 1 + share*R/M polls", id)
		assert.GreaterOrEqual(t, float64(n), share*4000/hosts/2, "%s: polled about every I", id)
	}
	lc := r.ServerLoadCounters()
	assert.InDelta(t, 15*time.Millisecond, lc.Interval, float64(3*time.Millisecond), "%+v", lc)

	// 200000 requests/s: credit for far more; each host at most once per
	// minimum interval.
	run(200, 1000)
	fast := counts()
	for id, n := range fast {
		assert.LessOrEqual(t, n-busy[id], int(time.Second/minIv)+1, "%s: at most once per minimum interval", id)
		assert.Greater(t, n-busy[id], int(time.Second/minIv)/2, id)
	}
	lc = r.ServerLoadCounters()
	assert.Equal(t, minIv, lc.Interval)
	assert.LessOrEqual(t, lc.PollsPerSecond, float64(time.Second/minIv), "%+v", lc)
	assert.Greater(t, lc.PollsPerSecond, 20.0, "%+v", lc)

	// No request any more: each host spends at most its one credit.
	run(400, 0)
	idle := counts()
	for id, n := range idle {
		assert.LessOrEqual(t, n-fast[id], 1, "%s: a client that stops sending stops polling", id)
	}
	assert.EqualValues(t, r.ServerLoadCounters().Polls, sum(idle))
	t.Logf("polls per host: %v busy, %v fast, %v idle", busy, fast, idle)
}

// A client that starts sending after an idle spell has its hosts polled
// within a few minimum intervals, not at the end of the idle interval
// (maxInterval) its hosts' turns were last set to: a host's loop looks at
// the budget again at least every pollRecheck minimum intervals.
func TestPollFollowsRisingRate(t *testing.T) {
	const (
		share       = 0.1
		minIv, step = 10 * time.Millisecond, 5 * time.Millisecond
		hosts       = 3
	)
	r, counts, run := pollCounter(t, hosts, step, nil, tailroute.WithPollBudget(share, minIv, 2*time.Second))
	run(600, 0) // 3 s without a request: the first credit spent, I = maxInterval
	idle := counts()
	require.Len(t, idle, hosts)
	assert.Equal(t, 2*time.Second, r.ServerLoadCounters().Interval)
	run(20, 10) // 100 ms at 2000 requests/s: a credit per host every 15 ms
	busy := counts()
	for id, n := range busy {
		assert.Greater(t, n, idle[id], "%s: polled within 100 ms of the requests", id)
	}
}

func sum(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// Only user plans earn poll credit, and only while the policy polls: a
// query pinned to a host (as the v2 adapter's polls are) and Pick(nil) do
// not count, nor does any plan of a strategy that does not poll.
func TestPollCreditCountsUserPlans(t *testing.T) {
	r, _, _ := testRouter(t, 2)
	plan(r, Query{})
	plan(r, Query{Pinned: "h0"})
	plan(r, Query{None: true})
	assert.EqualValues(t, 1, r.requests.Load())
	for _, opts := range [][]tailroute.Option{{tailroute.WithStrategy(tailroute.P2C)}, {tailroute.WithServerLoad(false)}} {
		r, _, _ := testRouter(t, 2, opts...)
		plan(r, Query{})
		assert.Zero(t, r.requests.Load())
	}
}

// A host's polled service time lasts until its next poll when the
// credit, not I, spaces the polls: at 30 requests per second over 3 hosts
// with a share of 0.1 a host earns a poll every M/(share*r) = 1 s, ten
// times maxInterval, and the sample's 1/mu_s counts in full for 1.5 of
// that spacing, while its queue, which changes with the load, counts in
// full for 1.5 I only. (With both from I, every client that started with
// this one lost its slow hosts' service times at the same moment, 600 ms
// after the poll.)
func TestServiceTimeLastsUntilTheNextPoll(t *testing.T) {
	busy := func(k int) ThreadPoolSample { // a service time to estimate
		var smp ThreadPoolSample
		smp.AddStage("ReadStage", 2, 4, 0, int64(100*k))
		return smp
	}
	r, counts, run := pollCounter(t, 3, 100*time.Millisecond, busy, tailroute.WithPollBudget(0.1, 10*time.Millisecond, 100*time.Millisecond))
	run(30, 3) // 3 s at 30 requests per second: the warm-up and a first paced poll
	queueLapsed := false
	for i := 0; i < 40; i++ { // 4 s more
		run(1, 3)
		now := r.clock.Now()
		for _, id := range []string{"h0", "h1", "h2"} {
			v := r.Tracker().Host(id).View(now)
			require.Greaterf(t, v.ServerServiceTime, 0.0, "%s at step %d: sample %v old", id, i, v.ServerLoadAge)
			queueLapsed = queueLapsed || v.ServerLoadWeight < 1
		}
	}
	assert.True(t, queueLapsed, "the queue part counts in full for 1.5 I only")
	for id, n := range counts() {
		assert.Less(t, n, 8+8, "%s: the warm-up and about one poll a second", id)
	}
}
