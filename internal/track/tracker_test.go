package track

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/tracker"
)

func newTest(t *testing.T, mod func(*tracker.Config)) (*Tracker, *tracker.ManualClock) {
	t.Helper()
	clk := tracker.NewManualClock(time.Second)
	cfg := tracker.Config{Clock: clk}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := New(cfg)
	require.NoError(t, err)
	return tr, clk
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		mod   func(*tracker.Config)
		field string
	}{
		{func(c *tracker.Config) { c.EWMAAlpha = 1.5 }, "EWMAAlpha = 1.5, allowed (0,1]"},
		{func(c *tracker.Config) { c.EWMAAlpha = -0.1 }, "EWMAAlpha"},
		{func(c *tracker.Config) { c.LatencyWindow = time.Millisecond }, "LatencyWindow = 1ms, allowed 10ms..1h"},
		{func(c *tracker.Config) { c.MinQuantileSamples = -3 }, "MinQuantileSamples = -3"},
		{func(c *tracker.Config) { c.HealthBucket = 2 * time.Hour }, "HealthBucket"},
		{func(c *tracker.Config) { c.DefaultResponseTime = -1 }, "DefaultResponseTime"},
		{func(c *tracker.Config) { c.ForgetAfter = 5 * time.Millisecond }, "ForgetAfter = 5ms, allowed 10ms..1h or negative (never)"},
		{func(c *tracker.Config) { c.AgeDecay = time.Microsecond }, "AgeDecay = 1µs, allowed 1ms..1h or negative (off)"},
		{func(c *tracker.Config) { c.SampleCap = 1 }, "SampleCap = 1, allowed 1.5..1000 or negative (no cap)"},
		{func(c *tracker.Config) { c.SampleCap = 5000 }, "SampleCap = 5000"},
		{func(c *tracker.Config) { c.SampleCap = math.NaN() }, "SampleCap = NaN"},
		{func(c *tracker.Config) { c.Rate.Beta = 1 }, "RateConfig.Beta = 1, allowed (0,1)"},
		{func(c *tracker.Config) { c.Rate.Interval = time.Microsecond }, "RateConfig.Interval"},
		{func(c *tracker.Config) { c.Rate.SMax = -1 }, "RateConfig.SMax"},
		{func(c *tracker.Config) { c.Rate.MinRate = 0.5 }, "RateConfig.MinRate = 0.5"},
		{func(c *tracker.Config) { c.Rate.InitialRate = 2; c.Rate.MinRate = 5 }, "RateConfig.InitialRate = 2"},
		{func(c *tracker.Config) { c.Rate.Saddle = -time.Second }, "RateConfig.Saddle"},
		{func(c *tracker.Config) { c.Rate.Hysteresis = -time.Second }, "RateConfig.Hysteresis"},
	}
	for _, tc := range cases {
		cfg := tracker.Config{}
		tc.mod(&cfg)
		_, err := New(cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.field)
	}
	_, err := New(tracker.Config{EWMAAlpha: 2, Rate: tracker.RateConfig{Beta: 3}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EWMAAlpha = 2", "every bad field is reported")
	assert.Contains(t, err.Error(), "RateConfig.Beta = 3", "every bad field is reported")
	tr, err := New(tracker.Config{})
	require.NoError(t, err)
	c := tr.Config()
	assert.Equal(t, 0.1, c.EWMAAlpha)
	assert.Equal(t, 20*time.Millisecond, c.Rate.Interval)
	assert.Equal(t, 0.2, c.Rate.Beta)
	assert.Equal(t, 100*time.Millisecond, c.Rate.Saddle)
	assert.Equal(t, 40*time.Millisecond, c.Rate.Hysteresis)
	assert.Equal(t, 10.0, c.Rate.SMax)
	assert.Equal(t, time.Second, c.ForgetAfter)
	assert.Equal(t, 4.0, c.SampleCap)
}

// TestSampleCap: a stall's late answers move R_s by at most
// Config.SampleCap per sample, so a host that has just come out of a pause
// is not scored as several times slower; the latency histogram keeps them;
// a host that really slows down still reaches its new R_s; a negative cap
// is no cap.
func TestSampleCap(t *testing.T) {
	const ms = float64(time.Millisecond)
	stall := func(mod func(*tracker.Config)) (*Host, *Tracker) {
		tr, clk := newTest(t, mod)
		h := tr.Host("a")
		for i := 0; i < 30; i++ {
			h.Observe(tr.Now(), 5*time.Millisecond, Success)
			clk.Advance(time.Millisecond)
		}
		clk.Advance(150 * time.Millisecond) // frozen: the first answer after it waited 150ms
		h.Observe(tr.Now(), 150*time.Millisecond, Success)
		return h, tr
	}
	a := 1 - 0.9*math.Exp(-151.0/250) // alpha' after 151ms without a response (AgeDecay 250ms)

	h, tr := stall(nil)
	assert.InDelta(t, 5*ms+a*15*ms, h.View(tr.Now()).ResponseTime, 1e3, "capped at 4 x 5ms")
	assert.InDelta(t, 150*ms, float64(h.Snapshot().P99), 2*ms, "the histogram keeps the sample")

	h, tr = stall(func(c *tracker.Config) { c.SampleCap = -1 })
	assert.InDelta(t, 5*ms+a*145*ms, h.View(tr.Now()).ResponseTime, 1e3, "no cap")

	// A host five times slower from now on, answering back to back.
	tr, clk := newTest(t, nil)
	slow := tr.Host("slow")
	for i := 0; i < 30; i++ {
		slow.Observe(tr.Now(), 5*time.Millisecond, Success)
		clk.Advance(time.Millisecond)
	}
	for i := 0; i < 15; i++ {
		slow.Observe(tr.Now(), 25*time.Millisecond, Success)
		clk.Advance(time.Millisecond)
	}
	assert.Greater(t, slow.View(tr.Now()).ResponseTime, 20*ms, "a real slowdown is followed within 15 samples")
}

// TestForgetAfter: an idle host's old estimates fade toward the other
// hosts' mean once it has not answered for ForgetAfter, in the view and in
// the stored EWMA when it answers again; busy or recent hosts are untouched.
func TestForgetAfter(t *testing.T) {
	plain := func(c *tracker.Config) { c.AgeDecay = -1 } // plain EWMA: the forgetting alone
	tr, clk := newTest(t, plain)
	a, b, c := tr.Host("a"), tr.Host("b"), tr.Host("c")
	a.Observe(tr.Now(), 10*time.Millisecond, Success) // a was slow once...
	a.Feedback(8, 4*time.Millisecond)
	clk.Advance(time.Second) // ...exactly ForgetAfter ago: still trusted
	b.Observe(tr.Now(), time.Millisecond, Success)
	c.Observe(tr.Now(), 3*time.Millisecond, Success) // others' mean: 2ms
	v := a.View(tr.Now())
	assert.InDelta(t, float64(10*time.Millisecond), v.ResponseTime, 1)
	assert.InDelta(t, 8, v.QueueSize, 1e-9)

	clk.Advance(time.Second) // 2s: keeps exp(-1) of the difference
	f := math.Exp(-1)
	v = a.View(tr.Now())
	assert.InDelta(t, 2e6+8e6*f, v.ResponseTime, 1)
	assert.InDelta(t, 8*f, v.QueueSize, 1e-9)
	assert.Equal(t, 4*time.Millisecond, time.Duration(v.ServiceTime), "server-reported service time is kept")

	att := a.Begin(tr.Now()) // a host that owes a response is not idle: nothing is forgotten
	assert.InDelta(t, float64(10*time.Millisecond), a.View(tr.Now()).ResponseTime, 1)
	// its answer lands on the forgotten estimate, not on the stale one
	a.Observe(tr.Now(), 2*time.Millisecond, Success)
	a.End(att)
	assert.InDelta(t, 0.9*(2e6+8e6*f)+0.1*2e6, float64(a.Snapshot().ResponseTime), 2)

	// a lost attempt (timeout) after a long silence is no response: it
	// forgets nothing, or a host timing out again and again would see its
	// R_s shrink toward the others' with every timeout
	lt, clk3 := newTest(t, plain)
	x := lt.Host("x")
	lt.Host("y").Observe(tr.Now(), time.Millisecond, Success)
	x.Observe(tr.Now(), 10*time.Millisecond, Success)
	clk3.Advance(3 * time.Second)
	x.Observe(tr.Now(), 30*time.Millisecond, Lost)
	assert.InDelta(t, 0.9*10e6+0.1*30e6, float64(x.Snapshot().ResponseTime), 2)

	never, clk2 := newTest(t, func(c *tracker.Config) { c.ForgetAfter = -1 })
	h := never.Host("a")
	h.Observe(tr.Now(), 10*time.Millisecond, Success)
	never.Host("b").Observe(tr.Now(), time.Millisecond, Success)
	clk2.Advance(time.Hour)
	assert.InDelta(t, float64(10*time.Millisecond), h.View(never.Now()).ResponseTime, 1)
}

// TestAgeDecay: R_s weighs a sample by the age of the estimate it updates
// (alpha' = 1-(1-alpha)*exp(-dt/tau)): back-to-back answers average as
// the plain EWMA does, an answer after a quiet spell mostly replaces the
// old estimate, and a host fast again after being slow is seen to be fast
// after a few sparse answers.
func TestAgeDecay(t *testing.T) {
	tr, clk := newTest(t, nil)
	assert.Equal(t, 250*time.Millisecond, tr.Config().AgeDecay)
	h := tr.Host("a")
	h.Observe(tr.Now(), 40*time.Millisecond, Success)
	h.Observe(tr.Now(), 10*time.Millisecond, Success) // dt = 0: alpha
	assert.InDelta(t, 37e6, float64(h.Snapshot().ResponseTime), 1)
	clk.Advance(250 * time.Millisecond)
	h.Observe(tr.Now(), 10*time.Millisecond, Success) // dt = tau: keeps 0.9/e
	w := 0.9 * math.Exp(-1)
	assert.InDelta(t, 10e6+27e6*w, float64(h.Snapshot().ResponseTime), 1)

	slow, plainSlow := tr.Host("s"), func() *Host {
		pt, _ := newTest(t, func(c *tracker.Config) { c.AgeDecay = -1 })
		return pt.Host("s")
	}()
	for i := 0; i < 50; i++ {
		slow.Observe(tr.Now(), 40*time.Millisecond, Success)
		plainSlow.Observe(tr.Now(), 40*time.Millisecond, Success)
	}
	for i := 0; i < 5; i++ { // five answers 200ms apart at 4ms
		clk.Advance(200 * time.Millisecond)
		slow.Observe(tr.Now(), 4*time.Millisecond, Success)
		plainSlow.Observe(tr.Now(), 4*time.Millisecond, Success)
	}
	assert.Less(t, slow.Snapshot().ResponseTime, 5*time.Millisecond, "mostly the recent answers")
	assert.Greater(t, plainSlow.Snapshot().ResponseTime, 20*time.Millisecond, "plain EWMA: 0.9^5 of the old")
}

// TestFeedbackAgeDecay: the server's feedback (q_s, 1/mu_s) ages as R_s
// does, dt being the time since the host's last feedback: back to back it
// averages with alpha, after tau it keeps 0.9/e of the old estimate, and
// with AgeDecay off it is the plain EWMA.
func TestFeedbackAgeDecay(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	h.Feedback(10, 10*time.Millisecond)
	h.Feedback(0, 0) // dt = 0: alpha
	v := h.View(tr.Now())
	assert.InDelta(t, 9, v.QueueSize, 1e-9)
	assert.InDelta(t, 9e6, v.ServiceTime, 1e-3)
	clk.Advance(250 * time.Millisecond)
	h.Feedback(0, 0) // dt = tau
	w := 0.9 * math.Exp(-1)
	v = h.View(tr.Now())
	assert.InDelta(t, 9*w, v.QueueSize, 1e-9)
	assert.InDelta(t, 9e6*w, v.ServiceTime, 1e-3)

	pt, pclk := newTest(t, func(c *tracker.Config) { c.AgeDecay = -1 })
	p := pt.Host("a")
	p.Feedback(10, 10*time.Millisecond)
	pclk.Advance(time.Second)
	p.Feedback(0, 0)
	assert.InDelta(t, 9, p.View(pt.Now()).QueueSize, 1e-9, "plain EWMA: alpha whatever the gap")
}

func TestEWMA(t *testing.T) {
	var e ewma
	_, ok := e.get()
	assert.False(t, ok)
	e.add(0, 0.5) // a zero sample must not read as "empty"
	v, ok := e.get()
	assert.True(t, ok)
	assert.Equal(t, 0.0, v)
	e.add(10, 0.5)
	v, _ = e.get()
	assert.Equal(t, 5.0, v)
	e.add(10, 0.5)
	v, _ = e.get()
	assert.Equal(t, 7.5, v)
}

func TestLatencyQuantile(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	_, ok := tr.LatencyQuantile(0.99)
	assert.False(t, ok, "no samples")
	for i := 0; i < 10; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	_, ok = tr.LatencyQuantile(0.5)
	assert.False(t, ok, "10 < MinQuantileSamples")
	_, ok = tr.LatencyQuantile(0)
	assert.False(t, ok, "q out of range")
	_, ok = tr.LatencyQuantile(1.5)
	assert.False(t, ok, "q out of range")

	// 1..1000 µs uniformly: p50 ~ 500µs, p99 ~ 990µs
	tr2, clk2 := newTest(t, nil)
	h2 := tr2.Host("b")
	xs := rand.Perm(1000)
	for _, x := range xs {
		h2.Observe(tr2.Now(), time.Duration(x+1)*time.Microsecond, Success)
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		d, ok := tr2.LatencyQuantile(q)
		require.True(t, ok)
		assert.InEpsilon(t, q*1000, float64(d)/1e3, 0.07, "q=%v got %v", q, d)
		hd, ok := h2.LatencyQuantile(q)
		require.True(t, ok)
		assert.Equal(t, d, hd, "single host: host and cluster agree")
	}
	// samples age out after two windows
	clk2.Advance(6 * time.Second)
	_, ok = tr2.LatencyQuantile(0.5)
	assert.True(t, ok, "previous window still counts")
	clk2.Advance(5 * time.Second)
	_, ok = tr2.LatencyQuantile(0.5)
	assert.False(t, ok, "both windows expired")
	// new samples after a long idle period are not mixed with stale ones
	for i := 0; i < 50; i++ {
		h2.Observe(tr2.Now(), 50*time.Millisecond, Success)
	}
	d, ok := tr2.LatencyQuantile(0.01)
	require.True(t, ok)
	assert.InEpsilon(t, 50e6, float64(d), 0.07)
	_ = clk
}

// TestLatencyMedianCache checks LatencyMedian against a merge of the
// host's histogram as samples and censored samples arrive, as sub-windows
// roll over and after Reset, and that a repeated read is the cached one.
func TestLatencyMedianCache(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	win := tr.Config().LatencyWindow
	same := func(what string) time.Duration {
		t.Helper()
		now := tr.Now()
		d, n := h.LatencyMedian(now)
		md, mn := h.hist.Quantile(now, 0.5)
		require.Equal(t, md, d, what)
		require.Equal(t, mn, n, what)
		d2, n2 := h.LatencyMedian(now)
		require.Equal(t, d, d2, what+", read again")
		require.Equal(t, n, n2, what+", read again")
		return d
	}
	same("empty")
	for i := 0; i < 3; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
		same("after a sample")
	}
	for i := 0; i < 4; i++ {
		h.Observe(tr.Now(), 10*time.Millisecond, Success)
		same("after a slower sample")
	}
	require.Greater(t, same("samples"), 9*time.Millisecond)

	// a sample recorded behind the cache's back is not seen: reads hit
	before := same("before")
	for i := 0; i < 10; i++ {
		h.hist.Record(tr.Now(), time.Second)
	}
	d, _ := h.LatencyMedian(tr.Now())
	require.Equal(t, before, d, "cached")
	h.Observe(tr.Now(), 10*time.Millisecond, Success)
	require.Greater(t, same("a sample invalidates"), 900*time.Millisecond)

	// censored samples (orphans) change the histogram without a sample
	for i := 0; i < 24; i++ {
		h.Observe(tr.Now(), 3*time.Second, Cancelled)
		same("after a censored sample")
	}
	require.Greater(t, same("censored"), 2*time.Second)

	// sub-windows roll over: the older samples leave the window
	clk.Advance(win)
	for i := 0; i < 100; i++ {
		h.Observe(tr.Now(), 5*time.Millisecond, Success)
	}
	require.Equal(t, 5*time.Millisecond, same("new sub-window").Round(time.Millisecond))
	clk.Advance(win)
	require.Equal(t, 5*time.Millisecond, same("previous window still counts").Round(time.Millisecond))
	clk.Advance(win)
	require.Zero(t, same("both windows left"))

	// Reset empties the cache: as many samples again, in the same sub-window
	h = tr.Host("b")
	for i := 0; i < 3; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	same("before Reset")
	h.Reset()
	for i := 0; i < 3; i++ {
		h.Observe(tr.Now(), 50*time.Millisecond, Success)
	}
	require.Greater(t, same("after Reset"), 40*time.Millisecond)
}

