package route

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

func TestDownHostsNeverFirst(t *testing.T) {
	for _, s := range []tailroute.Strategy{tailroute.C3, tailroute.P2C, tailroute.RoundRobin} {
		t.Run(s.String(), func(t *testing.T) {
			p, hosts, _ := testRouter(t, 3, tailroute.WithStrategy(s))
			p.HostDown(hosts[1])
			q := Query{}
			for i := 0; i < 300; i++ {
				pl := plan(p, q)
				require.Len(t, pl, 2, "down host is not in the plan at all")
				assert.NotContains(t, pl, "h1")
			}
			p.HostDown(hosts[0])
			p.HostDown(hosts[2])
			next := pick(p, q)
			assert.Nil(t, next(), "all down: empty plan, no panic")
		})
	}
}

func TestRecoveredHostGetsTraffic(t *testing.T) {
	p, hosts, clk := testRouter(t, 3)
	q := Query{}
	// h1 was slow and failing before it went down
	h1 := p.Tracker().Host("h1")
	for i := 0; i < 50; i++ {
		h1.Observe(p.Tracker().Now(), 50*time.Millisecond, track.Failure)
		p.Tracker().Host("h0").Observe(p.Tracker().Now(), time.Millisecond, track.Success)
		p.Tracker().Host("h2").Observe(p.Tracker().Now(), time.Millisecond, track.Success)
	}
	first := map[string]int{}
	for i := 0; i < 300; i++ {
		first[plan(p, q)[0]]++
	}
	assert.Less(t, first["h1"], 15, "slow failing host is avoided (only probes): %v", first)
	p.HostDown(hosts[1])
	clk.Advance(5 * time.Second)
	p.HostUp(hosts[1])
	first = map[string]int{}
	for i := 0; i < 300; i++ {
		first[plan(p, q)[0]]++
	}
	assert.Greater(t, first["h1"], 60, "recovered host is a clean slate and gets traffic: %v", first)
}

// A host avoided for its latency is not probed: its R_s fades toward the
// other hosts' once it has been idle for ForgetAfter (1 s), by
// exp(-(idle-1s)/1s), and it is tried again once it has faded below what
// the others' requests in flight cost them (one each, held open here): a
// host measured 10x slower after 2-3 s.
func TestAvoidedHostIsTriedAgainOnceForgotten(t *testing.T) {
	p, _, clk := testRouter(t, 3, tailroute.WithRateControl(false))
	tr := p.Tracker()
	tr.Host("h1").Observe(tr.Now(), 10*time.Millisecond, track.Success) // looks slow
	for _, h := range []string{"h0", "h2"} {
		tr.Host(h).Observe(tr.Now(), time.Millisecond, track.Success)
		a := tr.Host(h).Begin(tr.Now()) // one request in flight each, all along
		defer tr.Host(h).End(a)
	}
	q := Query{}
	var n [4]int // h1's requests in each second
	for i := 0; i < 4000; i++ {
		h := pick(p, q)()
		if id(h) == "h1" {
			n[i/1000]++
		}
		clk.Advance(time.Millisecond) // 1ms per request, answered at once
		h.Mark(nil)
	}
	assert.Zero(t, n[0]+n[1], "avoided while its estimate has not faded: %v", n)
	assert.Greater(t, n[2], 0, "tried again once faded: %v", n)
	assert.Zero(t, p.Counters().Probes)
}

func TestHerdSpreadOfFirstPicks(t *testing.T) {
	for _, s := range []tailroute.Strategy{tailroute.C3, tailroute.P2C, tailroute.RoundRobin} {
		t.Run(s.String(), func(t *testing.T) {
			p, _, _ := testRouter(t, 3, tailroute.WithStrategy(s))
			q := Query{}
			first := map[string]int{}
			const n = 3000
			for i := 0; i < n; i++ {
				// identical hosts, nothing outstanding: only tie-breaking decides
				next := pick(p, q)
				h := next()
				first[id(h)]++
				h.Mark(nil)
				for _, hs := range p.Tracker().Hosts() {
					hs.Reset() // keep the hosts identical
				}
			}
			for _, h := range []string{"h0", "h1", "h2"} {
				assert.InDelta(t, n/3, first[h], n/10, "%s: %v", h, first)
			}
		})
	}
}

