package track

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
			assert.Greater(t, h.Snapshot().ResponseTime, before.ResponseTime, "a slow error raises R_s")
			for i := 0; i < 7; i++ {
				h.Observe(tr.Now(), 200*time.Millisecond, o)
			}
			assert.Greater(t, h.Snapshot().ResponseTime, 20*time.Millisecond, "slow errors raise R_s, each by at most Config.SampleCap")
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
// window is healthy at its first success (streak rule), a host that fails
// half of its requests without ever failing three in a row keeps the
// cascade's weighted average and recovers bucket by bucket, and a host that
// got no traffic since it failed keeps its failing rate (sticky bucket)
// instead of counting as a clean slate.
func TestSuccessRateRecovers(t *testing.T) {
	tr, clk := newTest(t, nil)
	bucket := tr.Config().HealthBucket
	assert.Equal(t, 500*time.Millisecond, bucket)
	h := tr.Host("a")
	idle := tr.Host("b")
	half := tr.Host("c")
	for b := 0; b < 6; b++ {
		for i := 0; i < 100; i++ {
			h.Observe(tr.Now(), time.Millisecond, Failure)
			idle.Observe(tr.Now(), time.Millisecond, Failure)
			if i%2 == 0 {
				half.Observe(tr.Now(), time.Millisecond, Failure)
			} else {
				half.Observe(tr.Now(), time.Millisecond, Success)
			}
		}
		clk.Advance(bucket)
	}
	assert.Less(t, h.Snapshot().SuccessRate, 0.01)
	assert.InDelta(t, 0.5, half.Snapshot().SuccessRate, 0.01)
	h.Observe(tr.Now(), time.Millisecond, Success)
	assert.Equal(t, 1.0, h.Snapshot().SuccessRate, "the first success after a failure streak: healthy again")
	rates := []float64{}
	for b := 0; b < 3; b++ {
		for i := 0; i < 100; i++ {
			half.Observe(tr.Now(), time.Millisecond, Success)
		}
		rates = append(rates, half.Snapshot().SuccessRate)
		clk.Advance(bucket)
	}
	// weights 1, 1/3, 1/9...: (1+0.5/3+0.5/9+...)/(1+1/3+1/9+...) = 0.83, then 0.94, 0.98
	assert.InDelta(t, 0.83, rates[0], 0.01, "one bucket of successes outweighs the older failures: %v", rates)
	assert.Greater(t, rates[2], 0.95, "three buckets: healthy again: %v", rates)
	clk.Advance(20 * bucket)
	sr := idle.Snapshot().SuccessRate
	assert.Less(t, sr, 0.01, "no traffic since failing: the sticky bucket remembers")
	assert.Greater(t, sr, 0.0, "floored above 0 (the cascade's recovery chance)")
}

// TestHealthStreakRule: three failures in a row make a host that was
// healthy a moment ago failing now, whatever its earlier successes; fewer
// only lower its rate; the next success makes it healthy again.
func TestHealthStreakRule(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	for i := 0; i < 200; i++ {
		h.Observe(tr.Now(), time.Millisecond, Success)
	}
	clk.Advance(tr.Config().HealthBucket)
	h.Observe(tr.Now(), time.Millisecond, Failure)
	h.Observe(tr.Now(), time.Millisecond, Failure)
	assert.Greater(t, h.Snapshot().SuccessRate, 0.9, "two failures after 200 successes")
	h.Observe(tr.Now(), time.Millisecond, Failure)
	s := h.Snapshot()
	assert.Equal(t, 0.0, s.SuccessRate, "the third in a row: failing now")
	assert.EqualValues(t, 3, s.Responses, "the window restarted with the streak")
	for i := 0; i < 10; i++ {
		h.Observe(tr.Now(), time.Millisecond, Failure)
	}
	assert.Equal(t, 0.0, h.Snapshot().SuccessRate)
	h.Observe(tr.Now(), time.Millisecond, Success)
	s = h.Snapshot()
	assert.Equal(t, 1.0, s.SuccessRate, "answers again: healthy")
	assert.EqualValues(t, 1, s.Responses)
	h.Observe(tr.Now(), time.Millisecond, Failure)
	h.Observe(tr.Now(), time.Millisecond, Success)
	assert.InDelta(t, 2.0/3, h.Snapshot().SuccessRate, 1e-9, "no streak: plain counting")
}

// TestClaimProbe: one claim per interval, counted from the last claim or
// the last attempt sent to the idle host, and only one of two callers at
// the same instant wins.
func TestClaimProbe(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	now := clk.Now()
	assert.False(t, h.ClaimProbe(now, time.Second), "just added: its creation counts as the last attempt")
	now = clk.Advance(time.Second)
	assert.True(t, h.ClaimProbe(now, time.Second))
	assert.False(t, h.ClaimProbe(now, time.Second), "the same instant: already claimed")
	now = clk.Advance(999 * time.Millisecond)
	assert.False(t, h.ClaimProbe(now, time.Second))
	now = clk.Advance(time.Millisecond)
	h.End(h.Begin(tr.Now())) // an ordinary attempt to the idle host
	assert.False(t, h.ClaimProbe(now, time.Second), "an attempt just went out")
	now = clk.Advance(time.Second)
	wins := make(chan bool, 8)
	for i := 0; i < 8; i++ {
		go func() { wins <- h.ClaimProbe(now, time.Second) }()
	}
	n := 0
	for i := 0; i < 8; i++ {
		if <-wins {
			n++
		}
	}
	assert.Equal(t, 1, n, "concurrent callers: one probe")
}