func TestAttemptAccounting(t *testing.T) {
	tr, _ := newTest(t, nil)
	h := tr.Host("a")
	a1, a2 := h.Begin(tr.Now()), h.Begin(tr.Now())
	assert.EqualValues(t, 2, h.InFlight())
	assert.True(t, h.End(a1))
	assert.EqualValues(t, 1, h.InFlight())
	h.Reset() // host went down and came back
	assert.EqualValues(t, 0, h.InFlight())
	assert.False(t, h.End(a2), "attempt from before the reset is not counted")
	assert.EqualValues(t, 0, h.InFlight(), "never negative")
	a3 := h.Begin(tr.Now())
	assert.EqualValues(t, 1, h.InFlight())
	assert.True(t, h.End(a3))
	assert.False(t, h.End(a3), "a second End of the same attempt when count is zero")
	assert.EqualValues(t, 0, h.InFlight())
}

func TestCancelledIsNotAMeasurement(t *testing.T) {
	tr, clk := newTest(t, func(c *tracker.Config) { c.AgeDecay = -1 }) // plain EWMA
	h := tr.Host("a")
	h.Observe(tr.Now(), 10*time.Millisecond, Success)
	clk.Advance(time.Second)
	h.Observe(tr.Now(), time.Microsecond, Cancelled)
	s := h.Snapshot()
	assert.Equal(t, 10*time.Millisecond, s.ResponseTime, "cancelled attempt did not pull R_s down")
	assert.EqualValues(t, 1, s.Orphaned)
	assert.Equal(t, time.Second, s.SinceResponse, "cancelled attempt is not a response")
	assert.EqualValues(t, 1, s.Samples)
	assert.EqualValues(t, 1, s.Responses)

	// Lost: a failure, a latency sample, but not a response
	h.Observe(tr.Now(), 20*time.Millisecond, Lost)
	s = h.Snapshot()
	assert.Equal(t, time.Second, s.SinceResponse)
	assert.EqualValues(t, 2, s.Responses)
	assert.EqualValues(t, 1, s.Successes)
	assert.Equal(t, 11*time.Millisecond, s.ResponseTime)
}

