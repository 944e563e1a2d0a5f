package paperbase

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/internal/selector"
)

type fakeEnv struct {
	queue []int
	mean  []time.Duration
}

func (e *fakeEnv) Oracle(s int32) (int, time.Duration) { return e.queue[s], e.mean[s] }
func (e *fakeEnv) Servers() int                        { return len(e.queue) }

func cfg(servers, clients int) selector.SelectorConfig {
	return selector.SelectorConfig{
		Rand:    rand.New(rand.NewPCG(1, 2)),
		Clients: clients,
		Env:     &fakeEnv{queue: make([]int, servers), mean: make([]time.Duration, servers)},
	}
}

const msec = time.Millisecond

func TestC3ScoreAndOrder(t *testing.T) {
	p := DefaultC3Params()
	p.ServerSlots = 0
	c := NewC3With(cfg(3, 10), p) // n = 10 clients

	// Unseen replicas score 0; ties keep replicas' order.
	assert.Zero(t, c.Score(0))
	s, wait := c.Choose(0, []int32{2, 1, 0})
	assert.Equal(t, int32(2), s)
	assert.Zero(t, wait)
	c.Sent(0, 2)

	// Server 0: two in flight, one answers: R=5, 1/mu=2, q=2 (first sample, no smoothing), os=1.
	c.Sent(0, 0)
	c.Sent(0, 0)
	c.Done(5*msec, 0, 5*msec, selector.Feedback{Queue: 2, ServiceTime: 2 * msec})
	require.Equal(t, 1, c.Outstanding(0))
	// Psi = (5-2) + (1 + 1*10 + 2)^3 * 2 = 3 + 2197*2 = 4397.
	assert.InDelta(t, 4397.0, c.Score(0), 1e-9)

	// Server 1: R=10, 1/mu=8, q=0, os=0: Psi = 2 + 1*8 = 10.
	c.Sent(0, 1)
	c.Done(10*msec, 1, 10*msec, selector.Feedback{Queue: 0, ServiceTime: 8 * msec})
	assert.InDelta(t, 10.0, c.Score(1), 1e-9)

	// Server 2 answered too: R=1, 1/mu=1, q=0, os=0: Psi = 0 + 1 = 1: best.
	c.Done(10*msec, 2, 1*msec, selector.Feedback{Queue: 0, ServiceTime: 1 * msec})
	assert.InDelta(t, 1.0, c.Score(2), 1e-9)
	s, _ = c.Choose(10*msec, []int32{0, 1, 2})
	assert.Equal(t, int32(2), s)
	c.Sent(10*msec, 2) // os_2 = 1: Psi_2 = 0 + 11^3*1 = 1331 > 10
	assert.InDelta(t, 1331.0, c.Score(2), 1e-9)
	s, _ = c.Choose(10*msec, []int32{0, 1, 2})
	assert.Equal(t, int32(1), s, "slow but idle server 1 (10) beats 2 (1331) and 0 (4397)")

	// EWMA, weight 0.9 on the newest sample: server 1 answers R=20, 1/mu=10, q=5.
	// nw = 0.9*10 + 0.1*2 = 9.2; q = 0.9*5 = 4.5; 1/mu = 0.9*10 + 0.1*8 = 9.8.
	c.Sent(10*msec, 1)
	c.Done(30*msec, 1, 20*msec, selector.Feedback{Queue: 5, ServiceTime: 10 * msec})
	// os_1 = 0 (both sends answered): qhat = 1 + 0 + 4.5 = 5.5: 9.2 + 166.375*9.8.
	assert.InDelta(t, 1639.675, c.Score(1), 1e-9)
	c.Sent(30*msec, 1) // os_1 = 1: qhat = 15.5
	assert.InDelta(t, 9.2+15.5*15.5*15.5*9.8, c.Score(1), 1e-9)
}

func TestC3ServerSlotsAndConcurrencyWeight(t *testing.T) {
	c := NewC3(cfg(2, 150)).(*C3)
	assert.Equal(t, 150.0, c.n, "n defaults to the number of clients")
	// Queue 6 with 4 slots: 2 waiting. R=3, 1/mu=1: Psi = 2 + 3^3*1 = 29.
	c.Done(3*msec, 0, 3*msec, selector.Feedback{Queue: 6, ServiceTime: msec})
	assert.InDelta(t, 29.0, c.Score(0), 1e-9)
	// Queue 3 < 4 slots: none waiting: Psi = 2 + 1 = 3.
	c.Done(3*msec, 1, 3*msec, selector.Feedback{Queue: 3, ServiceTime: msec})
	assert.InDelta(t, 3.0, c.Score(1), 1e-9)

	p := DefaultC3Params()
	p.ConcurrencyWeight = 2
	c2 := NewC3With(cfg(1, 150), p)
	c2.Done(3*msec, 0, 3*msec, selector.Feedback{Queue: 4, ServiceTime: msec})
	c2.Sent(3*msec, 0)
	assert.InDelta(t, 2+27.0, c2.Score(0), 1e-9, "qhat = 1 + 1*2 + 0")
}