func TestC3PrefersFastHostAndCountsInFlight(t *testing.T) {
	p, _, clk := testRouter(t, 3, tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour))
	tr := p.Tracker()
	for i := 0; i < 20; i++ {
		tr.Host("h0").Observe(tr.Now(), time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 5*time.Millisecond, track.Success)
		tr.Host("h2").Observe(tr.Now(), 2*time.Millisecond, track.Success)
	}
	q := Query{}
	// sequential, no outstanding requests: always the fastest
	for i := 0; i < 100; i++ {
		assert.Equal(t, "h0", plan(p, q)[0])
	}
	// outstanding requests on h0 (os*w in qhat^3) shift new requests away
	var open []sel
	first := map[string]int{}
	for i := 0; i < 30; i++ {
		h := pick(p, q)()
		first[id(h)]++
		open = append(open, h)
	}
	assert.Greater(t, first["h2"], 3, "%v", first)
	assert.Greater(t, first["h0"], first["h1"], "%v", first)
	for _, h := range open {
		clk.Advance(time.Microsecond)
		h.Mark(nil)
	}
	for _, s := range tr.Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}

// fastAndSlow is a router over two hosts, h0 answering in 4 ms and h1 in
// 20 ms (50 samples each), without rate control, probes or jitter.
func fastAndSlow(t *testing.T, opts ...tailroute.Option) (*Router[*testHost, any], *track.Tracker) {
	p, _, _ := testRouter(t, 2, append([]tailroute.Option{tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour)}, opts...)...)
	tr := p.Tracker()
	for i := 0; i < 50; i++ {
		tr.Host("h0").Observe(tr.Now(), 4*time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 20*time.Millisecond, track.Success)
	}
	return p, tr
}

// firstWithInFlight returns the first host of p's plan while h0 has
// inFlight requests outstanding.
func firstWithInFlight(p *Router[*testHost, any], inFlight int) string {
	h0 := p.Tracker().Host("h0")
	var as []track.Attempt
	for i := 0; i < inFlight; i++ {
		as = append(as, h0.Begin(p.Tracker().Now()))
	}
	defer func() {
		for _, a := range as {
			h0.End(a)
		}
	}()
	return plan(p, Query{})[0]
}

// TestC3WorkersLetFastHostKeepRequests: with W_s workers (polled
// active_tasks_limit, else WithServerWorkers) a fast host with requests in
// flight still ranks before an idle host 5x slower; with the paper's
// single queue (W_s = 1, the default) and score one request in flight
// already loses (with the tail term, two); a queue far beyond W_s still
// repels. (Without polling: the known-slow rule, which acts only with it,
// has a test of its own.)
func TestC3WorkersLetFastHostKeepRequests(t *testing.T) {
	setup := func(opts ...tailroute.Option) (*Router[*testHost, any], *track.Tracker) {
		return fastAndSlow(t, append([]tailroute.Option{tailroute.WithServerLoad(false)}, opts...)...)
	}
	first := firstWithInFlight
	p, _ := setup(tailroute.WithTailTerm(0))
	assert.Equal(t, "h0", first(p, 0))
	assert.Equal(t, "h1", first(p, 1), "W_s = 1, the paper's score: 8 x 4ms behind an idle 20ms host")
	p, _ = setup()
	assert.Equal(t, "h0", first(p, 1), "W_s = 1, tail term 2: (8+2) x 4ms ahead of (1+2) x 20ms")
	assert.Equal(t, "h1", first(p, 2), "W_s = 1, tail term 2: (27+2) x 4ms behind (1+2) x 20ms")

	p, _ = setup(tailroute.WithServerWorkers(4))
	for n := 0; n <= 2; n++ {
		assert.Equal(t, "h0", first(p, n), "W_s = 4, %d in flight", n)
	}
	assert.Equal(t, "h1", first(p, 12), "W_s = 4: 12 ahead is a queue")

	// The polled W_s takes precedence over the option.
	p, tr := setup()
	tr.Host("h0").ServerWorkers(32)
	for n := 0; n <= 10; n++ {
		assert.Equal(t, "h0", first(p, n), "polled W_s = 32, %d in flight", n)
	}
	assert.Equal(t, "h1", first(p, 60), "polled W_s = 32: 60 ahead is a queue")
}

