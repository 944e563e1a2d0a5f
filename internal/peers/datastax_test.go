package peers

import (
	"slices"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// sendN puts n requests in flight on server s at now.
func sendN(p *DataStax, now time.Duration, s int32, n int) {
	for range n {
		p.Sent(now, s)
	}
}

// TestDataStaxUnhealthy: a host is unhealthy when it has 10 or more
// requests in flight and the older of its last two responses is more than
// 200 ms old (or it has fewer than two).
func TestDataStaxUnhealthy(t *testing.T) {
	p := NewDataStax(config(1))
	at := func(now time.Duration, want bool, why string) {
		t.Helper()
		if got := p.Unhealthy(now, 0); got != want {
			t.Errorf("at %v (%s): unhealthy %v, want %v", now, why, got, want)
		}
	}
	at(0, false, "never seen")
	sendN(p, 0, 0, 9)
	at(0, false, "9 in flight, no response")
	p.Sent(0, 0)
	at(0, true, "10 in flight, no response")
	p.Sent(0, 0)
	p.Done(0, 0, ms, selector.Feedback{}) // a response at 0; 10 in flight
	at(0, true, "10 in flight, one response")
	p.Sent(50*ms, 0)
	p.Done(50*ms, 0, ms, selector.Feedback{}) // responses at 0 and 50 ms
	at(150*ms, false, "the older response 150 ms old")
	at(200*ms, false, "the older response exactly 200 ms old")
	at(200*ms+1, true, "the older response just over 200 ms old")
	p.Sent(210*ms, 0)
	p.Done(210*ms, 0, ms, selector.Feedback{}) // the last two: 50 and 210 ms
	at(250*ms, false, "the older of the last two at 50 ms, 200 ms old")
	at(251*ms, true, "the older of the last two at 50 ms, 201 ms old")
	if got := p.InFlight(251*ms, 0); got != 10 {
		t.Fatalf("in flight %d, want 10", got)
	}
	p.Done(251*ms, 0, ms, selector.Feedback{})
	at(251*ms, false, "9 in flight")
	sendN(p, 251*ms, 0, 3)
	p.Reset(251*ms, 0)
	if got := p.InFlight(251*ms, 0); got != 0 {
		t.Fatalf("in flight after Reset %d, want 0", got)
	}
	if got := p.Responses(0); got != 2 {
		t.Fatalf("responses after Reset %d, want 2 (kept)", got)
	}
}

// TestDataStaxOrphans: an attempt ended without a response stays in flight
// until the node answers a request sent after it, or until twice its
// elapsed time (or twice the mean response time, if longer) has passed, at
// most the bound; it is not a response.
func TestDataStaxOrphans(t *testing.T) {
	p := NewDataStax(config(1))
	const t0 = time.Second
	sendN(p, t0-30*ms, 0, 10)
	for range 10 {
		p.NoResponse(t0, 0, 30*ms, time.Second) // release at t0 + 60 ms
	}
	if got, n := p.InFlight(t0+59*ms, 0), p.Responses(0); got != 10 || n != 0 {
		t.Fatalf("59 ms after the timeouts: in flight %d, responses %d; want 10, 0", got, n)
	}
	if !p.Unhealthy(t0+59*ms, 0) {
		t.Fatal("10 orphans, no responses: want unhealthy")
	}
	if got := p.InFlight(t0+60*ms, 0); got != 0 {
		t.Fatalf("60 ms after the timeouts: in flight %d, want 0", got)
	}

	// A response to a request sent before the orphans releases none; one
	// sent after them releases all.
	p.Sent(t0, 0)
	p.NoResponse(t0+10*ms, 0, 10*ms, time.Second) // sent at t0, release at t0 + 30 ms
	p.Sent(t0+5*ms, 0)
	p.Done(t0+20*ms, 0, 25*ms, selector.Feedback{}) // sent at t0 - 5 ms
	if got := p.InFlight(t0+20*ms, 0); got != 1 {
		t.Fatalf("after a response to an earlier request: in flight %d, want 1", got)
	}
	p.Sent(t0+5*ms, 0)
	p.Done(t0+20*ms, 0, 15*ms, selector.Feedback{}) // sent at t0 + 5 ms
	if got := p.InFlight(t0+20*ms, 0); got != 0 {
		t.Fatalf("after a response to a later request: in flight %d, want 0", got)
	}

	// The mean response time is now 25 + 0.1 x (15 - 25) = 24 ms: an
	// orphan of 1 ms waits 48 ms; the bound cuts a long one.
	p.Sent(2*t0, 0)
	p.NoResponse(2*t0, 0, ms, time.Second)
	if a, b := p.InFlight(2*t0+47*ms, 0), p.InFlight(2*t0+48*ms, 0); a != 1 || b != 0 {
		t.Fatalf("orphan of 1 ms with a 24 ms mean: in flight %d at 47 ms, %d at 48 ms; want 1, 0", a, b)
	}
	p.Sent(3*t0, 0)
	p.NoResponse(3*t0, 0, 2*time.Second, 100*ms)
	if a, b := p.InFlight(3*t0+99*ms, 0), p.InFlight(3*t0+100*ms, 0); a != 1 || b != 0 {
		t.Fatalf("orphan bound 100 ms: in flight %d at 99 ms, %d at 100 ms; want 1, 0", a, b)
	}
}

// orderTwin returns the policy's Order of replicas and the plain shuffle
// of the same replicas drawn from a twin of its randomness.
func orderTwin(p, twin *DataStax, now time.Duration, replicas []int32) (got, shuffled []int32) {
	got, shuffled = slices.Clone(replicas), slices.Clone(replicas)
	p.Order(now, got)
	shuffle(twin.rng, shuffled)
	return got, shuffled
}

// TestDataStaxOrder: two replicas are only shuffled; with three, an
// unhealthy replica goes last and the first two are ordered by in flight;
// unhealthy replicas move only while they are fewer than half, in order.
func TestDataStaxOrder(t *testing.T) {
	p, twin := NewDataStax(config(3)), NewDataStax(config(3))
	const now = time.Second
	setup := func(inFlight ...int) {
		for s, n := range inFlight {
			p.Reset(now, int32(s))
			sendN(p, now, int32(s), n)
		}
	}

	// Two replicas, host 0 busy and unhealthy: the shuffle is all.
	setup(50, 0)
	for range 50 {
		if got, want := orderTwin(p, twin, now, []int32{0, 1}); !slices.Equal(got, want) {
			t.Fatalf("two replicas: Order %v, want the shuffle %v", got, want)
		}
	}

	// Three healthy replicas, 1, 5 and 9 in flight: the shuffle, then the
	// first two swap when the first has more in flight.
	setup(1, 5, 9)
	for range 50 {
		got, sh := orderTwin(p, twin, now, []int32{0, 1, 2})
		want := slices.Clone(sh)
		if want[0] > want[1] { // in flight grows with the index
			want[0], want[1] = want[1], want[0]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("1, 5, 9 in flight: Order %v, want %v (shuffle %v)", got, want, sh)
		}
	}

	// Host 0 unhealthy (20 in flight, no response), host 1 with 5, host 2
	// with none: [2 1 0] whatever the shuffle.
	setup(20, 5, 0)
	for range 50 {
		if got, _ := orderTwin(p, twin, now, []int32{0, 1, 2}); !slices.Equal(got, []int32{2, 1, 0}) {
			t.Fatalf("host 0 unhealthy: Order %v, want [2 1 0]", got)
		}
	}

	// Two of three unhealthy (not fewer than half): nothing moves; the
	// first two are still ordered by in flight (10 < 20 < 30).
	setup(20, 30, 0)
	p.Reset(now, 2)
	sendN(p, now, 2, 10) // host 2: 10 in flight but two fresh responses, healthy
	for range 2 {
		p.Sent(now, 2)
		p.Done(now, 2, ms, selector.Feedback{})
	}
	for range 50 {
		got, sh := orderTwin(p, twin, now, []int32{0, 1, 2})
		load := map[int32]int{0: 20, 1: 30, 2: 10}
		want := slices.Clone(sh)
		if load[want[0]] > load[want[1]] {
			want[0], want[1] = want[1], want[0]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("two of three unhealthy: Order %v, want %v (shuffle %v)", got, want, sh)
		}
	}

	// Four replicas, hosts 0 and 1 unhealthy: exactly half, nothing moves;
	// the first two by in flight (10, 11, 3, 2).
	setup(10, 11, 3, 2)
	for range 50 {
		got, sh := orderTwin(p, twin, now, []int32{0, 1, 2, 3})
		load := []int{10, 11, 3, 2}
		want := slices.Clone(sh)
		if load[want[0]] > load[want[1]] {
			want[0], want[1] = want[1], want[0]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("two of four unhealthy: Order %v, want %v (shuffle %v)", got, want, sh)
		}
	}

	// Five replicas, hosts 0 and 1 unhealthy (2 < 2.5): both go to the end
	// in their shuffled order; the healthy ones keep theirs, the first two
	// ordered by in flight (hosts 2, 3, 4: 3, 2, 1).
	setup(10, 11, 3, 2, 1)
	for range 50 {
		got, sh := orderTwin(p, twin, now, []int32{0, 1, 2, 3, 4})
		var healthy, unhealthy []int32
		for _, s := range sh {
			if s < 2 {
				unhealthy = append(unhealthy, s)
			} else {
				healthy = append(healthy, s)
			}
		}
		want := append(healthy, unhealthy...)
		if want[0] < want[1] { // hosts 2..4: in flight falls with the index
			want[0], want[1] = want[1], want[0]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("two of five unhealthy: Order %v, want %v (shuffle %v)", got, want, sh)
		}
	}
}

// TestDataStaxChoose: in the simulator's use (Choose, Sent, Done) a
// replica with a backlog of requests is chosen only when it is one of the
// first two and the other has more; it is never first against two idle
// replicas.
func TestDataStaxChoose(t *testing.T) {
	p := NewDataStax(config(5))
	now := time.Second
	sendN(p, now, 0, 3)
	count := map[int32]int{}
	for range 600 {
		s, wait := p.Choose(now, []int32{0, 1, 2})
		if wait != 0 {
			t.Fatalf("Choose asked to wait %v", wait)
		}
		count[s]++
		p.Sent(now, s)
		now += ms
		p.Done(now, s, ms, selector.Feedback{})
	}
	if count[0] != 0 || count[1] < 250 || count[2] < 250 {
		t.Fatalf("choices %v: want host 0 (3 in flight) never, hosts 1 and 2 about half each", count)
	}
}
