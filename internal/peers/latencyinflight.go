package peers

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// LatencyInflight is a port of autodeskcloud's
// LatencyAndInflightCountLoadBalancingPolicy for the DataStax Java driver
// 4.x (LatencyAndInflightCountLoadBalancingPolicy.java and
// NodeLatencyTracker.java of github.com/autodeskcloud/java-driver-policies
// main at c37a14c198fee1ccb7d90edd5b0d3ef1c1012a4b).
//
// The rule: every host keeps the Java drivers' timestamped average of its
// latencies (tsAverage: -1 until 100 latencies, scale 100 ms), fed by every
// response and node error. A query's live local replicas are shuffled; with
// two that is all. With three or more:
//
//   - when a replica came up less than a minute ago (Up), the most recent
//     one, if it is first or second, moves to the end of the replicas with
//     probability 3/4 (the driver 4.x default policy's newly-up rule);
//   - otherwise the slow replicas bubble back by average: with three,
//     compare-and-swap (0,1), (1,2), (0,1); with more, (0,1), (1,2), (2,3),
//     then (0,1), (1,2); a pair swaps when the first's average is higher and
//     was updated less than 2 s ago (its RETRY_PERIOD);
//   - then the first two swap when the first has more requests in flight
//     (power of two choices, as the default policy).
//
// The rest of the local DC follows round robin (the adapters' fallback).
//
// Differences from the source:
//
//   - In flight is the client's own count, Sent to Done; the driver reads
//     its connection pool's in-flight stream ids, which stay taken after a
//     client timeout until the node answers.
//   - Order and Choose see the replicas only; DC failover is not ported.
//   - Randomness from SelectorConfig.Rand (the source's dice roll is
//     ThreadLocalRandom); time from the now arguments; a node's up time comes
//     from Up, which the driver adapters call on the driver's HostUp (the
//     simulator has no such event, so there the rule never acts).
//   - Reset (a node down or removed) zeroes its in-flight count, as the
//     driver closes its pool; its average is kept, as in the source.
type LatencyInflight struct {
	javaLatencies
	inFlight []int32
	up       []time.Duration // when a host last came up, +1 (0: never seen up)
}

// newlyUp is the default policy's NEWLY_UP_INTERVAL.
const newlyUp = time.Minute

// NewLatencyInflight returns the policy; cfg.Rand shuffles the replicas and
// rolls the newly-up rule's die.
func NewLatencyInflight(cfg selector.SelectorConfig) *LatencyInflight {
	return &LatencyInflight{javaLatencies: javaLatencies{rng: cfg.Rand, retry: 2 * time.Second}}
}

func (p *LatencyInflight) flying(s int32) int32 {
	if int(s) < len(p.inFlight) {
		return p.inFlight[s]
	}
	return 0
}

// newest returns the replica that came up most recently, less than a
// minute before now, or -1.
func (p *LatencyInflight) newest(now time.Duration, r []int32) int32 {
	best, at := int32(-1), time.Duration(-1)
	for _, s := range r {
		if int(s) < len(p.up) && p.up[s] > 0 {
			if t := p.up[s] - 1; now-t < newlyUp && t > at {
				best, at = s, t
			}
		}
	}
	return best
}

// Order applies the rule to replicas in place; it returns len(replicas).
func (p *LatencyInflight) Order(now time.Duration, r []int32) int {
	shuffle(p.rng, r)
	n := len(r)
	if n <= 2 {
		return n
	}
	switch up := p.newest(now, r); {
	case up < 0 && n == 3:
		p.swapSlower(now, r, 0, 1)
		p.swapSlower(now, r, 1, 2)
		p.swapSlower(now, r, 0, 1)
	case up < 0:
		for i := range 3 {
			p.swapSlower(now, r, i, i+1)
		}
		for i := range 2 {
			p.swapSlower(now, r, i, i+1)
		}
	case (up == r[0] || up == r[1]) && p.rng.IntN(4) != 1:
		i := 0
		if up == r[1] {
			i = 1
		}
		copy(r[i:], r[i+1:]) // bubbleDown to the last replica
		r[n-1] = up
	}
	if p.flying(r[0]) > p.flying(r[1]) {
		r[0], r[1] = r[1], r[0]
	}
	return n
}

// Choose returns the first replica of Order's plan.
func (p *LatencyInflight) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	p.Order(now, replicas)
	return replicas[0], 0
}

// Sent counts one request in flight on server s.
func (p *LatencyInflight) Sent(_ time.Duration, s int32) {
	p.inFlight = grow(p.inFlight, s)
	p.inFlight[s]++
}

// Done ends one request in flight on server s and records its response
// time rtt.
func (p *LatencyInflight) Done(now time.Duration, s int32, rtt time.Duration, _ selector.Feedback) {
	p.inFlight = grow(p.inFlight, s)
	if p.inFlight[s] > 0 {
		p.inFlight[s]--
	}
	p.record(now, s, rtt)
}

// Up records that server s came up at now (the driver's onUp).
func (p *LatencyInflight) Up(now time.Duration, s int32) {
	p.up = grow(p.up, s)
	p.up[s] = now + 1
}

// Reset zeroes server s's in-flight count (see the type's comment).
func (p *LatencyInflight) Reset(_ time.Duration, s int32) {
	if int(s) < len(p.inFlight) {
		p.inFlight[s] = 0
	}
}