// TestKnownSlowReplicaBehind: with polling on, where a replica serves at
// least 3x slower than another (its polled 1/mu_s, or the client's own
// latencies there), the cube no longer sends requests to it while the fast
// replica's expected response time is under two thirds of its own; past
// that the score's order stands, and without polling (or at a smaller
// ratio) the score alone decides.
func TestKnownSlowReplicaBehind(t *testing.T) {
	setup := func() (*Router[*testHost, any], *track.Tracker) { return fastAndSlow(t) }
	first := firstWithInFlight
	p, _ := fastAndSlow(t, tailroute.WithServerLoad(false))
	assert.Equal(t, "h1", first(p, 2), "no polling: (27+2) x 4ms behind (1+2) x 20ms")

	for n := 0; n <= 5; n++ {
		// no polled service times yet: R_s and median 20ms against 4ms (a
		// fresh router each time: a plan marks every host it names)
		p, _ = setup()
		assert.Equal(t, "h0", first(p, n), "measured 4ms vs 20ms, %d in flight", n)
	}
	p, _ = setup()
	assert.Equal(t, "h1", first(p, 8), "measured: 9 x 4ms + 8ms is over 60ms / 1.5: the score's order")

	p, tr := setup()
	tr.Host("h0").ServerLoad(tr.Now(), 0, 4*time.Millisecond, time.Second, time.Second)
	tr.Host("h1").ServerLoad(tr.Now(), 0, 20*time.Millisecond, time.Second, time.Second)
	for n := 0; n <= 5; n++ {
		// expected: (n+1) x 4ms + 2 x 4ms against 20ms + 2 x 20ms
		assert.Equal(t, "h0", first(p, n), "polled 4ms vs 20ms, %d in flight", n)
	}
	assert.Equal(t, "h1", first(p, 8), "9 x 4ms + 8ms is over 60ms / 1.5: the score's order")

	p, tr = setup()
	tr.Host("h0").ServerLoad(tr.Now(), 0, 8*time.Millisecond, time.Second, time.Second)
	tr.Host("h1").ServerLoad(tr.Now(), 0, 20*time.Millisecond, time.Second, time.Second)
	assert.Equal(t, "h1", first(p, 2), "polled 8ms vs 20ms: under 3x, the score decides")
}

// TestKnownSlowNotAfterPause: a replica as fast as the other whose R_s a
// pause's late answers have lifted (here to about 5x) is not known-slow:
// the client's median latency there, 4ms, caps its service time at 1.5 x
// 4ms, and the score decides.
func TestKnownSlowNotAfterPause(t *testing.T) {
	p, _, _ := testRouter(t, 2, tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour))
	tr := p.Tracker()
	for i := 0; i < 50; i++ {
		tr.Host("h0").Observe(tr.Now(), 4*time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 4*time.Millisecond, track.Success)
	}
	h1 := tr.Host("h1")
	for h1.View(tr.Now()).ResponseTime < float64(18*time.Millisecond) {
		h1.Observe(tr.Now(), 150*time.Millisecond, track.Success) // answers held up by a pause
	}
	r := time.Duration(h1.View(tr.Now()).ResponseTime)
	require.Less(t, r, 38*time.Millisecond, "R_s %v: idle h1 scores (1+2) x R_s under h0's (27+2) x 4ms", r)
	med, _ := h1.LatencyMedian(tr.Now())
	require.Less(t, med, 5*time.Millisecond)
	assert.Equal(t, "h1", firstWithInFlight(p, 2), "R_s %v but median %v: not known-slow", r, med)
}

