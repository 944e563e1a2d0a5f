package speculative

import (
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
)

func TestDelayRefreshedFromPick(t *testing.T) {
	clk := newFakeClock()
	src := &fakeSource{}
	src.set(10*time.Millisecond, true)
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk))
	require.NoError(t, err)
	p := h.Wrap(newFakePolicy(newHost("127.0.0.1")))
	src.set(40*time.Millisecond, true)
	clk.Advance(tailroute.DefaultRefreshInterval)
	p.Pick((&gocql.Query{}).Idempotent(true))
	assert.Equal(t, 40*time.Millisecond, h.Delay())
}

func TestOptionErrorsNameFieldValueRange(t *testing.T) {
	cases := []struct {
		opt  tailroute.Option
		want []string
	}{
		{tailroute.WithQuantile(1), []string{"WithQuantile: Quantile = ", "1", "(0, 1)"}},
		{tailroute.WithQuantile(-0.5), []string{"WithQuantile: Quantile = ", "-0.5"}},
		{tailroute.WithDelayBounds(0, time.Second), []string{"WithDelayBounds: MinDelay = ", "0s", "1µs..1h"}},
		{tailroute.WithDelayBounds(time.Second, time.Millisecond), []string{"WithDelayBounds: MaxDelay = ", "1ms", "MinDelay (1s)..1h"}},
		{tailroute.WithRefreshInterval(0), []string{"WithRefreshInterval: RefreshInterval = ", "0s", "1ms..1h"}},
		{tailroute.WithBudget(1.5, time.Second), []string{"WithBudget: BudgetFraction = ", "1.5", "[0, 1]"}},
		{tailroute.WithBudget(0.05, time.Millisecond), []string{"WithBudget: BudgetWindow = ", "1ms", "20ms..24h"}},
		{tailroute.WithErrorHoldoff(-time.Second), []string{"WithErrorHoldoff: ErrorHoldoff = ", "-1s", "0..1h"}},
		{tailroute.WithBurstCap(5*time.Millisecond, 1, 2), []string{"WithBurstCap: BurstHorizon = ", "5ms", "0 (off) or 10ms..1min"}},
		{tailroute.WithBurstCap(time.Second, 0.5, 2), []string{"WithBurstCap: BurstFactor = ", "0.5", "1..100"}},
		{tailroute.WithBurstCap(time.Second, 1, -1), []string{"WithBurstCap: BurstFloor = ", "-1", "0..1000000"}},
		{tailroute.WithSource(nil), []string{"WithSource: Source = ", "nil"}},
		{tailroute.WithClock(nil), []string{"WithClock: Clock = ", "nil"}},
		{nil, []string{"option 0 = nil"}},
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

func TestEveryBadOptionReported(t *testing.T) {
	_, err := New(tailroute.WithQuantile(2), tailroute.WithSource(src0{}), tailroute.WithBudget(0.05, time.Millisecond))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithQuantile: Quantile = 2, allowed (0, 1)")
	assert.Contains(t, err.Error(), "WithBudget: BudgetWindow = 1ms, allowed 20ms..24h")
}

type src0 struct{}

func (src0) LatencyQuantile(float64) (time.Duration, bool) { return 0, false }
