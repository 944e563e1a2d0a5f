package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

func TestOptionsValidated(t *testing.T) {
	cases := []struct {
		opt  tailroute.Option
		want string
	}{
		{tailroute.WithStrategy(tailroute.Strategy(7)), "WithStrategy: Strategy = 7, allowed C3 (0), P2C (1), RoundRobin (2)"},
		{tailroute.WithConcurrencyWeight(-1), "ConcurrencyWeight = -1, allowed 0..1e6"},
		{tailroute.WithBusy(0, time.Second), "BusyInFlight = 0, allowed 1..1000000"},
		{tailroute.WithBusy(10, time.Microsecond), "BusyNoResponse = 1µs, allowed 1ms..1m"},
		{tailroute.WithStall(0.5, time.Second), "StallFactor = 0.5, allowed 1..1000"},
		{tailroute.WithStall(4, 0), "StallMin = 0s, allowed 1ms..1m"},
		{tailroute.WithMaxBackpressureWait(2 * time.Second), "MaxBackpressureWait = 2s, allowed 0..1s"},
		{tailroute.WithProbe(0), "ProbeAfter = 0s, allowed 1ms..1h"},
		{tailroute.WithProbe(2 * time.Hour), "ProbeAfter = 2h0m0s, allowed 1ms..1h"},
		{tailroute.WithMaxCandidates(17), "MaxCandidates = 17, allowed 1..16"},
		{tailroute.WithServerWorkers(0), "WithServerWorkers: ServerWorkers = 0, allowed 1..65536"},
		{tailroute.WithTailTerm(-1), "WithTailTerm: TailTerm = -1, allowed 0..100"},
		{tailroute.WithTailTerm(math.NaN()), "WithTailTerm: TailTerm = NaN, allowed 0..100"},
		{tailroute.WithTailTerm(101), "WithTailTerm: TailTerm = 101, allowed 0..100"},
		{tailroute.WithServerWorkers(1 << 20), "ServerWorkers = 1048576, allowed 1..65536"},
		{route.WithFeedbackKeys("", "x"), "WithFeedbackKeys"},
		{tailroute.WithRate(tracker.RateConfig{Beta: 2}), "RateConfig.Beta = 2, allowed (0,1)"},
		{tailroute.WithTracker(tracker.Config{EWMAAlpha: 3}), "EWMAAlpha = 3, allowed (0,1]"},
		{tailroute.WithClock(nil), "WithClock: Clock = nil, want a non-nil tracker.Clock"},
		{nil, "option 0 = nil, want an Option"},
	}
	for _, tc := range cases {
		_, err := New(tc.opt)
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := New(tailroute.WithTailTerm(-1), tailroute.WithMaxCandidates(0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TailTerm = -1")
	assert.Contains(t, err.Error(), "MaxCandidates = 0", "all invalid options are reported")

	p, err := New()
	require.NoError(t, err)
	assert.Equal(t, tailroute.C3, p.Strategy())
	busyN, busyT := p.r.Config().BusyInFlight, p.r.Config().BusyNoResponse
	assert.Equal(t, 10, busyN)
	assert.Equal(t, 200*time.Millisecond, busyT)
	assert.Equal(t, tailroute.DefaultConcurrencyWeight, p.r.Config().Weight, "w: measured by default")
	assert.Equal(t, 20*time.Millisecond, p.r.Tracker().Config().Rate.Interval)

	for _, s := range []string{"c3", "P2C", "roundrobin", "rr"} {
		_, err := tailroute.ParseStrategy(s)
		assert.NoError(t, err)
	}
	_, err = tailroute.ParseStrategy("best")
	assert.ErrorContains(t, err, `"best", allowed c3, p2c, roundrobin`)
	assert.Equal(t, "p2c", tailroute.P2C.String())
}

// TestC3CountsOrphanedAttempts: attempts the client gave up on (a hedge won
// elsewhere) still occupy the host, CQL having no cancel; C3 counts them
// with the outstanding ones until the host answers a later request.
func TestC3CountsOrphanedAttempts(t *testing.T) {
	p, hosts, clk := testPolicy(t, 2, tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour))
	cfg := gocql.NewCluster("127.0.0.1")
	require.NoError(t, Wire(cfg, p))
	tr := p.r.Tracker()
	for i := 0; i < 20; i++ {
		tr.Host("h0").Observe(tr.Now(), time.Millisecond, track.Success)
		tr.Host("h1").Observe(tr.Now(), 4*time.Millisecond, track.Success)
	}
	q := &fakeQuery{}
	require.Equal(t, "h0", plan(p, q)[0])
	// three attempts on h0 lose to hedges after 5ms: cancelled, not answered
	base := time.Now()
	for i := 0; i < 3; i++ {
		cfg.QueryObserver.ObserveQuery(context.Background(), gocql.ObservedQuery{
			Host: hosts[0], Start: base, End: base.Add(5 * time.Millisecond), Err: context.Canceled})
	}
	st := p.Stats()
	assert.EqualValues(t, 0, st[0].InFlight)
	assert.EqualValues(t, 3, st[0].Orphaned)
	assert.InDelta(t, 2.084e6, float64(st[0].ResponseTime), 1e3, "censored 5ms samples raised R_s (alpha 0.1)")
	assert.Greater(t, st[0].Score, st[1].Score, "h0's orphans count in its score")
	assert.Equal(t, "h1", plan(p, q)[0])
	// h0 answers a request sent after them: it is past them, and first again
	clk.Advance(10 * time.Millisecond)
	tr.Host("h0").Observe(tr.Now(), time.Millisecond, track.Success)
	assert.EqualValues(t, 0, p.Stats()[0].Orphaned)
	assert.Equal(t, "h0", plan(p, q)[0])
}

// TestBusyHostPutLast: with P2C (the DataStax algorithm) a host with 10
// requests in flight and no response for 200ms goes last while a majority
// of the replicas is not busy, and stays in the plan.
func TestBusyHostPutLast(t *testing.T) {
	p, _, clk := testPolicy(t, 3, tailroute.WithStrategy(tailroute.P2C), tailroute.WithProbe(time.Hour), tailroute.WithBusy(10, 200*time.Millisecond))
	require.NoError(t, Wire(gocql.NewCluster("127.0.0.1"), p)) // Marks below do not measure
	tr := p.r.Tracker()
	h0, h1, h2 := tr.Host("h0"), tr.Host("h1"), tr.Host("h2")
	h0.Observe(p.r.Tracker().Now(), 10*time.Microsecond, track.Success)
	var stuck0 []track.Attempt
	for i := 0; i < 10; i++ { // 10 of h0's requests hang
		stuck0 = append(stuck0, h0.Begin(p.r.Tracker().Now()))
	}
	respond := func() { // h1 and h2 keep answering
		h1.Observe(p.r.Tracker().Now(), 100*time.Millisecond, track.Success)
		h2.Observe(p.r.Tracker().Now(), 100*time.Millisecond, track.Success)
	}
	q := &fakeQuery{}
	lastOf := func() map[string]int {
		last := map[string]int{}
		for i := 0; i < 100; i++ {
			pl := plan(p, q)
			require.Len(t, pl, 3, "every replica stays in the plan (retries, speculation)")
			last[pl[2]]++
		}
		return last
	}
	clk.Advance(199 * time.Millisecond)
	respond()
	assert.Less(t, lastOf()["h0"], 100, "10 in flight but a response 199ms ago: not busy, not always last")
	clk.Advance(time.Millisecond)
	respond()
	assert.Equal(t, 100, lastOf()["h0"], "busy: last")

	// a second busy host: no healthy majority, the busy rule is ignored
	var stuck1 []track.Attempt
	for i := 0; i < 10; i++ {
		stuck1 = append(stuck1, h1.Begin(p.r.Tracker().Now()))
	}
	clk.Advance(300 * time.Millisecond)
	h2.Observe(p.r.Tracker().Now(), 100*time.Millisecond, track.Success)
	for _, s := range p.Stats() {
		assert.Equal(t, s.ID != "h2", s.Busy, s.ID)
	}
	assert.Less(t, lastOf()["h0"], 100, "rule ignored: h0 not always last")
	for _, a := range stuck0 {
		h0.End(a)
	}
	for _, a := range stuck1 {
		h1.End(a)
	}
}

// TestStalledHostNotPromotedByRateLimit: the rate limiter sends a request to
// the next replica within its rate when the best one is over its rate, but
// never to one that owes responses and has gone silent (a frozen host's own
// rate never adapts: no responses come back to run Algorithm 2).
func TestStalledHostNotPromotedByRateLimit(t *testing.T) {
	p, _, clk := testPolicy(t, 3, tailroute.WithRate(tracker.RateConfig{InitialRate: 1, MinRate: 1}),
		tailroute.WithMaxBackpressureWait(0), tailroute.WithProbe(time.Hour))
	require.NoError(t, Wire(gocql.NewCluster("127.0.0.1"), p)) // Marks below do not measure
	clk.Set(20 * time.Second)                                  // aligned to a 20ms window
	tr := p.r.Tracker()
	h0, h1, h2 := tr.Host("h0"), tr.Host("h1"), tr.Host("h2")
	h0.Observe(p.r.Tracker().Now(), time.Millisecond, track.Success)
	h1.Observe(p.r.Tracker().Now(), 2*time.Millisecond, track.Success)
	h2.Observe(p.r.Tracker().Now(), 20*time.Millisecond, track.Success)
	stuck := h1.Begin(p.r.Tracker().Now()) // Psi: h0 1ms < h1 2ms*(1+1)^3 = 16ms < h2 20ms
	q := &fakeQuery{}

	overRate := func(h *track.Host) {
		for h.WithinRate(clk.Now()) {
			h.ConsumeToken(clk.Now())
		}
	}
	overRate(h0) // the best host is over its rate
	pl := plan(p, q)
	assert.Equal(t, []string{"h1", "h0", "h2"}, pl, "h1 answered recently: next within rate is promoted")

	clk.Advance(20 * time.Millisecond) // next window: h1 silent for 20ms >= max(10ms, 4*2ms)
	overRate(h0)
	pl = plan(p, q)
	assert.Equal(t, []string{"h2", "h0", "h1"}, pl, "stalled h1 is never within rate; it stays in the plan")
	for _, s := range p.Stats() {
		assert.Equal(t, s.ID == "h1", s.Stalled, s.ID)
	}

	h1.Observe(p.r.Tracker().Now(), 25*time.Millisecond, track.Success) // it answers: no longer stalled
	h1.End(stuck)
	for _, s := range p.Stats() {
		assert.False(t, s.Stalled, s.ID)
	}
}

// TestAttemptAccountingExact covers gocql's Mark semantics: Retry marks the
// same SelectedHost again, hosts skipped by gocql are never marked.
func TestAttemptAccountingExact(t *testing.T) {
	p, _, clk := testPolicy(t, 3, tailroute.WithRateControl(false))
	tr := p.r.Tracker()
	q := &fakeQuery{}
	next := p.Pick(q)
	h := next()
	hid := id(h)
	assert.EqualValues(t, 1, tr.Host(hid).InFlight())
	clk.Advance(3 * time.Millisecond)
	h.Mark(&gocql.RequestErrReadTimeout{}) // Retry decision: same host again
	assert.EqualValues(t, 0, tr.Host(hid).InFlight())
	clk.Advance(2 * time.Millisecond)
	h.Mark(nil)
	assert.EqualValues(t, 0, tr.Host(hid).InFlight(), "second Mark does not decrement again")
	s := tr.Host(hid).Snapshot()
	assert.EqualValues(t, 2, s.Samples, "both attempts measured (unwired)")
	assert.EqualValues(t, 2, s.Responses)
	assert.EqualValues(t, 1, s.Successes)
	keep := 0.9 * math.Exp(-float64(2*time.Millisecond)/float64(tr.Config().AgeDecay)) // R_s's weight 2ms after the first answer
	assert.InDelta(t, float64(3*time.Millisecond)*keep+float64(2*time.Millisecond)*(1-keep), float64(s.ResponseTime), 1, "retry latency measured from the previous Mark")

	// gocql skips a host without Mark (no pool / no connection) and asks for
	// the next one: a sequential (non-idempotent) plan ends the skipped attempt
	next = p.Pick(q)
	h1 := next()
	h2 := next()
	assert.EqualValues(t, 0, tr.Host(id(h1)).InFlight())
	assert.EqualValues(t, 1, tr.Host(id(h2)).InFlight())
	h2.Mark(nil)
	assert.EqualValues(t, 1, p.Counters().Abandoned)
	for _, s := range tr.Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}

	// idempotent plans may be speculative: two hand-outs outstanding at once
	qi := &fakeQuery{idempotent: true}
	next = p.Pick(qi)
	a, b := next(), next()
	assert.EqualValues(t, 1, tr.Host(id(a)).InFlight())
	assert.EqualValues(t, 1, tr.Host(id(b)).InFlight())
	b.Mark(nil)
	a.Mark(nil)
	for _, s := range tr.Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
	// host down while attempts are outstanding: the count is reset and the
	// late Mark does not drive it negative
	next = p.Pick(qi)
	c := next()
	p.HostDown(c.Info())
	assert.EqualValues(t, 0, tr.Host(id(c)).InFlight())
	c.Mark(errors.New("connection closed"))
	assert.EqualValues(t, 0, tr.Host(id(c)).InFlight())
}

// TestWiredObserverMeasures: with Wire, the observer records each attempt's
// real outcome; a cancelled speculative loser (Mark(nil)) is not recorded as
// a fast success.
func TestWiredObserverMeasures(t *testing.T) {
	p, hosts, _ := testPolicy(t, 2, tailroute.WithRateControl(false))
	cfg := gocql.NewCluster("127.0.0.1")
	prev := &countingObserver{}
	cfg.QueryObserver = prev
	require.NoError(t, Wire(cfg, p))
	assert.Same(t, p, cfg.PoolConfig.HostSelectionPolicy)
	tr := p.r.Tracker()
	base := time.Now()
	obs := cfg.QueryObserver
	obs.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: hosts[0], Start: base, End: base.Add(10 * time.Millisecond)})
	obs.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: hosts[0], Start: base, End: base.Add(time.Microsecond), Err: context.Canceled})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs.ObserveQuery(ctx, gocql.ObservedQuery{Host: hosts[0], Start: base, End: base.Add(time.Microsecond), Err: errors.New("gocql: connection closed")})
	s := tr.Host("h0").Snapshot()
	assert.Equal(t, 10*time.Millisecond, s.ResponseTime, "cancelled attempts did not pull R_s down")
	assert.EqualValues(t, 1, s.Samples)
	assert.Equal(t, 3, prev.n, "previously installed observer still called")

	// Mark does not measure when wired: only the in-flight count changes
	next := p.Pick(&fakeQuery{})
	h := next()
	h.Mark(nil)
	assert.EqualValues(t, 1, tr.Host("h0").Snapshot().Samples+tr.Host("h1").Snapshot().Samples)

	cfg.BatchObserver.ObserveBatch(context.Background(), gocql.ObservedBatch{Host: hosts[1], Start: base, End: base.Add(3 * time.Millisecond), Err: &gocql.RequestErrUnavailable{}})
	s = tr.Host("h1").Snapshot()
	assert.EqualValues(t, 1, s.Responses)
	assert.EqualValues(t, 0, s.Successes, "unavailable is a failure")
}