func TestP2CPicksLessLoaded(t *testing.T) {
	p, _, _ := testRouter(t, 2, tailroute.WithStrategy(tailroute.P2C))
	q := Query{}
	a := p.Tracker().Host("h0").Begin(p.Tracker().Now()) // h0 has one request in flight
	for i := 0; i < 100; i++ {
		assert.Equal(t, []string{"h1", "h0"}, plan(p, q))
	}
	p.Tracker().Host("h0").End(a)
}

func TestRoundRobinRotates(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithStrategy(tailroute.RoundRobin), tailroute.WithMaxCandidates(3))
	q := Query{}
	first := map[string]int{}
	for i := 0; i < 300; i++ {
		first[plan(p, q)[0]]++
	}
	// the candidate sample starts at a random host and is then rotated by a
	// counter: exact thirds are not guaranteed, a fair spread is
	for _, h := range []string{"h0", "h1", "h2"} {
		assert.InDelta(t, 100, first[h], 40, "%v", first)
	}
}

// TestBackpressureBounded: when every replica is over its sending rate the
// request waits at most MaxBackpressureWait for the next window, then goes to
// the best replica anyway: never dropped, never blocked for longer.
func TestBackpressureBounded(t *testing.T) {
	p, _, clk := testRouter(t, 3,
		tailroute.WithRate(tracker.RateConfig{InitialRate: 1, MinRate: 1}),
		tailroute.WithMaxBackpressureWait(2*time.Millisecond), tailroute.WithProbe(time.Hour))
	clk.Set(20 * time.Second) // aligned to a 20ms window
	q := Query{}
	var hs []sel
	seen := map[string]bool{}
	for i := 0; i < 3; i++ { // one token each: the three go to three different hosts
		h := pick(p, q)()
		seen[id(h)] = true
		hs = append(hs, h)
	}
	assert.Len(t, seen, 3, "rate limit spreads requests over the replicas")
	assert.EqualValues(t, 0, clk.Sleeps())
	start := clk.Now()
	h := pick(p, q)() // all over rate: waits 2ms (the window ends in 20ms), then sends anyway
	require.NotNil(t, h)
	assert.EqualValues(t, 1, clk.Sleeps())
	assert.Equal(t, 2*time.Millisecond, clk.Now()-start)
	c := p.Counters()
	assert.EqualValues(t, 1, c.BackpressureWaits)
	assert.EqualValues(t, 1, c.SentOverRate)
	hs = append(hs, h)

	clk.Set(20*time.Second + 19*time.Millisecond)
	h = pick(p, q)() // 1ms before the next window: waits 1ms, then a token is free
	assert.Equal(t, 20*time.Second+20*time.Millisecond, clk.Now())
	assert.EqualValues(t, 1, p.Counters().SentOverRate, "token available after the wait")
	hs = append(hs, h)
	for _, h := range hs {
		h.Mark(nil)
	}

	// MaxBackpressureWait 0: never waits
	p0, _, clk0 := testRouter(t, 1, tailroute.WithRate(tracker.RateConfig{InitialRate: 1}), tailroute.WithMaxBackpressureWait(0))
	for i := 0; i < 5; i++ {
		h := pick(p0, q)()
		require.NotNil(t, h)
		h.Mark(nil)
	}
	assert.EqualValues(t, 0, clk0.Sleeps())
}

