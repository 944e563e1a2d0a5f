package hedge

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// TestRecorderFollowsTheHedgersClock: the built-in Recorder reads the clock
// given with WithClock, so its window slides with the Hedger's time.
func TestRecorderFollowsTheHedgersClock(t *testing.T) {
	clk := tracker.NewManualClock(time.Hour)
	h, err := New(tailroute.WithClock(clk))
	require.NoError(t, err)
	r := h.Recorder()
	require.NotNil(t, r)
	for i := 1; i <= 100; i++ {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	d, ok := r.LatencyQuantile(0.95)
	require.True(t, ok)
	assert.GreaterOrEqual(t, d, 95*time.Millisecond)
	assert.LessOrEqual(t, float64(d), 95e6*(1+1.0/16))
	clk.Advance(tailroute.DefaultBudgetWindow + 3*time.Second) // past 5/4 of the 10s window
	_, ok = r.LatencyQuantile(0.95)
	assert.False(t, ok, "every sample aged out")
}

func TestRecorderConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  RecorderConfig
		want string
	}{
		{RecorderConfig{Window: time.Millisecond}, "speculative: RecorderConfig.Window = 1ms, allowed 4ms..24h"},
		{RecorderConfig{Window: 25 * time.Hour}, "RecorderConfig.Window = 25h0m0s, allowed 4ms..24h"},
		{RecorderConfig{MinSamples: -1}, "RecorderConfig.MinSamples = -1, allowed 1..1073741824"},
	} {
		_, err := NewRecorder(c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
	var nilClock *tracker.ManualClock
	r, err := NewRecorder(RecorderConfig{Clock: nilClock})
	require.NoError(t, err, "a nil Clock is the default")
	r.Record(time.Millisecond)
}
