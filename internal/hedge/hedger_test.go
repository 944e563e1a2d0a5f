package hedge

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// newFakeClock returns the injectable clock of the tests.
func newFakeClock() *tracker.ManualClock { return tracker.NewManualClock(time.Hour) }

// fakeSource is a LatencySource returning a settable value.
type fakeSource struct {
	d     atomic.Int64
	ok    atomic.Bool
	lastQ atomic.Uint64 // math.Float64bits of the last q asked
	calls atomic.Int64
	fn    func(q float64) time.Duration // when set, the answer (always ok)
}

func (s *fakeSource) set(d time.Duration, ok bool) { s.d.Store(int64(d)); s.ok.Store(ok) }

func (s *fakeSource) LatencyQuantile(q float64) (time.Duration, bool) {
	s.calls.Add(1)
	s.lastQ.Store(uint64(q*1e6 + 0.5))
	if s.fn != nil {
		return s.fn(q), true
	}
	return time.Duration(s.d.Load()), s.ok.Load()
}

func TestDelayFollowsQuantileClamped(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(20*time.Millisecond, true)
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithQuantile(0.9),
		tailroute.WithDelayBounds(5*time.Millisecond, 100*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, 20*time.Millisecond, h.Delay())
	assert.Equal(t, uint64(900000), src.lastQ.Load(), "asks the source for the configured quantile")

	src.set(time.Millisecond, true)
	h.Refresh()
	assert.Equal(t, 5*time.Millisecond, h.Delay(), "clamped to min")

	src.set(3*time.Second, true)
	h.Refresh()
	assert.Equal(t, 100*time.Millisecond, h.Delay(), "clamped to max")

	src.set(0, false)
	h.Refresh()
	assert.Equal(t, 100*time.Millisecond, h.Delay(), "no estimate: max")
}

func TestDelayRefreshesOncePerInterval(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(10*time.Millisecond, true)
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithRefreshInterval(time.Second))
	require.NoError(t, err)
	require.Equal(t, 10*time.Millisecond, h.Delay())
	calls := src.calls.Load()

	src.set(30*time.Millisecond, true)
	clk.Advance(999 * time.Millisecond)
	h.maybeRefresh(h.nowNs())
	assert.Equal(t, 10*time.Millisecond, h.Delay(), "not due yet")
	assert.Equal(t, calls, src.calls.Load(), "source not consulted before the interval")

	clk.Advance(time.Millisecond)
	for i := 0; i < 5; i++ {
		h.maybeRefresh(h.nowNs())
	}
	assert.Equal(t, 30*time.Millisecond, h.Delay())
	assert.Equal(t, calls+1, src.calls.Load(), "one refresh per interval")
}

func TestDelayLooksAgainSoonWithoutEstimate(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithRefreshInterval(time.Second))
	require.NoError(t, err)
	require.Equal(t, tailroute.DefaultMaxDelay, h.Delay(), "no estimate: max")

	src.set(10*time.Millisecond, true)
	clk.Advance(estimateRetry)
	h.maybeRefresh(h.nowNs())
	assert.Equal(t, 10*time.Millisecond, h.Delay(), "the first estimate is taken %v later, not a refresh interval", estimateRetry)

	calls := src.calls.Load()
	src.set(30*time.Millisecond, true)
	clk.Advance(estimateRetry)
	h.maybeRefresh(h.nowNs())
	assert.Equal(t, 10*time.Millisecond, h.Delay(), "with an estimate, the refresh interval again")
	assert.Equal(t, calls, src.calls.Load())
}

func TestDefaults(t *testing.T) {
	h, err := New()
	require.NoError(t, err)
	assert.NotNil(t, h.Recorder(), "built-in recorder when no source is given")
	assert.Equal(t, tailroute.DefaultMaxDelay, h.Delay(), "no samples yet: max delay")
	assert.Equal(t, 0.95, h.cfg.Quantile)
	assert.Equal(t, 0.05, h.cfg.Fraction)
	assert.Equal(t, 10*time.Second, h.cfg.Window)
	assert.Equal(t, time.Millisecond, h.cfg.MinDelay)
	h2, err := New(tailroute.WithSource(&fakeSource{}))
	require.NoError(t, err)
	assert.Nil(t, h2.Recorder())
}

func TestBudgetPressureRaisesQuantileAndRelaxes(t *testing.T) {
	clk := newFakeClock()
	// a source whose q-quantile is q x 100ms, so the delay shows the quantile
	src := &fakeSource{fn: func(q float64) time.Duration { return time.Duration(q * float64(100*time.Millisecond)) }}
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithDelayBounds(time.Millisecond, time.Second))
	require.NoError(t, err)
	assert.Equal(t, 0.95, h.Quantile())
	assert.Equal(t, 95*time.Millisecond, h.Delay())

	step := func(execs, hedges uint64) {
		h.executions.Add(execs)
		h.hedges.Add(hedges)
		clk.Advance(time.Second)
		h.maybeRefresh(h.nowNs())
	}
	// ordinary hedging at 5% of requests uses the whole 5% budget: tighten
	// so it uses 70% of it (3.5%)
	step(1000, 50)
	assert.InDelta(t, 0.965, h.Quantile(), 1e-9)
	assert.InDelta(t, float64(96500*time.Microsecond), float64(h.Delay()), float64(time.Microsecond))
	step(1000, 50)
	assert.InDelta(t, 1-0.0245, h.Quantile(), 1e-9)

	// at or under the target: relax 1.25x per second, back to the configured p95
	step(1000, 20)
	assert.InDelta(t, 1-0.030625, h.Quantile(), 1e-9)
	for i := 0; i < 5; i++ {
		step(1000, 0)
	}
	assert.Equal(t, 0.95, h.Quantile())
	assert.Equal(t, 95*time.Millisecond, h.Delay())

	// too few requests: no adjustment
	step(10, 10)
	assert.Equal(t, 0.95, h.Quantile())

	// heavy pressure halves the exceedance per step, down to (1-q)/50
	for i := 0; i < 20; i++ {
		step(1000, 1000)
	}
	assert.InDelta(t, 1-0.05/50, h.Quantile(), 1e-9)
	assert.InDelta(t, 1-0.05/50, h.Stats().Quantile, 1e-9)

	// refreshes between control intervals do not adjust
	q := h.Quantile()
	h.executions.Add(1000)
	clk.Advance(tailroute.DefaultRefreshInterval)
	h.maybeRefresh(h.nowNs())
	assert.Equal(t, q, h.Quantile())
}