// TestBackpressureWaitFollowsScore: a stalled host is not "within rate"
// when the plan is made (WithStall), though it has a token: the request goes
// to the next replica within its rate, and when there is none it waits for
// the backpressure wait; after the wait the rates alone are read again and
// the score decides, so the stalled host that the score still ranks first
// gets the request ("Rate control" in the package doc: checking the stall
// there too cost Figure 14's u70-T500-c150 p99 1.03x).
func TestBackpressureWaitFollowsScore(t *testing.T) {
	p, _, clk := testRouter(t, 2,
		tailroute.WithRate(tracker.RateConfig{InitialRate: 1, MinRate: 1}), tailroute.WithServerLoad(false),
		tailroute.WithMaxBackpressureWait(5*time.Millisecond), tailroute.WithProbe(time.Hour), tailroute.WithStall(4, 10*time.Millisecond))
	tr := p.Tracker()
	clk.Set(18200 * time.Millisecond)
	for i := 0; i < 40; i++ { // one answer in two 20ms windows: rrate stays 1, and srate with it
		tr.Host("h0").Observe(tr.Now(), time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 20*time.Millisecond, track.Success)
		clk.Advance(45 * time.Millisecond)
	}
	require.Equal(t, 20*time.Second, clk.Now()) // aligned to a 20ms window
	require.Equal(t, 1.0, tr.Host("h0").Rate())
	q := Query{}
	held := pick(p, q)() // h0 owes its answer from now on
	require.Equal(t, "h0", id(held))

	clk.Advance(20 * time.Millisecond) // the next window: a token each; h0 silent 20ms > max(10ms, 4 x 1ms)
	v := tr.Host("h0").View(tr.Now())
	require.True(t, p.stalled(&v), "stalled, yet ranked first: 1ms x (2^3 + 2) against 20ms x (1 + 2)")
	h := pick(p, q)()
	assert.Equal(t, "h1", id(h), "h0 has a token but is stalled: not within rate")
	assert.EqualValues(t, 0, clk.Sleeps())
	h.Mark(nil)
	h = pick(p, q)() // h1 over rate, h0 stalled: waits 5ms (MaxBackpressureWait), still in the window
	assert.EqualValues(t, 1, clk.Sleeps())
	assert.Equal(t, "h0", id(h), "after the wait the rates alone: h0's token")
	assert.EqualValues(t, 0, p.Counters().SentOverRate)
	h.Mark(nil)
	held.Mark(nil)
}

// TestC3WorkersNeedAnswers: W_s (here polled: 4) drains the queue only while
// the host answers. A fast host with two requests in flight ranks before an
// idle host 5x slower while its silence is within drainSilence(w) x R_s (w =
// 1: half of R_s); once it has owed responses for 3 x R_s (a pause, not yet
// a stall) its W_s is scaled by that over the silence and the idle host
// ranks first. (The paper's score: the tail term has tests of its own;
// without polling, as the known-slow rule has.)
func TestC3WorkersNeedAnswers(t *testing.T) {
	p, _, clk := testRouter(t, 2, tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour), tailroute.WithTailTerm(0),
		tailroute.WithServerLoad(false))
	tr := p.Tracker()
	for i := 0; i < 50; i++ {
		tr.Host("h0").Observe(tr.Now(), 4*time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 20*time.Millisecond, track.Success)
	}
	h0 := tr.Host("h0")
	h0.ServerWorkers(4)
	clk.Advance(time.Millisecond) // h0's last response lies before its requests
	as := []track.Attempt{h0.Begin(tr.Now()), h0.Begin(tr.Now())}
	clk.Advance(1500 * time.Microsecond)
	assert.Equal(t, "h0", plan(p, Query{})[0], "silent 1.5ms < R_s/2 = 2ms: W_s = 4 holds")
	clk.Advance(10500 * time.Microsecond)
	assert.Equal(t, "h1", plan(p, Query{})[0], "silent 12ms = 3 x R_s: W_s scaled to 4/3")
	for _, a := range as {
		h0.End(a)
	}
	h0.Observe(tr.Now(), 4*time.Millisecond, track.Success)
	assert.Equal(t, "h0", plan(p, Query{})[0], "answered again: W_s = 4")
}