func TestTokenBucketAndBackpressure(t *testing.T) {
	c := NewC3(cfg(3, 1)).(*C3)
	group := []int32{0, 1}
	// 10 tokens each at rate 10 per 20 ms; scores all 0, so 0 first.
	for i := range 20 {
		s, wait := c.Choose(0, group)
		require.Zero(t, wait, "send %d", i)
		want := int32(0)
		if i >= 10 {
			want = 1
		}
		require.Equal(t, want, s, "send %d", i)
		c.Sent(0, s)
	}
	// Both over rate: wait (1 - 0) * 20 ms / 10 = 2 ms.
	s, wait := c.Choose(0, group)
	assert.Equal(t, int32(-1), s)
	assert.Equal(t, 2*msec, wait)
	// Half-way, half a token: 1 ms left.
	s, wait = c.Choose(1*msec, group)
	assert.Equal(t, int32(-1), s)
	assert.Equal(t, 1*msec, wait)
	// At the wake time a token is there (absim forces it to exactly 1).
	s, wait = c.Choose(2*msec, group)
	assert.Equal(t, int32(0), s)
	assert.Zero(t, wait)
	assert.InDelta(t, 0.0, c.rc.lim[0].tokens, 1e-12)
	assert.Equal(t, 2.0, c.rc.lim[0].lastSent)

	// A slower rate waits longer: rate 5 -> 4 ms for a token from 0.
	c.rc.lim[2].rate, c.rc.lim[2].tokens, c.rc.lim[2].lastSent = 5, 0, 10
	s, wait = c.Choose(10*msec, []int32{2})
	assert.Equal(t, int32(-1), s)
	assert.Equal(t, 4*msec, wait)
}

func TestShadowReadCharge(t *testing.T) {
	c := NewC3(cfg(3, 1)).(*C3)
	s, _ := c.Choose(0, []int32{0, 1, 2})
	require.Equal(t, int32(0), s)
	assert.Equal(t, 9.0, c.rc.lim[0].tokens, "Choose consumes the token")
	c.Sent(0, 0)
	assert.Equal(t, 9.0, c.rc.lim[0].tokens, "the chosen send is not charged twice")
	c.Sent(0, 1) // read repair to the other replicas
	c.Sent(0, 2)
	assert.Equal(t, 9.0, c.rc.lim[1].tokens)
	assert.Equal(t, 0.0, c.rc.lim[1].lastSent)
	// forceUpdates floors at 0.
	c.rc.lim[2].tokens = 0.5
	c.Sent(0, 2)
	assert.Equal(t, 0.0, c.rc.lim[2].tokens)
	assert.Equal(t, 3, c.Outstanding(2)+c.Outstanding(1))
}

func TestCubicIncrease(t *testing.T) {
	rc := newRateControl(DefaultRateParams(), 1)
	l := &rc.lim[0]
	// R0 = 20: K = cbrt(0.2*20/4e-6) = 100 ms.
	// T = 150 ms: 4e-6 * 50^3 + 20 = 20.5; step 5.5 <= s_max.
	l.rate, l.rrate, l.r0, l.lastDec = 15, 30, 20, 0
	rc.adapt(0, 150)
	assert.InDelta(t, 20.5, l.rate, 1e-9)
	assert.Equal(t, 150.0, l.lastInc)
	// From 5 the step 15.5 is capped at s_max = 10.
	l.rate = 5
	rc.adapt(0, 150)
	assert.InDelta(t, 15.0, l.rate, 1e-12)
	// In the concave part the target can be below the current rate
	// (absim sets it anyway): T = 50: 20 - 4e-6*50^3 = 19.5.
	l.rate = 19.8
	rc.adapt(0, 50)
	assert.InDelta(t, 19.5, l.rate, 1e-9)
	// T = 0 right after a decrease: (1-beta)*R0 = 16.
	l.rate = 10
	rc.adapt(0, 0)
	assert.InDelta(t, 16.0, l.rate, 1e-9)
}

func TestCubicDecrease(t *testing.T) {
	rc := newRateControl(DefaultRateParams(), 1)
	l := &rc.lim[0]
	l.rate, l.rrate, l.lastInc = 20, 10, 0
	rc.adapt(0, 40) // hysteresis 2*20 ms not yet over (absim: strictly greater)
	assert.Equal(t, 20.0, l.rate)
	rc.adapt(0, 41)
	assert.InDelta(t, 4.0, l.rate, 1e-12, "rate * beta")
	assert.Equal(t, 20.0, l.r0)
	assert.Equal(t, 41.0, l.lastDec)
	// No receive rate yet: nothing changes.
	l.rrate = 0
	rc.adapt(0, 500)
	assert.InDelta(t, 4.0, l.rate, 1e-12)
	// Floor 0.01.
	l.rate, l.rrate = 0.02, 0.001
	rc.adapt(0, 1000)
	assert.Equal(t, 0.01, l.rate)
}

