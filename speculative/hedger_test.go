package speculative

import (
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDelayFollowsQuantileClamped(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(20*time.Millisecond, true)
	h, err := New(WithSource(src), WithClock(clk.Now), WithQuantile(0.9),
		WithDelayBounds(5*time.Millisecond, 100*time.Millisecond))
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
	h, err := New(WithSource(src), WithClock(clk.Now), WithRefreshInterval(time.Second))
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

func TestDelayRefreshedFromPick(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(10*time.Millisecond, true)
	h, err := New(WithSource(src), WithClock(clk.Now))
	require.NoError(t, err)
	p := h.Wrap(newFakePolicy(newHost("127.0.0.1")))
	src.set(40*time.Millisecond, true)
	clk.Advance(DefaultRefreshInterval)
	p.Pick((&gocql.Query{}).Idempotent(true))
	assert.Equal(t, 40*time.Millisecond, h.Delay())
}

func TestDefaults(t *testing.T) {
	h, err := New()
	require.NoError(t, err)
	assert.NotNil(t, h.Recorder(), "built-in recorder when no source is given")
	assert.Equal(t, DefaultMaxDelay, h.Delay(), "no samples yet: max delay")
	assert.Equal(t, 0.95, h.cfg.quantile)
	assert.Equal(t, 0.05, h.cfg.fraction)
	assert.Equal(t, 10*time.Second, h.cfg.window)
	assert.Equal(t, time.Millisecond, h.cfg.minDelay)
	h2, err := New(WithSource(&fakeSource{}))
	require.NoError(t, err)
	assert.Nil(t, h2.Recorder())
}

func TestOptionErrorsNameFieldValueRange(t *testing.T) {
	cases := []struct {
		opt  Option
		want []string
	}{
		{WithQuantile(1), []string{"Quantile", "1", "(0, 1)"}},
		{WithQuantile(-0.5), []string{"Quantile", "-0.5"}},
		{WithDelayBounds(0, time.Second), []string{"MinDelay", "0s", "1µs..1h"}},
		{WithDelayBounds(time.Second, time.Millisecond), []string{"MaxDelay", "1ms", "MinDelay (1s)..1h"}},
		{WithRefreshInterval(0), []string{"RefreshInterval", "0s", "1ms..1h"}},
		{WithBudget(1.5, time.Second), []string{"BudgetFraction", "1.5", "[0, 1]"}},
		{WithBudget(0.05, time.Millisecond), []string{"BudgetWindow", "1ms", "20ms..24h"}},
		{WithErrorHoldoff(-time.Second), []string{"ErrorHoldoff", "-1s", "0..1h"}},
		{WithBurstCap(5*time.Millisecond, 1, 2), []string{"BurstHorizon", "5ms", "0 (off) or 10ms..1min"}},
		{WithBurstCap(time.Second, 0.5, 2), []string{"BurstFactor", "0.5", "1..100"}},
		{WithBurstCap(time.Second, 1, -1), []string{"BurstFloor", "-1", "0..1000000"}},
		{WithSource(nil), []string{"Source", "nil"}},
		{WithClock(nil), []string{"Clock", "nil"}},
		{nil, []string{"nil Option"}},
	}
	for _, c := range cases {
		_, err := New(c.opt)
		require.Error(t, err)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w)
		}
	}
	_, err := NewRecorder(RecorderConfig{Window: time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Window = 1ms, allowed 4ms..24h")
	_, err = NewRecorder(RecorderConfig{MinSamples: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MinSamples = -1")
}

func TestBudgetPressureRaisesQuantileAndRelaxes(t *testing.T) {
	clk := newFakeClock()
	// a source whose q-quantile is q x 100ms, so the delay shows the quantile
	src := &fakeSource{fn: func(q float64) time.Duration { return time.Duration(q * float64(100*time.Millisecond)) }}
	h, err := New(WithSource(src), WithClock(clk.Now), WithDelayBounds(time.Millisecond, time.Second))
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
	clk.Advance(DefaultRefreshInterval)
	h.maybeRefresh(h.nowNs())
	assert.Equal(t, q, h.Quantile())
}
