package peers

import (
	"slices"
	"testing"
	"time"
)

// TestLatencyInflightOrder: with three replicas (10, 2, 5 ms, fresh) the
// three compare-and-swaps sort them, [1 2 0], whatever the shuffle; then
// the first two swap when the first has more in flight: with two requests
// in flight on host 1, [2 1 0]. With four (host 3 at 1 ms) the two passes
// put the slowest two last, [. . 2 0].
func TestLatencyInflightOrder(t *testing.T) {
	p := NewLatencyInflight(config(1))
	last := slowFastMid(p)
	for range 100 {
		r := []int32{0, 1, 2}
		if p.Order(last, r); !slices.Equal(r, []int32{1, 2, 0}) {
			t.Fatalf("Order = %v, want [1 2 0]", r)
		}
	}
	p.Sent(last, 1)
	p.Sent(last, 1)
	for range 100 {
		r := []int32{0, 1, 2}
		if p.Order(last, r); !slices.Equal(r, []int32{2, 1, 0}) {
			t.Fatalf("with host 1 busier, Order = %v, want [2 1 0]", r)
		}
	}
	p.Reset(last, 1) // down: its pool, and in-flight count, are gone
	feed(p, 3, ms, 100, ms, ms)
	for range 100 {
		r := []int32{0, 1, 2, 3}
		if p.Order(last, r); r[2] != 2 || r[3] != 0 {
			t.Fatalf("Order of four = %v, want hosts 2 and 0 last", r)
		}
	}
	// Averages updated 2 s ago or more do not move a replica.
	if got := firsts(p, last+2*time.Second, []int32{0, 1, 2}, 600); got[0] < 130 {
		t.Errorf("first replicas with 2 s old averages %v: want host 0 about 1/3", got)
	}
}

// TestLatencyInflightNewlyUp: for a minute after host 0 came up, the
// newly-up rule replaces the latency order: host 0, the slowest, is first
// when the shuffle puts it there and the 1d4 roll keeps it (1/3 x 1/4);
// after the minute (with fresh averages) it is never first.
func TestLatencyInflightNewlyUp(t *testing.T) {
	p := NewLatencyInflight(config(1))
	last := slowFastMid(p)
	p.Up(last, 0)
	if got := firsts(p, last, []int32{0, 1, 2}, 1200); got[0] < 50 || got[0] > 150 {
		t.Errorf("first replicas while host 0 is newly up %v: want host 0 about 1/12", got)
	}
	later := last + time.Minute
	for s, lat := range []time.Duration{10 * ms, 2 * ms, 5 * ms} { // fresh averages again
		feed(p, int32(s), lat, 1, later, 0)
	}
	if got := firsts(p, later, []int32{0, 1, 2}, 1200); got[0] != 0 {
		t.Errorf("first replicas a minute later %v: want host 0 never", got)
	}
}