func TestViewFallbacks(t *testing.T) {
	tr, _ := newTest(t, nil)
	a, b := tr.Host("a"), tr.Host("b")
	now := tr.Now()
	v := a.View(now)
	assert.False(t, v.HasSamples)
	assert.Equal(t, float64(time.Millisecond), v.ResponseTime, "DefaultResponseTime prior")
	assert.Equal(t, v.ResponseTime, v.ServiceTime, "no feedback: 1/mu_s falls back to R_s")
	assert.Equal(t, 0.0, v.QueueSize)
	assert.Equal(t, 1.0, v.SuccessRate, "clean slate is healthy")

	b.Observe(tr.Now(), 4*time.Millisecond, Success)
	v = a.View(now)
	assert.Equal(t, float64(4*time.Millisecond), v.ResponseTime, "cluster prior for a host without samples")
	vb := b.View(now)
	assert.True(t, vb.HasSamples)

	b.Feedback(3, 2*time.Millisecond)
	b.Feedback(5, 4*time.Millisecond)
	vb = b.View(now)
	assert.True(t, vb.HasFeedback)
	assert.InDelta(t, 3.2, vb.QueueSize, 1e-9, "EWMA alpha 0.1")
	assert.InDelta(t, 2.2e6, vb.ServiceTime, 1e-3)
}

