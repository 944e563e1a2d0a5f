package route

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/tracker"
)

// w_eff = min(w, max(1, Qbar)) while the polls are recent; w without
// samples, with old samples and for w <= 1.
func TestQueueMeanWeight(t *testing.T) {
	const maxAge = time.Second
	var m queueMean
	now := 10 * time.Second
	assert.Equal(t, 4.0, m.weight(now, 4, maxAge), "no sample: w")
	m.add(now, 0.3)
	assert.Equal(t, 1.0, m.weight(now, 4, maxAge), "queues shorter than one request: 1")
	assert.Equal(t, 0.5, m.weight(now, 0.5, maxAge), "w <= 1 is kept")
	for i := 0; i < 200; i++ {
		m.add(now, 2.5)
	}
	assert.InDelta(t, 2.5, m.weight(now, 4, maxAge), 1e-3, "smoothed toward 2.5")
	assert.Equal(t, 4.0, m.weight(now+maxAge+1, 4, maxAge), "samples too old: w")
	for i := 0; i < 200; i++ {
		m.add(now, 10)
	}
	assert.Equal(t, 4.0, m.weight(now, 4, maxAge), "queues longer than w: w, the paper's")

	var bad queueMean
	bad.add(now, -3)
	bad.add(now, math.NaN())
	assert.Equal(t, 1.0, bad.weight(now, 4, maxAge), "negative and NaN queues count as 0")
}

type testHost struct{ id string }

func (h *testHost) HostID() string                { return h.id }
func (h *testHost) ConnectAddressAndPort() string { return h.id + ":9042" }
func (h *testHost) DataCenter() string            { return "dc1" }
func (h *testHost) Rack() string                  { return "r1" }
func (h *testHost) Tokens() []string              { return nil }
func (h *testHost) IsUp() bool                    { return true }

// With w = 4 (four clients) and polled W_s = 4, a fast replica (R_s = 5 ms)
// with one request in flight scores 8 service times under the paper's
// w, behind an idle replica 4x slower; once the polls show queues of about
// one request, w_eff = 1 and it ranks first again. Payload feedback keeps
// the configured w.
func TestScoreWeightFollowsPolledQueues(t *testing.T) {
	r, err := New[*testHost, any](Hooks{}, WithConcurrencyWeight(4), WithServerLoad(DefaultServerLoadInterval))
	if !assert.NoError(t, err) {
		return
	}
	const ms = 1e6
	now := 10 * time.Second
	fast := tracker.View{InFlight: 1, ResponseTime: 5 * ms, ServiceTime: 5 * ms, Workers: 4}
	slow := tracker.View{ResponseTime: 20 * ms, ServiceTime: 20 * ms, Workers: 4}
	assert.Greater(t, r.score(fast, now), r.score(slow, now), "no poll yet: w = 4")
	r.queues.add(now, 1)
	assert.Less(t, r.score(fast, now), r.score(slow, now), "queues of one request: w_eff = 1")
	fb := fast
	fb.HasFeedback = true
	assert.Greater(t, r.score(fb, now), r.score(slow, now), "payload feedback: the configured w")
	assert.Greater(t, r.score(fast, now+2*time.Second), r.score(slow, now), "polls 2 s old: w = 4 again")
}
