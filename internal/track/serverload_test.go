package track

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/tracker"
)

func TestServerLoadWeightFadesWithAge(t *testing.T) {
	const fresh = 100 * time.Millisecond
	assert.Equal(t, 1.0, ServerLoadWeight(0, fresh))
	assert.Equal(t, 1.0, ServerLoadWeight(fresh, fresh))
	assert.InDelta(t, math.Exp(-1), ServerLoadWeight(2*fresh, fresh), 1e-9)
	assert.InDelta(t, math.Exp(-2.9), ServerLoadWeight(39*fresh/10, fresh), 1e-9)
	assert.Zero(t, ServerLoadWeight(4*fresh, fresh))
	assert.Zero(t, ServerLoadWeight(time.Hour, fresh))
	assert.Zero(t, ServerLoadWeight(0, 0))
}

// A stale sample fades into the client's own estimates: q_s toward 0 and
// 1/mu_s toward R_s, and is gone after 4*fresh.
func TestStaleServerLoadFadesIntoClientEstimates(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	h.Observe(tr.Now(), 2*time.Millisecond, Success) // R_s = 2ms
	const fresh = 100 * time.Millisecond
	clk.Advance(fresh) // not heard from for fresh: the client does not measure it
	h.ServerLoad(clk.Now(), 12, 8*time.Millisecond, fresh, fresh)

	v := h.View(clk.Now())
	assert.Equal(t, 1.0, v.ServerLoadWeight)
	assert.Equal(t, 12.0, v.QueueSize)
	assert.InDelta(t, float64(8*time.Millisecond), v.ServiceTime, 1)

	clk.Advance(2 * fresh)
	v = h.View(clk.Now())
	w := math.Exp(-1)
	assert.InDelta(t, w, v.ServerLoadWeight, 1e-9)
	assert.Equal(t, 2*fresh, v.ServerLoadAge)
	assert.InDelta(t, 12*w, v.QueueSize, 1e-9)
	assert.InDelta(t, float64(2*time.Millisecond)+w*float64(6*time.Millisecond), v.ServiceTime, 1)

	clk.Advance(2 * fresh)
	v = h.View(clk.Now())
	assert.Zero(t, v.ServerLoadWeight)
	assert.Zero(t, v.QueueSize)
	assert.Equal(t, v.ResponseTime, v.ServiceTime, "a dropped sample leaves the client-side estimate 1/mu_s = R_s")

	// A fresh sample counts again; one without a service time drops the
	// previous estimate (it may be of another load or speed).
	h.ServerLoad(clk.Now(), 3, 0, fresh, fresh)
	v = h.View(clk.Now())
	assert.Equal(t, 3.0, v.QueueSize)
	assert.Equal(t, v.ResponseTime, v.ServiceTime)
	assert.Zero(t, v.ServerServiceTime)
	s := h.Snapshot()
	assert.True(t, s.HasServerLoad)
	assert.Equal(t, 3.0, s.ServerQueue)

	// Payload feedback takes precedence; Reset forgets the sample.
	h.Feedback(1, time.Millisecond)
	v = h.View(clk.Now())
	assert.True(t, v.HasFeedback)
	assert.Zero(t, v.ServerLoadWeight)
	h.Reset()
	assert.False(t, h.Snapshot().HasServerLoad)
	assert.Zero(t, h.View(clk.Now()).ServerLoadWeight)
}

// An idle host whose R_s was forgotten toward the other hosts' mean still
// scores with at least its polled service time.
func TestServerLoadFloorsResponseTime(t *testing.T) {
	tr, clk := newTest(t, nil)
	fast, slow := tr.Host("fast"), tr.Host("slow")
	fast.Observe(tr.Now(), 4*time.Millisecond, Success)
	slow.Observe(tr.Now(), 5*time.Millisecond, Success) // measured before it slowed down
	clk.Advance(time.Second)
	fast.Observe(tr.Now(), 4*time.Millisecond, Success)
	slow.ServerLoad(clk.Now(), 0, 20*time.Millisecond, time.Second, time.Second)
	v := slow.View(clk.Now())
	assert.InDelta(t, float64(20*time.Millisecond), v.ResponseTime, 1)
	assert.InDelta(t, float64(20*time.Millisecond), v.ServiceTime, 1)
	clk.Advance(3 * time.Second) // idle: R_s forgotten toward 4ms
	slow.ServerLoad(clk.Now(), 0, 20*time.Millisecond, time.Second, time.Second)
	v = slow.View(clk.Now())
	assert.InDelta(t, float64(20*time.Millisecond), v.ResponseTime, 1)
	// A service time below R_s changes nothing: 1/mu_s stays R_s.
	fast.ServerLoad(clk.Now(), 0, 2*time.Millisecond, time.Second, time.Second)
	before := fast.View(clk.Now() - 1)
	vf := fast.View(clk.Now())
	assert.Equal(t, vf.ResponseTime, vf.ServiceTime)
	assert.InDelta(t, before.ResponseTime, vf.ResponseTime, float64(time.Microsecond))
}