func TestBusyThresholds(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	busy := func() bool { // Host.Busy and View.Busy are one rule
		b := h.Busy(tr.Now(), 10, 200*time.Millisecond)
		require.Equal(t, b, h.View(tr.Now()).Busy(10, 200*time.Millisecond))
		return b
	}
	var as []Attempt
	for i := 0; i < 9; i++ {
		as = append(as, h.Begin(tr.Now()))
	}
	clk.Advance(time.Second)
	assert.False(t, busy(), "9 in flight < 10")
	as = append(as, h.Begin(tr.Now()))
	assert.True(t, busy(), "10 in flight, no response for 1s")
	h.Observe(tr.Now(), time.Millisecond, Success)
	assert.False(t, busy(), "just responded")
	clk.Advance(199 * time.Millisecond)
	assert.False(t, busy(), "199ms < 200ms")
	clk.Advance(time.Millisecond)
	assert.True(t, busy(), "200ms without response")
	h.Observe(tr.Now(), time.Millisecond, Cancelled)
	assert.True(t, busy(), "a cancelled attempt is no response")
	h.End(as[0])
	assert.True(t, busy(), "9 in flight + 1 orphaned (the host still serves it)")
	h.End(as[1])
	assert.False(t, busy(), "8 in flight + 1 orphaned")
}