type countingObserver struct{ n int }

func (c *countingObserver) ObserveQuery(context.Context, gocql.ObservedQuery) { c.n++ }

type codeErr int

func (c codeErr) Code() int       { return int(c) }
func (c codeErr) Message() string { return "x" }
func (c codeErr) Error() string   { return fmt.Sprintf("code %#x", int(c)) }

func TestClassify(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	cases := []struct {
		ctx  context.Context
		err  error
		want track.Outcome
	}{
		{bg, nil, track.Success},
		{bg, gocql.ErrNotFound, track.Success},
		{bg, codeErr(gocql.ErrCodeSyntax), track.Success},
		{bg, codeErr(gocql.ErrCodeInvalid), track.Success},
		{bg, codeErr(gocql.ErrCodeOverloaded), track.Failure},
		{bg, &gocql.RequestErrUnavailable{}, track.Failure},
		{bg, &gocql.RequestErrReadTimeout{}, track.Failure},
		{bg, codeErr(gocql.ErrCodeServer), track.Failure},
		{bg, context.Canceled, track.Cancelled},
		{bg, fmt.Errorf("wrapped: %w", context.DeadlineExceeded), track.Cancelled},
		{done, errors.New("gocql: connection closed"), track.Cancelled},
		{done, nil, track.Success},
		{bg, gocql.ErrTimeoutNoResponse, track.Lost},
		{bg, errors.New("gocql: connection closed"), track.Lost},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, classify(c.ctx, c.err), "%v", c.err)
	}
}

