package peers

import (
	"testing"
	"time"
)

// TestLatencyAwareAverage: the timestamped average by hand. With 50
// minimum measurements an average exists from the 15th latency (30 %); the
// 15th is the average; a 20 ms latency 100 ms (one scale) later weighs
// 1 - ln 2: 0.30685 x 20 ms + 0.69315 x 10 ms = 13.068528 ms.
func TestLatencyAwareAverage(t *testing.T) {
	p := NewLatencyAware(config(1))
	last := feed(p, 0, 10*ms, 14, ms, ms)
	if h := p.hosts[0]; h.average != -1 || h.n != 14 {
		t.Fatalf("after 14 latencies: %+v, want average -1", h)
	}
	feed(p, 0, 10*ms, 1, last+ms, 0)
	if h := p.hosts[0]; h.average != int64(10*ms) || h.n != 15 {
		t.Fatalf("after 15: %+v, want average 10 ms", h)
	}
	feed(p, 0, 20*ms, 1, last+ms+100*ms, 0)
	if got := p.hosts[0].average; got != 13_068_528 {
		t.Errorf("average = %d ns, want 13068528", got)
	}
	feed(p, 0, 50*ms, 1, last+ms+100*ms, 0) // same instant: discarded, as in the source
	if got := p.hosts[0]; got.average != 13_068_528 || got.n != 16 {
		t.Errorf("a latency at the same instant changed the average: %+v", got)
	}
}

// TestLatencyAwareExclusion: host 0 answers in 1 ms, host 1 in 5 ms, 50
// latencies each by 50 ms. Before the updater's first tick (100 ms) nobody
// is excluded; from it the minimum is 1 ms and host 1 (5 ms > 2 x 1 ms)
// goes after host 0 in every plan. Its average has no new latency, so
// once 10 s have passed since its last (at 50 ms) it is back.
func TestLatencyAwareExclusion(t *testing.T) {
	p := NewLatencyAware(config(1))
	feed(p, 0, ms, 50, ms, ms)
	last1 := feed(p, 1, 5*ms, 50, ms, ms)
	if p.Excluded(99*ms, 1) {
		t.Fatal("host 1 excluded before the updater ran")
	}
	if !p.Excluded(100*ms, 1) || p.Excluded(100*ms, 0) {
		t.Fatalf("at 100 ms: min %d; want host 1 excluded, host 0 not", p.min)
	}
	for range 50 {
		r := []int32{1, 0}
		if k := p.Order(100*ms, r); k != 1 || r[0] != 0 || r[1] != 1 {
			t.Fatalf("Order = %v, %d; want [0 1], 1 not excluded", r, k)
		}
	}
	// Three replicas, one excluded: it is last, the two others shuffled.
	seen := map[int32]int{}
	for range 100 {
		r := []int32{1, 0, 2}
		if k := p.Order(100*ms, r); k != 2 || r[2] != 1 {
			t.Fatalf("Order = %v, %d; want host 1 last, 2 not excluded", r, k)
		}
		seen[r[0]]++
	}
	if seen[0] == 0 || seen[2] == 0 {
		t.Errorf("first replicas %v: the two not excluded are shuffled", seen)
	}
	// Host 0 stays fresh; host 1 ages out after the retry period.
	feed(p, 0, ms, 100, 200*ms, 100*ms)
	if at := last1 + 10*time.Second; !p.Excluded(at, 1) || p.Excluded(at+1, 1) {
		t.Errorf("host 1 at retry period: excluded %v, 1 ns later %v; want true, false", p.Excluded(at, 1), p.Excluded(at+1, 1))
	}
}

// TestLatencyAwareThreshold: a host at exactly 2 x the minimum stays in,
// one nanosecond more is excluded (average <= (long)(2.0 x min)).
func TestLatencyAwareThreshold(t *testing.T) {
	p := NewLatencyAware(config(1))
	feed(p, 0, ms, 50, ms, ms)
	feed(p, 1, ms, 50, ms, ms)
	p.advance(100 * ms)
	p.min = int64(ms)
	p.hosts[1].average = int64(2 * ms)
	if p.Excluded(100*ms, 1) {
		t.Error("host at 2 x min excluded")
	}
	p.hosts[1].average++
	if !p.Excluded(100*ms, 1) {
		t.Error("host above 2 x min not excluded")
	}
}

// TestLatencyAwareLazyTick: the updater's minimum comes from the latest
// tick at which a host qualified, even when no call came then. Host 0's
// 50 latencies end at 1.05 s; the next call is at 20 s, when its average
// is too old; at the tick of 11.0 s it was not, so the minimum is its
// average, as the source's timer would have left it.
func TestLatencyAwareLazyTick(t *testing.T) {
	p := NewLatencyAware(config(1))
	feed(p, 0, 3*ms, 50, time.Second+ms, ms)
	if p.min != -1 {
		t.Fatalf("min %d before a tick", p.min)
	}
	p.Excluded(20*time.Second, 1)
	if p.min != p.hosts[0].average || p.min <= 0 {
		t.Errorf("min = %d, want host 0's average %d", p.min, p.hosts[0].average)
	}
}

// TestIgnoresError: the Java driver's fast errors.
func TestIgnoresError(t *testing.T) {
	for code, want := range map[int]bool{0x1000: true, 0x1001: true, 0x1002: true, 0x2000: true, 0x2200: true, 0x2500: true,
		0x0000: false, 0x1100: false, 0x1200: false, 0x1300: false} {
		if IgnoresError(code) != want {
			t.Errorf("IgnoresError(%#x) = %v", code, !want)
		}
	}
}