// TestOrphaned: a cancelled attempt stays on the host (CQL cannot cancel)
// until the host answers a later request, and its elapsed time is a lower
// bound of its latency.
func TestOrphaned(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	h.Observe(tr.Now(), 10*time.Millisecond, Success)
	clk.Advance(100 * time.Millisecond)
	// sent 50ms ago, given up now (a hedge won elsewhere)
	a := h.Begin(tr.Now())
	h.Observe(tr.Now(), 50*time.Millisecond, Cancelled)
	h.End(a)
	v := h.View(tr.Now())
	assert.EqualValues(t, 0, v.InFlight)
	assert.EqualValues(t, 1, v.Orphaned)
	assert.EqualValues(t, 1, v.Outstanding(), "os_s as rankers see it: in flight + orphaned")
	assert.EqualValues(t, 1, h.Outstanding(tr.Now()))
	assert.Zero(t, v.Silence, "orphaned attempts owe no response the client will see")
	assert.InDelta(t, 14e6, v.ResponseTime, 1, "censored 50ms sample pulls R_s up (10 + 0.1*40 ms)")
	s := h.Snapshot()
	assert.EqualValues(t, 1, s.Orphaned)
	assert.EqualValues(t, 1, s.Samples, "not a response: no sample count")
	assert.Equal(t, 100*time.Millisecond, s.SinceResponse)

	// a short cancelled attempt (below R_s) says nothing about latency
	h.Observe(tr.Now(), time.Millisecond, Cancelled)
	assert.InDelta(t, 14e6, h.View(tr.Now()).ResponseTime, 1)
	assert.EqualValues(t, 2, h.Orphaned(tr.Now()))

	// the answer to a request sent before the orphaned ones settles nothing
	clk.Advance(time.Millisecond)
	h.Observe(tr.Now(), 60*time.Millisecond, Success)
	assert.EqualValues(t, 2, h.Orphaned(tr.Now()))
	// the answer to a request sent after them: the host is past them
	clk.Advance(5 * time.Millisecond)
	h.Observe(tr.Now(), 2*time.Millisecond, Success)
	assert.EqualValues(t, 0, h.Orphaned(tr.Now()))

	// without a later answer they stop counting after ForgetAfter
	h.Observe(tr.Now(), 30*time.Millisecond, Cancelled)
	clk.Advance(time.Second)
	assert.EqualValues(t, 1, h.Orphaned(tr.Now()), "ForgetAfter (1s) not yet exceeded")
	clk.Advance(time.Millisecond)
	assert.EqualValues(t, 0, h.Orphaned(tr.Now()))
	h.Observe(tr.Now(), 30*time.Millisecond, Cancelled)
	assert.EqualValues(t, 1, h.Orphaned(tr.Now()), "expired orphans do not come back with a new one")

	// and on Reset
	h.Observe(tr.Now(), 30*time.Millisecond, Cancelled)
	h.Reset()
	assert.EqualValues(t, 0, h.Orphaned(tr.Now()))
}

// TestSilence: how long a host has owed a response without giving one.
func TestSilence(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	clk.Advance(time.Second)
	assert.Zero(t, h.Silence(tr.Now()), "nothing outstanding")
	a := h.Begin(tr.Now())
	clk.Advance(30 * time.Millisecond)
	assert.Equal(t, 30*time.Millisecond, h.Silence(tr.Now()), "from the moment it owes a response, not from its last response 1s ago")
	b := h.Begin(tr.Now()) // a second request does not restart the clock
	clk.Advance(10 * time.Millisecond)
	assert.Equal(t, 40*time.Millisecond, h.View(tr.Now()).Silence)
	h.Observe(tr.Now(), time.Millisecond, Success) // a response while one is still outstanding
	h.End(a)
	clk.Advance(5 * time.Millisecond)
	assert.Equal(t, 5*time.Millisecond, h.Silence(tr.Now()), "since the last response")
	h.Observe(tr.Now(), time.Millisecond, Lost) // a lost attempt is no response
	clk.Advance(5 * time.Millisecond)
	assert.Equal(t, 10*time.Millisecond, h.Snapshot().Silence)
	h.End(b)
	assert.Zero(t, h.Silence(tr.Now()))
	h.Begin(tr.Now())
	clk.Advance(time.Millisecond)
	h.Reset()
	assert.Zero(t, h.View(tr.Now()).Silence, "a reset forgets the outstanding attempts")
}