// TestConcurrentPickMark: 64 goroutines picking and marking with every
// strategy, idempotent and not, retries, skipped hosts, up/down flapping;
// afterwards every in-flight count is back to zero.
func TestConcurrentPickMark(t *testing.T) {
	for _, s := range []tailroute.Strategy{tailroute.C3, tailroute.P2C, tailroute.RoundRobin} {
		t.Run(s.String(), func(t *testing.T) {
			p, err := New(tailroute.WithStrategy(s), tailroute.WithMaxBackpressureWait(50*time.Microsecond))
			require.NoError(t, err)
			var hosts []*gocql.HostInfo
			for i := 0; i < 4; i++ {
				hosts = append(hosts, newHostInfo(fmt.Sprintf("c%d", i), fmt.Sprintf("127.0.2.%d", i+1)))
			}
			p.AddHosts(hosts)
			var wg sync.WaitGroup
			for g := 0; g < 64; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					q := &fakeQuery{idempotent: g%2 == 0}
					for i := 0; i < 200; i++ {
						next := p.Pick(q)
						h := next()
						if h == nil {
							continue
						}
						switch i % 5 {
						case 0: // retry on the same host, then success
							h.Mark(&gocql.RequestErrReadTimeout{})
							h.Mark(nil)
						case 1: // skipped by gocql, next host used
							if h2 := next(); h2 != nil {
								h2.Mark(nil)
							}
							if q.idempotent {
								h.Mark(nil) // speculative loser
							}
						case 2:
							h.Mark(errors.New("boom"))
						default:
							h.Mark(nil)
						}
						if g == 0 && i%50 == 0 {
							p.HostDown(hosts[1])
							_ = p.Stats()
							p.HostUp(hosts[1])
						}
					}
				}(g)
			}
			wg.Wait()
			for _, s := range p.r.Tracker().Snapshot() {
				assert.EqualValues(t, 0, s.InFlight, s.ID)
			}
		})
	}
}

func TestStatsSnapshot(t *testing.T) {
	p, hosts, _ := testPolicy(t, 2)
	p.r.Tracker().Host("h0").Observe(p.r.Tracker().Now(), 2*time.Millisecond, track.Success)
	p.HostDown(hosts[1])
	st := p.Stats()
	require.Len(t, st, 2)
	assert.Equal(t, "h0", st[0].ID)
	assert.True(t, st[0].Up)
	assert.False(t, st[1].Up)
	assert.Equal(t, 2*time.Millisecond, st[0].ResponseTime)
	assert.InDelta(t, float64(6*time.Millisecond), st[0].Score, 1, "idle host: Psi + 2/mu_s = 3R")
	assert.Equal(t, 100.0, st[0].Rate, "InitialRate 100, one response (rrate 1) but nothing sent through the limiter: application-limited, no decrease")
	assert.True(t, st[0].WithinRate)
	assert.True(t, st[0].Local)
	assert.Contains(t, st[0].Address, "127.0.1.1")
	p.RemoveHost(hosts[1])
	assert.Len(t, p.Stats(), 1)
	_, ok := p.r.Tracker().Lookup("h1")
	assert.False(t, ok)
}