// Once the client measures the host after the sample, its own os_s takes
// over from the polled queue; the polled service time still floors R_s and
// 1/mu_s (the mean over every client's requests, where the client's own
// R_s of a host rests on its few samples).
func TestServerLoadQueueYieldsToFresherLatencies(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	h.Observe(tr.Now(), 4*time.Millisecond, Success)
	h.ServerLoad(clk.Now(), 6, 20*time.Millisecond, time.Second, time.Second)
	v := h.View(clk.Now())
	assert.Zero(t, v.QueueSize, "a response within fresh: the client measures the host")
	assert.Equal(t, 1.0, v.ServerLoadWeight, "the service time counts")
	assert.InDelta(t, float64(20*time.Millisecond), v.ServiceTime, 1, "polled 1/mu_s above R_s")
	assert.InDelta(t, float64(20*time.Millisecond), v.ResponseTime, 1, "R_s raised to it")
	clk.Advance(time.Second)
	h.ServerLoad(clk.Now(), 6, 20*time.Millisecond, time.Second, time.Second)
	v = h.View(clk.Now())
	assert.Equal(t, 1.0, v.ServerLoadWeight)
	assert.Equal(t, 6.0, v.QueueSize, "idle since fresh: the polled queue counts")
	h.Observe(tr.Now(), 4*time.Millisecond, Success)
	v = h.View(clk.Now())
	assert.Zero(t, v.QueueSize, "measured after the sample")
	assert.InDelta(t, float64(20*time.Millisecond), v.ResponseTime, 1, "still floored by the polled service time")
	assert.Equal(t, v.ResponseTime, v.ServiceTime)
	clk.Advance(5 * time.Second) // the sample is dropped (4*fresh): R_s is the client's own again
	v = h.View(clk.Now())
	assert.Zero(t, v.ServerLoadWeight)
	assert.Less(t, v.ResponseTime, float64(20*time.Millisecond))
	h.ServerLoad(clk.Now(), 2, 20*time.Millisecond, time.Second, time.Second) // the next poll after a silence counts again
	assert.Equal(t, 2.0, h.View(clk.Now()).QueueSize)
	h.Begin(tr.Now()) // a request outstanding: the client is measuring it
	assert.Zero(t, h.View(clk.Now()).QueueSize)
}

func TestServerLoadIgnoresNegativeQueue(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	h.ServerLoad(clk.Now(), -5, -time.Millisecond, time.Second, time.Second)
	v := h.View(clk.Now())
	assert.Zero(t, v.QueueSize)
	assert.Equal(t, v.ResponseTime, v.ServiceTime)
}

// W_s (ServerWorkers) is configuration, not load: View reports it whatever
// the sample's age or the client's own measurements; values outside
// 1..MaxServerWorkers keep the previous one; Reset forgets it.
func TestServerWorkers(t *testing.T) {
	tr, clk := newTest(t, nil)
	h := tr.Host("a")
	assert.Zero(t, h.View(clk.Now()).Workers, "unknown before a poll")
	h.ServerWorkers(4)
	assert.Equal(t, 4.0, h.View(clk.Now()).Workers)
	for _, bad := range []int64{0, -1, -1 << 40, tracker.MaxServerWorkers + 1, 1 << 62} {
		h.ServerWorkers(bad)
		assert.Equal(t, 4.0, h.View(clk.Now()).Workers, "%d ignored", bad)
	}
	h.ServerWorkers(tracker.MaxServerWorkers)
	assert.Equal(t, float64(tracker.MaxServerWorkers), h.View(clk.Now()).Workers)
	h.ServerWorkers(32)
	h.Begin(clk.Now())
	h.Observe(clk.Now(), 4*time.Millisecond, Success)
	clk.Advance(time.Hour)
	assert.Equal(t, 32.0, h.View(clk.Now()).Workers, "measured host, old sample: still known")
	assert.EqualValues(t, 32, h.Snapshot().ServerWorkers)
	h.Reset()
	assert.Zero(t, h.View(clk.Now()).Workers)
}
