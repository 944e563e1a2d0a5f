package peers

import (
	"testing"
	"time"
)

// slowFastMid gives servers 0, 1, 2 averages of 10, 2 and 5 ms (100
// latencies each, the first average being the 100th latency); it returns
// the time of the last latency.
func slowFastMid(p orderer) time.Duration {
	feed(p, 0, 10*ms, 100, ms, ms)
	feed(p, 1, 2*ms, 100, ms, ms)
	return feed(p, 2, 5*ms, 100, ms, ms)
}

// TestLatencySensitiveOrder: with three replicas (10, 2, 5 ms) the first
// two of the shuffle swap when the first is slower: of the six shuffles,
// (1,0), (1,2), (0,1), (2,1) put host 1 first, (2,0), (0,2) host 2, and
// host 0 is never first. Once its average is 10 s old it can be first
// again; with two replicas the shuffle is the whole rule.
func TestLatencySensitiveOrder(t *testing.T) {
	p := NewLatencySensitive(config(1))
	feed(p, 0, 10*ms, 99, ms, ms)
	if h := p.hosts[0]; h.average != -1 {
		t.Fatalf("after 99 latencies: %+v, want no average", h)
	}
	p = NewLatencySensitive(config(1))
	last := slowFastMid(p)
	if h := p.hosts[0]; h.average != int64(10*ms) {
		t.Fatalf("after 100 latencies: %+v, want 10 ms", h)
	}
	got := firsts(p, last, []int32{0, 1, 2}, 600)
	if got[0] != 0 || got[1] < 330 || got[1] > 470 || got[2] < 130 || got[2] > 270 {
		t.Errorf("first replicas %v: want host 1 about 4/6, host 2 about 2/6, host 0 never", got)
	}
	if got := firsts(p, last+10*time.Second, []int32{0, 1, 2}, 600); got[0] < 130 {
		t.Errorf("first replicas with 10 s old averages %v: want host 0 about 1/3", got)
	}
	if got := firsts(p, last, []int32{0, 1}, 600); got[0] < 230 {
		t.Errorf("first of two replicas %v: want host 0 about half", got)
	}
}
