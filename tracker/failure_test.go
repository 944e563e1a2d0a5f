package tracker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestFailureLatencyOnlyRaises: an error's latency is a lower bound of the
// host's response time. Fast errors (Overloaded/Unavailable answered at
// once: Failure; a refused connection: Lost) leave R_s and the histogram
// alone; slow ones (a read timeout after service: Failure; a client
// timeout: Lost) raise R_s.
func TestFailureLatencyOnlyRaises(t *testing.T) {
	for _, o := range []Outcome{Failure, Lost} {
		t.Run(o.String(), func(t *testing.T) {
			tr, _ := newTest(t, nil)
			h := tr.Host("a")
			for i := 0; i < 20; i++ {
				h.Observe(tr.Now(), 5*time.Millisecond, Success)
			}
			before := h.Snapshot()
			for i := 0; i < 50; i++ {
				h.Observe(tr.Now(), 50*time.Microsecond, o) // fast error
			}
			s := h.Snapshot()
			assert.Equal(t, before.ResponseTime, s.ResponseTime, "fast errors do not make the host look fast")
			assert.Equal(t, before.P50, s.P50, "fast errors stay out of the latency histogram")
			assert.EqualValues(t, 70, s.Samples, "every attempt is counted")
			assert.Less(t, s.SuccessRate, 0.5, "but they count against health")

			h.Observe(tr.Now(), 200*time.Millisecond, o) // slow error: a timeout
			assert.Greater(t, h.Snapshot().ResponseTime, 20*time.Millisecond, "a slow error raises R_s")
		})
	}
}

// TestFastFailureWithoutSamplesIsNoEstimate: a host whose first answers are
// instant errors gets no response-time estimate from them (it keeps the
// cluster prior) instead of a near-zero one that would rank it first.
func TestFastFailureWithoutSamplesIsNoEstimate(t *testing.T) {
	tr, _ := newTest(t, nil)
	tr.Host("ok").Observe(tr.Now(), 4*time.Millisecond, Success)
	h := tr.Host("bad")
	for i := 0; i < 10; i++ {
		h.Observe(tr.Now(), 20*time.Microsecond, Failure)
	}
	v := h.View(tr.cfg.Clock.Now())
	assert.False(t, v.HasSamples)
	assert.InDelta(t, float64(4*time.Millisecond), v.ResponseTime, float64(time.Microsecond), "prior: the other hosts' mean")
	h.Observe(tr.Now(), 30*time.Millisecond, Failure) // slower than the prior: an estimate
	assert.True(t, h.View(tr.cfg.Clock.Now()).HasSamples)
}

// TestSuccessRateRecovers: a host that failed every request for the whole
// window is back above 0.95 three buckets (1.5s at the default width) after
// it stops failing at the same traffic, and a host that got no traffic
// since it failed keeps its failing rate (sticky bucket) instead of
// counting as a clean slate.
func TestSuccessRateRecovers(t *testing.T) {
	tr, clk := newTest(t, nil)
	bucket := tr.Config().HealthBucket
	assert.Equal(t, 500*time.Millisecond, bucket)
	h := tr.Host("a")
	idle := tr.Host("b")
	for b := 0; b < 6; b++ {
		for i := 0; i < 100; i++ {
			h.Observe(tr.Now(), time.Millisecond, Failure)
			idle.Observe(tr.Now(), time.Millisecond, Failure)
		}
		clk.Advance(bucket)
	}
	assert.Less(t, h.Snapshot().SuccessRate, 0.01)
	rates := []float64{}
	for b := 0; b < 3; b++ {
		for i := 0; i < 100; i++ {
			h.Observe(tr.Now(), time.Millisecond, Success)
		}
		rates = append(rates, h.Snapshot().SuccessRate)
		clk.Advance(bucket)
	}
	// weights 1, 1/3, 1/9...: 1/(1+1/3+1/9+1/27+...) = 0.67, then 0.89, 0.96
	assert.Greater(t, rates[0], 0.6, "one bucket of successes outweighs the older failures: %v", rates)
	assert.Greater(t, rates[1], 0.85, "%v", rates)
	assert.Greater(t, rates[2], 0.95, "three buckets: healthy again: %v", rates)
	clk.Advance(20 * bucket)
	sr := idle.Snapshot().SuccessRate
	assert.Less(t, sr, 0.01, "no traffic since failing: the sticky bucket remembers")
	assert.Greater(t, sr, 0.0, "floored above 0 (the cascade's recovery chance)")
}
