package peers

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

const ms = time.Millisecond

func config(seed uint64) selector.SelectorConfig {
	return selector.SelectorConfig{Rand: rand.New(rand.NewPCG(seed, 1)), Clients: 1}
}

// feed records n latencies of lat for server s, one every step from start;
// it returns the time of the last.
func feed(p selector.Selector, s int32, lat time.Duration, n int, start, step time.Duration) time.Duration {
	t := start
	for i := range n {
		t = start + time.Duration(i)*step
		p.Sent(t, s)
		p.Done(t, s, lat, selector.Feedback{})
	}
	return t
}

type orderer interface {
	selector.Selector
	Order(now time.Duration, replicas []int32) int
}

// firsts counts, over trials plans of replicas at now, which server comes
// first.
func firsts(p orderer, now time.Duration, replicas []int32, trials int) map[int32]int {
	out := map[int32]int{}
	r := make([]int32, len(replicas))
	for range trials {
		copy(r, replicas)
		p.Order(now, r)
		out[r[0]]++
	}
	return out
}

// TestNoAllocations: once every server has been seen, Choose, Sent and
// Done allocate nothing, for every port.
func TestNoAllocations(t *testing.T) {
	for name, p := range map[string]selector.Selector{
		"latencyaware": NewLatencyAware(config(1)), "peakewma": NewPeakEWMA(config(1)),
		"latencysensitive": NewLatencySensitive(config(1)), "latencyinflight": NewLatencyInflight(config(1)),
		"datastax": NewDataStax(config(1)), "rackaware": NewRackAware(config(1)),
	} {
		replicas := []int32{4, 0, 2}
		now := time.Duration(0)
		step := func() {
			now += ms
			s, _ := p.Choose(now, replicas)
			p.Sent(now, s)
			p.Done(now+ms/2, s, ms, selector.Feedback{})
		}
		for s := range int32(5) {
			feed(p, s, ms, 1, now, 0)
		}
		for range 200 {
			step()
		}
		if a := testing.AllocsPerRun(100, step); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

// TestDeterministic: the same seed and calls give the same choices.
func TestDeterministic(t *testing.T) {
	run := func(newP func(selector.SelectorConfig) selector.Selector) []int32 {
		p := newP(config(7))
		var out []int32
		for i := range 300 {
			now := time.Duration(i) * ms
			s, _ := p.Choose(now, []int32{0, 1, 2})
			p.Sent(now, s)
			p.Done(now, s, time.Duration(1+s)*ms, selector.Feedback{})
			out = append(out, s)
		}
		return out
	}
	for name, newP := range map[string]func(selector.SelectorConfig) selector.Selector{
		"latencyaware":     func(c selector.SelectorConfig) selector.Selector { return NewLatencyAware(c) },
		"peakewma":         func(c selector.SelectorConfig) selector.Selector { return NewPeakEWMA(c) },
		"latencysensitive": func(c selector.SelectorConfig) selector.Selector { return NewLatencySensitive(c) },
		"latencyinflight":  func(c selector.SelectorConfig) selector.Selector { return NewLatencyInflight(c) },
		"datastax":         func(c selector.SelectorConfig) selector.Selector { return NewDataStax(c) },
		"rackaware":        func(c selector.SelectorConfig) selector.Selector { return NewRackAware(c) },
	} {
		if a, b := run(newP), run(newP); !slices.Equal(a, b) {
			t.Errorf("%s: two runs with one seed differ", name)
		}
	}
}