func TestHealthBuckets(t *testing.T) {
	tr, clk := newTest(t, func(c *tracker.Config) { c.HealthBucket = time.Second })
	h := tr.Host("a")
	tr.Host("b") // two hosts: floor = 0.0001/2
	now := tr.Now()
	assert.Equal(t, 1.0, h.View(now).SuccessRate)
	for i := 0; i < 10; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	assert.Equal(t, 1.0, h.View(tr.Now()).SuccessRate)
	clk.Advance(time.Second) // next bucket: 10 failures, 5 successes, never 3 failures in a row
	for i := 0; i < 5; i++ {
		h.Observe(tr.Now(), time.Millisecond, Failure)
		h.Observe(tr.Now(), time.Millisecond, Failure)
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	// newest bucket weight 1, previous 1/3: (5 + 10/3) / (15 + 10/3) = 0.4545
	assert.InDelta(t, 25.0/55, h.View(tr.Now()).SuccessRate, 1e-9)
	for i := 0; i < 3; i++ {
		h.Observe(tr.Now(), time.Millisecond, Failure)
	}
	assert.Equal(t, 0.0, h.View(tr.Now()).SuccessRate, "three failures in a row: failing now (streak rule)")
	// after the window passes with no traffic, the sticky bucket remembers
	// the failures, floored at 0.0001/hosts
	clk.Advance(10 * time.Second)
	assert.InDelta(t, 0.00005, h.View(tr.Now()).SuccessRate, 1e-12)
	clk.Advance(time.Minute)
	h.Observe(tr.Now(), time.Millisecond, Success) // reusing a slot moves old data to sticky; new data wins
	assert.Equal(t, 1.0, h.View(tr.Now()).SuccessRate)
	h.Reset()
	assert.Equal(t, 1.0, h.View(tr.Now()).SuccessRate)
	assert.EqualValues(t, 0, h.Snapshot().Responses)
}

// setRecv makes the receive rate at now exactly n.
func setRecv(r *rateCtl, now time.Duration, n uint64) {
	id := int64(now) / r.interval
	r.recv.cur.Store(winPack(id, n))
	r.recv.prev.Store(winPack(id-1, 0))
}

// setSent makes the client's sending in the current and previous window n.
func setSent(r *rateCtl, now time.Duration, n uint64) {
	id := int64(now) / r.interval
	r.sent.cur.Store(winPack(id, n))
	r.sent.prev.Store(winPack(id-1, n))
}

// TestRateTraceAlgorithm2 drives the controller through a hand-computed trace
// of Algorithm 2 (beta 0.2, saddle 100ms, hysteresis 40ms, s_max 10). The
// client sends at its full rate except where a step says it is
// application-limited (then a decrease does not apply).
func TestRateTraceAlgorithm2(t *testing.T) {
	tr, clk := newTest(t, func(c *tracker.Config) { c.Rate.InitialRate = 50 })
	h := tr.Host("a")
	r := &h.rate
	t0 := clk.Now()
	require.Equal(t, 50.0, r.rate())
	steps := []struct {
		at         time.Duration
		rrate      uint64
		want       float64
		why        string
		appLimited bool
	}{
		{0, 30, 10, "srate 50 > rrate 30: decrease by beta, R0 = 50", false},
		{5 * time.Millisecond, 30, 20, "increase capped by s_max (curve 41.43)", false},
		{6 * time.Millisecond, 30, 30, "s_max cap again (curve 41.69)", false},
		{7 * time.Millisecond, 45, 40, "s_max cap again (curve 41.96)", false},
		{8 * time.Millisecond, 45, 10*math.Pow(-0.92, 3) + 50, "cubic curve binds: 0.2*50*((8-100)/100)^3 + 50", false},
		{30 * time.Millisecond, 20, 10*math.Pow(-0.92, 3) + 50, "srate > rrate but within hysteresis (22ms < 40ms): hold", false},
		{100 * time.Millisecond, 60, 50, "saddle: curve is back at R0 after 100ms", false},
		{150 * time.Millisecond, 60, 51.25, "beyond the saddle: 0.2*50*0.5^3 + 50", false},
		{300 * time.Millisecond, 200, 61.25, "optimistic probing: curve 130, step capped by s_max", false},
		{320 * time.Millisecond, 10, 61.25, "hysteresis after the last increase", false},
		{341 * time.Millisecond, 10, 61.25 * 0.2, "41ms after the increase: decrease, R0 = 61.25", false},
		{342 * time.Millisecond, 1, 2.45, "no increase since: decrease again", false},
		{343 * time.Millisecond, 0, 1, "floored at MinRate", false},
		{344 * time.Millisecond, 50, 0.2*2.45*math.Pow(-0.99, 3) + 2.45, "R0 = 2.45 (srate before the floored decrease): curve 0.2*2.45*((1-100)/100)^3 + 2.45", false},
		{400 * time.Millisecond, 0, 0.2*2.45*math.Pow(-0.99, 3) + 2.45, "srate > rrate past hysteresis, but the client sent less than srate: rrate is its demand, hold", true},
		{401 * time.Millisecond, 0, 1, "sending at the full rate again: decrease (floored)", false},
	}
	for i, s := range steps {
		clk.Set(t0 + s.at)
		setRecv(r, clk.Now(), s.rrate)
		sent := uint64(math.Ceil(r.rate()))
		if s.appLimited {
			sent--
		}
		setSent(r, clk.Now(), sent)
		r.adapt(clk.Now(), false)
		assert.InDelta(t, s.want, r.rate(), 1e-9, "step %d (%v): %s", i, s.at, s.why)
	}
	assert.EqualValues(t, 5, r.decs.Load())
	assert.EqualValues(t, 8, r.incs.Load())

	// CubicRate is the same curve with gamma derived from the saddle
	assert.InDelta(t, 0.8*50, CubicRate(0, 100*time.Millisecond, 0.2, 50), 1e-9)
	assert.InDelta(t, 50, CubicRate(100*time.Millisecond, 100*time.Millisecond, 0.2, 50), 1e-9)
	assert.InDelta(t, 51.25, CubicRate(150*time.Millisecond, 100*time.Millisecond, 0.2, 50), 1e-9)
}

// TestRateWindowAndReceiveRate checks the Algorithm 1 token window and the
// receive-rate estimate through the public API.
func TestRateWindowAndReceiveRate(t *testing.T) {
	tr, clk := newTest(t, func(c *tracker.Config) { c.Rate.InitialRate = 3 })
	clk.Set(time.Second) // window aligned
	h := tr.Host("a")
	now := clk.Now()
	for i := 0; i < 3; i++ {
		require.True(t, h.WithinRate(now), "token %d", i)
		h.ConsumeToken(now)
	}
	assert.False(t, h.WithinRate(now), "3 sent with srate 3")
	assert.Equal(t, 20*time.Millisecond, h.UntilNextRateWindow(now))
	clk.Advance(5 * time.Millisecond)
	assert.Equal(t, 15*time.Millisecond, h.UntilNextRateWindow(clk.Now()))
	clk.Advance(15 * time.Millisecond)
	assert.True(t, h.WithinRate(clk.Now()), "tokens replenished in the next window")

	// receive rate: 10 responses in one window, then sliding
	clk.Set(2 * time.Second)
	for i := 0; i < 10; i++ {
		h.rate.countResponse(clk.Now())
	}
	assert.InDelta(t, 10, h.ReceiveRate(clk.Now()), 1e-9)
	clk.Advance(25 * time.Millisecond) // 5ms into the next window
	assert.InDelta(t, 7.5, h.ReceiveRate(clk.Now()), 1e-9)
	clk.Advance(40 * time.Millisecond)
	assert.InDelta(t, 0, h.ReceiveRate(clk.Now()), 1e-9)

	// Observe runs Algorithm 2: a lone response with srate 3 > rrate 1...
	h.Observe(tr.Now(), time.Millisecond, Success)
	assert.InDelta(t, 3, h.Rate(), 1e-9, "...holds while the client sends below srate (application-limited)")
	clk.Advance(40 * time.Millisecond)
	for i := 0; i < 3; i++ {
		h.ConsumeToken(clk.Now())
	}
	h.Observe(tr.Now(), time.Millisecond, Success)
	assert.InDelta(t, 1, h.Rate(), 1e-9, "...and decreases once the client uses its full rate: 3*0.2 floored at 1")
	// a burst of responses above srate increases it
	for i := 0; i < 5; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	assert.Greater(t, h.Rate(), 1.0)
}

func TestConcurrentHosts(t *testing.T) {
	tr, err := New(tracker.Config{})
	require.NoError(t, err)
	ids := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				h := tr.Host(ids[(g+i)%len(ids)])
				a := h.Begin(tr.Now())
				_ = h.View(tr.Now())
				h.ConsumeToken(tr.Now())
				h.Observe(tr.Now(), time.Duration(100+i)*time.Microsecond, Outcome(i%4))
				_, _ = h.LatencyMedian(tr.Now())
				if i%50 == 0 {
					h.Feedback(float64(i%7), time.Millisecond)
					_ = h.Snapshot()
					_, _ = tr.LatencyQuantile(0.99)
				}
				if g == 0 && i%100 == 99 {
					h.Reset()
				}
				h.End(a)
			}
		}(g)
	}
	wg.Wait()
	var names []string
	for _, s := range tr.Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
		names = append(names, s.ID)
	}
	for _, h := range tr.Hosts() { // the cache holds no sample the merge has not
		now := tr.Now()
		d, n := h.LatencyMedian(now)
		md, mn := h.hist.Quantile(now, 0.5)
		assert.Equal(t, md, d, h.ID())
		assert.Equal(t, mn, n, h.ID())
	}
	assert.True(t, sort.StringsAreSorted(names))
	assert.Equal(t, strings.Join(ids, ","), strings.Join(names, ","))
	d, ok := tr.LatencyQuantile(0.5)
	assert.True(t, ok)
	assert.Greater(t, d, 100*time.Microsecond)
}

