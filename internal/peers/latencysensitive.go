package peers

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// LatencySensitive is a port of autodeskcloud's
// LatencySensitiveLoadBalancingPolicy for the DataStax Java driver 4.x
// (LatencySensitiveLoadBalancingPolicy.java and NodeLatencyTracker.java of
// github.com/autodeskcloud/java-driver-policies main at
// c37a14c198fee1ccb7d90edd5b0d3ef1c1012a4b).
//
// The rule: every host keeps the Java drivers' timestamped average of its
// latencies (tsAverage: -1 until 100 latencies, scale 100 ms), fed by every
// response and node error. A query's live local replicas are shuffled; with
// three or more, the first two swap when the first's average is higher than
// the second's and was updated less than 10 s ago (RETRY_PERIOD). With two
// replicas the shuffle is the whole rule. The rest of the local DC follows
// round robin (the adapters' fallback).
//
// Differences from the source:
//
//   - The driver 4.x default policy's newly-up rule (a replica up for less
//     than a minute moves back with probability 3/4) is in the source's
//     code but never acts: the class declares its own empty upTimes map,
//     shadowing the one the parent's onUp fills. It is left out.
//   - Order and Choose see the replicas only; DC failover is not ported.
//   - Randomness from SelectorConfig.Rand; time from the now arguments.
//   - Reset does nothing (the source's averages outlive a node's downtime).
type LatencySensitive struct {
	javaLatencies
}

// NewLatencySensitive returns the policy; cfg.Rand shuffles the replicas.
func NewLatencySensitive(cfg selector.SelectorConfig) *LatencySensitive {
	return &LatencySensitive{javaLatencies{rng: cfg.Rand, retry: 10 * time.Second}}
}

// Order applies the rule to replicas in place; it returns len(replicas).
func (p *LatencySensitive) Order(now time.Duration, replicas []int32) int {
	shuffle(p.rng, replicas)
	if len(replicas) > 2 {
		p.swapSlower(now, replicas, 0, 1)
	}
	return len(replicas)
}

// Choose returns the first replica of Order's plan.
func (p *LatencySensitive) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	p.Order(now, replicas)
	return replicas[0], 0
}

// Sent does nothing: the policy counts no requests in flight.
func (p *LatencySensitive) Sent(time.Duration, int32) {}

// Done records server s's response time rtt.
func (p *LatencySensitive) Done(now time.Duration, s int32, rtt time.Duration, _ selector.Feedback) {
	p.record(now, s, rtt)
}

// Reset does nothing (see the type's comment).
func (p *LatencySensitive) Reset(time.Duration, int32) {}
