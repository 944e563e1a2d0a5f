package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
)

// TestHedgeRoom: the wait is the median host's expected response time
// R_s - 1/mu_s + qeff_s/mu_s, where the client's outstanding requests count
// only on hosts whose W_s is known (here 1/mu_s = R_s, w = 1: R_s x (1 +
// outstanding/W_s) there, R_s elsewhere); busy is the median host's share
// of workers taken, 1 where W_s is unknown (then BusyAssumed); saturation needs every up host
// to have a known W_s and all its workers taken.
func TestHedgeRoom(t *testing.T) {
	p, hosts, clk := testPolicy(t, 5, tailroute.WithRateControl(false))
	tr := p.r.Tracker()
	for i, r := range []time.Duration{2, 4, 6, 8, 100} {
		h := tr.Host("h" + string(rune('0'+i)))
		for k := 0; k < 50; k++ {
			h.Observe(tr.Now(), r*time.Millisecond, track.Success)
		}
	}
	room := p.HedgeRoom()
	assert.InDelta(t, float64(6*time.Millisecond), float64(room.Wait), float64(100*time.Microsecond), "median of 2, 4, 6, 8, 100 ms")
	assert.False(t, room.Saturated, "no W_s known")
	assert.Equal(t, 1.0, room.Busy, "no W_s known: every host counts as busy")
	assert.True(t, room.BusyAssumed, "no W_s known")

	// one request in flight on each of the three fastest: W_s unknown,
	// nothing changes
	a0 := tr.Host("h0").Begin(tr.Now())
	a1 := tr.Host("h1").Begin(tr.Now())
	a2 := tr.Host("h2").Begin(tr.Now())
	room = p.HedgeRoom()
	assert.InDelta(t, float64(6*time.Millisecond), float64(room.Wait), float64(100*time.Microsecond), "own outstanding requests without a known W_s are no queue")

	// W_s known (polled): 4 on h0, h1, h2, each with 1 in flight: 2.5, 5,
	// 7.5, 8, 100 ms -> 7.5 ms; busy 1/4 on three hosts of five
	for _, id := range []string{"h0", "h1", "h2"} {
		tr.Host(id).ServerWorkers(4)
	}
	room = p.HedgeRoom()
	assert.InDelta(t, float64(7500*time.Microsecond), float64(room.Wait), float64(100*time.Microsecond))
	assert.Equal(t, 0.25, room.Busy, "median of 1/4, 1/4, 1/4, 1, 1")
	assert.True(t, room.BusyAssumed, "h3 and h4 count as busy by assumption")

	// saturated only when every host has a known W_s and is full
	for _, id := range []string{"h0", "h1", "h2"} {
		tr.Host(id).ServerWorkers(1)
	}
	assert.Equal(t, 1.0, p.HedgeRoom().Busy, "h0-h2 1 of 1")
	tr.Host("h3").ServerWorkers(2)
	room = p.HedgeRoom()
	assert.False(t, room.Saturated, "h3 has 0 of its 2 workers taken")
	b3 := tr.Host("h3").Begin(tr.Now())
	c3 := tr.Host("h3").Begin(tr.Now())
	assert.False(t, p.HedgeRoom().Saturated, "h0-h2 1 of 1, h3 2 of 2, but h4's W_s is unknown: it may have room")
	tr.Host("h4").ServerWorkers(1)
	a4 := tr.Host("h4").Begin(tr.Now())
	room = p.HedgeRoom()
	assert.True(t, room.Saturated, "every host full")
	assert.False(t, room.BusyAssumed, "every W_s known")
	tr.Host("h0").End(a0)
	assert.False(t, p.HedgeRoom().Saturated, "h0 has a free worker again")
	for _, a := range []track.Attempt{b3, c3} {
		tr.Host("h3").End(a)
	}
	tr.Host("h4").End(a4)
	tr.Host("h1").End(a1)
	tr.Host("h2").End(a2)
	clk.Advance(time.Millisecond)
	assert.Equal(t, 0.0, p.HedgeRoom().Busy, "every W_s known, nothing in flight")

	p.HostDown(hosts[4])
	room = p.HedgeRoom()
	assert.False(t, room.BusyAssumed, "the up hosts' W_s are known")
	assert.InDelta(t, float64(4*time.Millisecond), float64(room.Wait), float64(100*time.Microsecond), "down hosts do not count: the lower median of 2, 4, 6, 8 ms")
}