// pollHosts gives hosts a, b and c of tr W_s = 4 and a server-load sample
// of queue queue at now, fresh for a second.
func pollHosts(tr *Tracker, now time.Duration, queue float64) {
	for _, id := range []string{"a", "b", "c"} {
		h := tr.Host(id)
		h.ServerWorkers(4)
		h.ServerLoad(now, queue, time.Millisecond, time.Second, time.Second)
	}
}

// rateAfterOneAnswer returns host a's srate after one answer at now with
// nothing sent (srate 100 > rrate 1, the client's demand: Algorithm 2
// decreases only where a rule lets it below the full rate).
func rateAfterOneAnswer(t *testing.T, tr *Tracker, now time.Duration) float64 {
	t.Helper()
	h := tr.Host("a")
	require.InDelta(t, 100, h.Rate(), 1e-9)
	h.Observe(now, time.Millisecond, Success)
	return h.Rate()
}

// TestQueueingDecrease checks RuleQueueing: while the polled hosts hold on
// average more than QueueingLoad times their W_s requests, Algorithm 2's
// decrease applies to a client sending below its rate too; below that
// load, with a stale sample (whether a newer poll arrived or the polls
// stopped), or with the rule off, srate holds.
func TestQueueingDecrease(t *testing.T) {
	for _, c := range []struct {
		name   string
		off    Rule
		queue  float64 // each host's polled queue, W_s = 4
		age    time.Duration
		repoll bool // a poll arrives at now (with a sample of the age age)
		want   float64
	}{
		{"hosts queue: decrease", 0, 5 * 4, 0, true, 100 * 0.2},
		{"below the bound: hold", 0, QueueingLoad * 4, 0, true, 100},
		{"samples no longer count: hold", 0, 5 * 4, 5 * time.Second, true, 100},
		{"polls stopped, samples still count: decrease", 0, 5 * 4, 3 * time.Second, false, 100 * 0.2},
		{"polls stopped, samples no longer count: hold", 0, 5 * 4, 4 * time.Second, false, 100},
		{"rule off: hold", RuleQueueing, 5 * 4, 0, true, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, clk := newTest(t, nil)
			tr.SetOff(c.off)
			pollHosts(tr, clk.Now(), c.queue)
			clk.Advance(c.age)
			if c.repoll {
				tr.Host("c").ServerLoad(clk.Now()-c.age, c.queue, time.Millisecond, time.Second, time.Second) // recomputed at now
			}
			assert.InDelta(t, c.want, rateAfterOneAnswer(t, tr, clk.Now()), 1e-9)
		})
	}
}

