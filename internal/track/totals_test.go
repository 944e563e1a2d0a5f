package track

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestTotalsSurviveReset: the cumulative counts (Prometheus counters) count
// every outcome and are not cleared by Reset, unlike the rolling state.
func TestTotalsSurviveReset(t *testing.T) {
	tr, _ := newTest(t, nil)
	h := tr.Host("a")
	h.Observe(tr.Now(), 2*time.Millisecond, Success)
	h.Observe(tr.Now(), 3*time.Millisecond, Failure)
	h.Observe(tr.Now(), 4*time.Millisecond, Lost)
	h.Observe(tr.Now(), 5*time.Millisecond, Cancelled)
	h.Reset()
	h.Observe(tr.Now(), -time.Millisecond, Success) // clamped to 0
	s := h.Snapshot()
	assert.EqualValues(t, 1, s.Samples, "rolling state was reset")
	assert.EqualValues(t, 5, s.TotalAttempts)
	assert.EqualValues(t, 4, s.TotalMeasured, "cancelled attempts have no latency")
	assert.Equal(t, 9*time.Millisecond, s.TotalLatency)
	assert.EqualValues(t, 2, s.TotalErrors, "failure and lost")
	assert.EqualValues(t, 2, h.Answers(), "successes only, across the reset")
}