// TestHedgeRoomPolledOthers: a host's workers taken are the client's own
// outstanding requests plus the other clients', read from the polled queue
// as far as the sample counts and guessed as outstanding x (w-1) for the
// rest (package speculative, "Load rule", rule 2).
func TestHedgeRoomPolledOthers(t *testing.T) {
	p, _, clk := testPolicy(t, 5, tailroute.WithRateControl(false), tailroute.WithConcurrencyWeight(4))
	tr := p.r.Tracker()
	var hosts []*track.Host
	for i := 0; i < 5; i++ {
		h := tr.Host("h" + string(rune('0'+i)))
		for k := 0; k < 50; k++ {
			h.Observe(tr.Now(), 4*time.Millisecond, track.Success)
		}
		h.ServerWorkers(4)
		h.Begin(tr.Now())
		hosts = append(hosts, h)
	}
	room := p.HedgeRoom()
	assert.Equal(t, 1.0, room.Busy, "no poll: 1 in flight x w = 4 counts as 4 of 4 workers")
	assert.True(t, room.Saturated)

	const fresh = 100 * time.Millisecond
	poll := func(queue float64) {
		for _, h := range hosts {
			h.ServerLoad(tr.Now(), queue, 0, fresh, fresh)
		}
	}
	poll(0)
	room = p.HedgeRoom()
	assert.Equal(t, 0.25, room.Busy, "the poll shows no other client's request: 1 of 4")
	assert.False(t, room.Saturated)

	poll(3)
	room = p.HedgeRoom()
	assert.Equal(t, 1.0, room.Busy, "1 own + 3 others polled")
	assert.True(t, room.Saturated)

	poll(0)
	clk.Advance(2 * fresh) // the sample fades: weight exp(-1)
	wt := track.ServerLoadWeight(2*fresh, fresh)
	assert.InDelta(t, (1+(1-wt)*3)/4, p.HedgeRoom().Busy, 1e-9, "the rest of the others guessed as 1 x (w-1)")
	clk.Advance(4 * fresh)
	assert.Equal(t, 1.0, p.HedgeRoom().Busy, "the sample no longer counts: 1 x w again")
}

// TestHedgeRoomStalled: StalledFor is the silence of a host the policy's
// stall rule (WithStall: silent, owing responses, for max(StallMin,
// StallFactor x R_s)) calls stalled, so a host whose R_s has grown with its
// queue is not stalled by a silence a fast host would be.
func TestHedgeRoomStalled(t *testing.T) {
	p, _, clk := testPolicy(t, 3, tailroute.WithRateControl(false), tailroute.WithStall(4, 10*time.Millisecond))
	tr := p.r.Tracker()
	for i, r := range []time.Duration{5, 5, 50} {
		h := tr.Host("h" + string(rune('0'+i)))
		for k := 0; k < 50; k++ {
			h.Observe(tr.Now(), r*time.Millisecond, track.Success)
		}
	}
	assert.Zero(t, p.HedgeRoom().StalledFor, "nothing owed")
	slow := tr.Host("h2").Begin(tr.Now())
	clk.Advance(100 * time.Millisecond)
	assert.Zero(t, p.HedgeRoom().StalledFor, "h2 (R_s 50 ms) silent for 100 ms: its queue, not a stall")
	clk.Advance(100 * time.Millisecond)
	assert.Equal(t, 200*time.Millisecond, p.HedgeRoom().StalledFor, "h2 silent for 200 ms = 4 x R_s")

	fast := tr.Host("h0").Begin(tr.Now())
	clk.Advance(19 * time.Millisecond)
	assert.Equal(t, 219*time.Millisecond, p.HedgeRoom().StalledFor, "h2 stalled; h0 (R_s 5 ms) silent for 19 ms")
	tr.Host("h2").End(slow)
	assert.Zero(t, p.HedgeRoom().StalledFor, "h0 (R_s 5 ms) silent for 19 ms: not stalled")
	clk.Advance(time.Millisecond)
	assert.Equal(t, 20*time.Millisecond, p.HedgeRoom().StalledFor, "h0 silent for 20 ms = 4 x R_s")
	tr.Host("h0").End(fast)
	assert.Zero(t, p.HedgeRoom().StalledFor, "nothing owed")
}

// BenchmarkHedgeRoom: the hedger's reading of the hosts' load (at most one
// per few ms per session): one View per host, no allocation.
func BenchmarkHedgeRoom(b *testing.B) {
	p, _, _ := testPolicy(b, 5)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.HedgeRoom()
	}
}

// TestHedgeRoomOneOfMany: OneOfMany says the concurrency weight in force
// is at least track.ManyClients (here given with WithConcurrencyWeight;
// measured from the polls by default).
func TestHedgeRoomOneOfMany(t *testing.T) {
	for w, want := range map[float64]bool{1: false, track.ManyClients - 1: false, track.ManyClients: true, 300: true} {
		p, _, _ := testPolicy(t, 5, tailroute.WithConcurrencyWeight(w))
		assert.Equal(t, want, p.HedgeRoom().OneOfMany, "w = %v", w)
	}
}