// TestManyClientsDecrease checks RuleManyClients: for a client that is
// one of many (w >= ManyClients) the hosts queue from ManyClientsLoad
// times their W_s on average, so Algorithm 2's decrease applies below its
// full rate there; with fewer clients, none given, a load below that
// bound, or the rule off, srate holds. w given after the polls counts at
// once (SetClients recomputes the flag).
func TestManyClientsDecrease(t *testing.T) {
	for _, c := range []struct {
		name    string
		off     Rule
		clients float64 // 0: SetClients not called
		queue   float64 // each host's polled queue, W_s = 4
		want    float64
	}{
		{"one of many, hosts busy: decrease", 0, ManyClients, 2 * 4, 100 * 0.2},
		{"one of 300: decrease", 0, 300, 2 * 4, 100 * 0.2},
		{"one of many, hosts below W_s: hold", 0, 300, ManyClientsLoad * 4, 100},
		{"a large share: hold", 0, ManyClients - 1, 2 * 4, 100},
		{"no weight given: hold", 0, 0, 2 * 4, 100},
		{"rule off: hold", RuleManyClients, 300, 2 * 4, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, clk := newTest(t, nil)
			tr.SetOff(c.off)
			pollHosts(tr, clk.Now(), c.queue)
			if c.clients > 0 {
				tr.SetClients(c.clients)
			}
			assert.Equal(t, c.clients, tr.Clients())
			assert.InDelta(t, c.want, rateAfterOneAnswer(t, tr, clk.Now()), 1e-9)
		})
	}
}

// TestFastAnswer: for a client that is one of many, an answer faster than
// R_s moves it with FastAnswerWeight and a slower one with alpha'; a
// client that is a larger share of its hosts' load, or the rule off, moves
// R_s with alpha' either way.
func TestFastAnswer(t *testing.T) {
	const alpha = 0.1 // the default EWMAAlpha; answers back to back (dt = 0)
	for _, c := range []struct {
		name    string
		off     Rule
		clients float64
		fast    bool // the fast answer weighs FastAnswerWeight
	}{
		{"one of many", 0, ManyClients, true},
		{"one of 300", 0, 300, true},
		{"a large share", 0, ManyClients - 1, false},
		{"no weight given", 0, 0, false},
		{"rule off", RuleFastAnswer, 300, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := newTest(t, nil)
			tr.SetOff(c.off)
			if c.clients > 0 {
				tr.SetClients(c.clients)
			}
			h := tr.Host("a")
			h.Observe(tr.Now(), 10*time.Millisecond, Success)
			h.Observe(tr.Now(), 2*time.Millisecond, Success) // below R_s = 10 ms
			w := alpha
			if c.fast {
				w = FastAnswerWeight
			}
			r := 10e6 + w*(2e6-10e6)
			assert.InDelta(t, r, float64(h.Snapshot().ResponseTime), 1)
			h.Observe(tr.Now(), 11*time.Millisecond, Success) // above R_s (below its cap): alpha
			assert.InDelta(t, r+alpha*(11e6-r), float64(h.Snapshot().ResponseTime), 1)
		})
	}
}