func TestReceiveRateThroughDone(t *testing.T) {
	c := NewC3(cfg(1, 1)).(*C3)
	fb := selector.Feedback{ServiceTime: msec}
	c.Done(5*msec, 0, 2*msec, fb)
	c.Done(10*msec, 0, 2*msec, fb)
	assert.Zero(t, c.rc.lim[0].rrate)
	// Tick at 20 ms: rrate = 0.1*2; at 25 ms send 10 > 0.2 but 25 - 0 <= 40: no decrease.
	c.Done(25*msec, 0, 2*msec, fb)
	assert.InDelta(t, 0.2, c.rc.lim[0].rrate, 1e-12)
	assert.Equal(t, 10.0, c.Rate(0))
	// Ticks at 40 and 60 ms: (0.1*1 + 0.9*0.2) * 0.9 = 0.252; 65 - 0 > 40: decrease to 2.
	c.Done(65*msec, 0, 2*msec, fb)
	assert.InDelta(t, 0.252, c.rc.lim[0].rrate, 1e-12)
	assert.InDelta(t, 2.0, c.Rate(0), 1e-12)
	assert.Equal(t, 10.0, c.rc.lim[0].r0)
	assert.Equal(t, 65.0, c.rc.lim[0].lastDec)
}

func TestLOR(t *testing.T) {
	l := NewLOR(cfg(4, 1))
	s, wait := l.Choose(0, []int32{1, 2, 3})
	assert.Equal(t, int32(1), s, "tie: first")
	assert.Zero(t, wait)
	l.Sent(0, 1)
	l.Sent(0, 1)
	l.Sent(0, 2)
	s, _ = l.Choose(0, []int32{1, 2, 3})
	assert.Equal(t, int32(3), s)
	l.Sent(0, 3)
	l.Sent(0, 3)
	s, _ = l.Choose(0, []int32{1, 2, 3})
	assert.Equal(t, int32(2), s)
	l.Done(msec, 1, msec, selector.Feedback{})
	l.Done(msec, 1, msec, selector.Feedback{})
	s, _ = l.Choose(0, []int32{3, 2, 1})
	assert.Equal(t, int32(1), s)
}

func TestRRRotates(t *testing.T) {
	r := NewRRRateLimited(cfg(7, 1)).(*RRRateLimited)
	g := []int32{3, 4, 5}
	var got []int32
	for range 4 {
		s, wait := r.Choose(0, g)
		require.Zero(t, wait)
		r.Sent(0, s)
		got = append(got, s)
	}
	assert.Equal(t, []int32{3, 4, 5, 3}, got)
	s, _ := r.Choose(0, []int32{4, 5, 6})
	assert.Equal(t, int32(4), s, "another group has its own rotation")

	// Rotation index 1 -> 4 first; 4 over rate -> 5.
	r.rc.lim[4].tokens, r.rc.lim[4].lastSent = 0, 1
	s, wait := r.Choose(msec, g)
	assert.Equal(t, int32(5), s)
	assert.Zero(t, wait)
	// All over rate: -1 and the shortest wait (4: 0.5 token at 10/20ms -> 1 ms).
	r.rc.lim[3].tokens, r.rc.lim[3].lastSent = 0, 1
	r.rc.lim[5].tokens, r.rc.lim[5].lastSent = 0, 1
	r.rc.lim[4].lastSent = 0
	s, wait = r.Choose(msec, g)
	assert.Equal(t, int32(-1), s)
	assert.Equal(t, msec, wait)
}

func TestORA(t *testing.T) {
	c := cfg(4, 1)
	env := c.Env.(*fakeEnv)
	env.queue = []int{3, 0, 1, 0}
	env.mean = []time.Duration{4 * msec, 20 * msec, 4 * msec / 3, 20 * msec}
	o := NewORA(c)
	// Costs: (1+3)*4 = 16, 1*20 = 20, 2*4/3 = 2.67, 20.
	s, wait := o.Choose(0, []int32{0, 1, 2})
	assert.Equal(t, int32(2), s)
	assert.Zero(t, wait)
	s, _ = o.Choose(0, []int32{0, 1, 3})
	assert.Equal(t, int32(0), s)
	s, _ = o.Choose(0, []int32{3, 1})
	assert.Equal(t, int32(3), s, "tie: first")
	assert.InDelta(t, float64(16*msec), o.(*ORA).Cost(0), 1e-6)
}

func TestNoAllocations(t *testing.T) {
	for name, sel := range map[string]selector.Selector{
		"C3":  NewC3(cfg(5, 3)),
		"LOR": NewLOR(cfg(5, 3)),
		"RR":  NewRRRateLimited(cfg(5, 3)),
		"ORA": NewORA(cfg(5, 3)),
	} {
		g := []int32{1, 2, 3}
		now := time.Duration(0)
		allocs := testing.AllocsPerRun(200, func() {
			now += 3 * msec
			s, wait := sel.Choose(now, g)
			if wait > 0 {
				return
			}
			sel.Sent(now, s)
			sel.Sent(now, 4)
			sel.Done(now+msec, s, msec, selector.Feedback{Queue: 5, ServiceTime: msec / 2})
			sel.Done(now+msec, 4, msec, selector.Feedback{Queue: 1, ServiceTime: msec / 2})
		})
		assert.Zero(t, allocs, name)
	}
}
