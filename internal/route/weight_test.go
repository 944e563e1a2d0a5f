package route

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
)

// w_eff = min(w, max(1, Qmax)) while the polls are recent, Qmax the
// longest of the hosts' smoothed queues, which start at w, rise half way
// to a longer queue and fall a fifth of the way to a shorter one per poll;
// w without samples, with old samples and for w <= 1; a host no longer
// polled stops counting.
func TestQueueMeanWeight(t *testing.T) {
	const maxAge = time.Second
	var m queueMean
	now := 10 * time.Second
	assert.Equal(t, 4.0, m.weight(now, 4), "no sample: w")
	m.add("a", now, 0, 4, maxAge)
	assert.InDelta(t, 3.2, m.weight(now, 4), 1e-9, "from w, a fifth of the way down")
	m.add("a", now, 0, 4, maxAge)
	assert.InDelta(t, 2.56, m.weight(now, 4), 1e-9)
	m.add("a", now, 3.56, 4, maxAge)
	assert.InDelta(t, 3.06, m.weight(now, 4), 1e-9, "half way up at once")
	for i := 0; i < 30; i++ {
		m.add("a", now, 0.3, 4, maxAge)
	}
	assert.InDelta(t, 1.0, m.weight(now, 4), 1e-3, "queues shorter than one request: 1")
	assert.Equal(t, 0.5, m.weight(now, 0.5), "w <= 1 is kept")
	for i := 0; i < 30; i++ {
		m.add("b", now, 2.5, 4, maxAge)
	}
	assert.InDelta(t, 2.5, m.weight(now, 4), 0.01, "the longest queue counts")
	m.forget("b")
	m.add("a", now, 0.3, 4, maxAge)
	assert.InDelta(t, 1.0, m.weight(now, 4), 1e-3, "b no longer polled")
	m.add("b", now, 2.5, 4, maxAge)
	m.add("a", now+2*maxAge, 0.3, 4, maxAge)
	assert.InDelta(t, 1.0, m.weight(now+2*maxAge, 4), 1e-3, "b's samples too old")
	assert.Equal(t, 4.0, m.weight(now+4*maxAge, 4), "no recent sample: w")
	m.add("c", now, 10, 4, maxAge)
	assert.Equal(t, 4.0, m.weight(now, 4), "queues longer than w: w, the paper's")

	var bad queueMean
	for i := 0; i < 30; i++ {
		bad.add("a", now, -3, 4, maxAge)
		bad.add("a", now, math.NaN(), 4, maxAge)
	}
	assert.Equal(t, 1.0, bad.weight(now, 4), "negative and NaN queues count as 0")

	// Each host's queue counts for its own max age (6 of its poll
	// intervals), and Qmax for the latest sample's.
	var per queueMean
	per.add("slowpoll", now, 0, 4, 6*time.Second)
	per.add("fastpoll", now+time.Second, 10, 4, 600*time.Millisecond)
	assert.InDelta(t, 7.0, per.max(), 1e-9, "fastpoll's queue, half way up from 4 to 10")
	per.add("slowpoll", now+2*time.Second, 0, 4, 6*time.Second)
	assert.InDelta(t, 2.56, per.max(), 1e-9, "fastpoll's sample, 1 s old at a 100 ms interval, no longer counts")
	assert.InDelta(t, 2.56, per.weight(now+7*time.Second, 4), 1e-9, "slowpoll's, 5 s old at a 1 s interval, still does")
	assert.Equal(t, 4.0, per.weight(now+8*time.Second+1, 4), "the latest sample is older than its max age: w")
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
// the configured w. (The tail term is off: it has a test of its own.)
func TestScoreWeightFollowsPolledQueues(t *testing.T) {
	r, err := New[*testHost, any](Hooks{}, tailroute.WithConcurrencyWeight(4), tailroute.WithTailTerm(0)) // polled by default
	if !assert.NoError(t, err) {
		return
	}
	const ms = 1e6
	now := 10 * time.Second
	fast := track.View{InFlight: 1, ResponseTime: 5 * ms, ServiceTime: 5 * ms, Workers: 4}
	slow := track.View{ResponseTime: 20 * ms, ServiceTime: 20 * ms, Workers: 4}
	assert.Greater(t, r.score(&fast, now), r.score(&slow, now), "no poll yet: w = 4")
	for i := 0; i < 30; i++ {
		r.queues.add("h", now, 1, 4, time.Second)
	}
	assert.Less(t, r.score(&fast, now), r.score(&slow, now), "polls show queues of one request: w_eff = 1")
	fb := fast
	fb.HasFeedback = true
	assert.Greater(t, r.score(&fb, now), r.score(&slow, now), "payload feedback: the configured w")
	assert.Greater(t, r.score(&fast, now+2*time.Second), r.score(&slow, now), "polls 2 s old: w = 4 again")

	paused := fast
	paused.Silence = time.Duration(50 * ms) // 10 x R_s without an answer
	weffPaused := 4 - (4-1.0)*5/50.0        // and W_s = max(1, 4*5/50)
	assert.InDelta(t, core.C3Score(5*ms, 5*ms, 0, 1, weffPaused, 1), r.score(&paused, now), 1e6,
		"a silent host keeps R_s/Silence of the reduction")
	assert.Greater(t, r.score(&paused, now), r.score(&slow, now), "paused: behind the idle slow host again")
	within := fast
	within.Silence = time.Duration(2 * ms)
	assert.Equal(t, r.score(&fast, now), r.score(&within, now), "silent less than R_s/2 (w_eff = 1): the full reduction, W_s = 4")
	half := fast
	half.Silence = time.Duration(4 * ms)
	assert.InDelta(t, core.C3Score(5*ms, 5*ms, 0, 1, 1, 4*2.5/4), r.score(&half, now), 1,
		"silent 4ms, over R_s/2 = 2.5ms: W_s scaled by 2.5/4, w_eff still 1")
}

// The tail term k/mu_s (WithTailTerm, default DefaultTailTerm) puts a fast
// replica with a request in flight ahead of an idle one five times slower,
// with or without a server signal, and two in flight still behind it.
func TestTailTerm(t *testing.T) {
	const ms = 1e6
	now := 10 * time.Second
	for _, signal := range []struct {
		name string
		opts []tailroute.Option
	}{
		{"no signal", []tailroute.Option{tailroute.WithServerLoad(false)}},
		{"polled", nil},
	} {
		plain, err := New[*testHost, any](Hooks{}, append([]tailroute.Option{tailroute.WithTailTerm(0)}, signal.opts...)...)
		if !assert.NoError(t, err) {
			return
		}
		tail, err := New[*testHost, any](Hooks{}, signal.opts...)
		if !assert.NoError(t, err) {
			return
		}
		assert.Equal(t, float64(tailroute.DefaultTailTerm), tail.Config().TailTerm, signal.name)
		assert.Equal(t, 0.0, plain.Config().TailTerm, signal.name)
		fast := track.View{InFlight: 1, ResponseTime: 5 * ms, ServiceTime: 5 * ms, Workers: 1}
		slow := track.View{ResponseTime: 25 * ms, ServiceTime: 25 * ms, Workers: 1}
		assert.InDelta(t, plain.score(&slow, now)+2*25*ms, tail.score(&slow, now), 1, "%s: Psi_s + 2/mu_s", signal.name)
		assert.Greater(t, plain.score(&fast, now), plain.score(&slow, now), "%s, k = 0: the idle slow replica first", signal.name)
		assert.Less(t, tail.score(&fast, now), tail.score(&slow, now), "%s, k = 2: the fast replica with one in flight first", signal.name)
		fast.InFlight = 2
		assert.Greater(t, tail.score(&fast, now), tail.score(&slow, now), "%s, k = 2: two in flight still lose to the idle one", signal.name)
	}
}

// w is measured as the hosts' completions over the client's own answers
// there: none before 20 own answers, about the number of equal clients
// after, at least 1, and old pairs fade with clientWindow.
func TestClientCountMeasuresClients(t *testing.T) {
	var c clientCount
	assert.Equal(t, 1.0, c.value())
	c.add(time.Second, 3000, 10)
	assert.Equal(t, 1.0, c.value(), "10 own answers: no estimate yet")
	c.add(time.Second, 3000, 10)
	assert.InDelta(t, 300, c.value(), 1e-9)
	c.add(time.Second+clientWindow*10, 40, 40) // the 300-client pairs have faded
	assert.InDelta(t, 1, c.value(), 0.01)
	c.add(time.Second+clientWindow*10, 10, 20) // more own answers than completions (counters of another stage): 1
	assert.Equal(t, 1.0, c.value())
	c.add(time.Second+clientWindow*10, -5, 1) // a counter reset: not a pair
	assert.Equal(t, 1.0, c.value())
}

// The default w is the measured one; WithConcurrencyWeight's is used as
// it is.
func TestWeightDefaultMeasured(t *testing.T) {
	r, _, _ := testRouter(t, 3)
	assert.Equal(t, 1.0, r.weight(), "nothing measured: 1")
	r.clients.add(time.Second, 500, 100)
	assert.InDelta(t, 5, r.weight(), 1e-9)
	r, _, _ = testRouter(t, 3, tailroute.WithConcurrencyWeight(2))
	r.clients.add(time.Second, 500, 100)
	assert.Equal(t, 2.0, r.weight())
}

// The tracker is given the w in force (for its many-clients rule): a
// configured one from the start; a measured one after the poll pairs that
// measure it, here many completions per own answer.
func TestWeightGivenToTracker(t *testing.T) {
	r, _, _ := testRouter(t, 3, tailroute.WithConcurrencyWeight(40))
	assert.Equal(t, 40.0, r.tr.Clients())
	busy := func(k int) ThreadPoolSample { return ThreadPoolSample{Active: 1, Completed: int64(k) * 5000} }
	r, _, run := pollCounter(t, 3, 10*time.Millisecond, busy, tailroute.WithPollBudget(0.5, 10*time.Millisecond, 100*time.Millisecond))
	assert.Equal(t, 1.0, r.tr.Clients(), "nothing measured: 1")
	run(200, 2)
	assert.Greater(t, r.weight(), float64(track.ManyClients))
	assert.Equal(t, r.weight(), r.tr.Clients())
}
