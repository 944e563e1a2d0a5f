package peers

import (
	"math/rand/v2"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// LatencyAwareSettings are LatencyAwarePolicy's parameters; the defaults
// (DefaultLatencyAwareSettings) are the same in the three sources.
type LatencyAwareSettings struct {
	ExclusionThreshold float64       // a host is excluded above this x the fastest host's average (2.0)
	Scale              time.Duration // the average's time scale (100 ms)
	RetryPeriod        time.Duration // an average older than this is ignored (10 s)
	UpdateRate         time.Duration // how often the fastest average is recomputed (100 ms)
	MinMeasure         int64         // latencies a host needs before it can be excluded or be the fastest (50)
}

// DefaultLatencyAwareSettings returns the sources' defaults: threshold 2.0,
// scale 100 ms, retry period 10 s, update rate 100 ms, 50 measurements.
func DefaultLatencyAwareSettings() LatencyAwareSettings {
	return LatencyAwareSettings{
		ExclusionThreshold: 2.0,
		Scale:              100 * time.Millisecond,
		RetryPeriod:        10 * time.Second,
		UpdateRate:         100 * time.Millisecond,
		MinMeasure:         50,
	}
}

// LatencyAware is a port of LatencyAwarePolicy over token-aware round robin
// with shuffled replicas, from:
//
//   - the DataStax C++ driver, github.com/datastax/cpp-driver master at
//     6bc16491bfb418fe9f16c9228ae0918d40262edf (2.17.1+6):
//     src/latency_aware_policy.cpp (the plan and the updater),
//     src/host.cpp (Host::LatencyTracker::update), src/host.hpp (the
//     tracker's threshold, 30 % of the minimum measurements),
//     src/token_aware_policy.cpp (replicas shuffled, then the child's
//     plan) and src/execution_profile.hpp (the chain: LatencyAwarePolicy
//     over TokenAwarePolicy over DC-aware round robin);
//   - the DataStax Java driver 3.x, github.com/datastax/java-driver branch
//     3.x at edbccdeaa60b3328b8bfe09fbc8401e44b68ef9f:
//     driver-core/src/main/java/com/datastax/driver/core/policies/LatencyAwarePolicy.java
//     (the same rules; the ignored "fast" errors, IgnoresError);
//   - checked against the ScyllaDB Rust driver, github.com/scylladb/scylla-rust-driver
//     main at f01af256479da534578afbfbbdd650f7f4d72670 (v1.8.0+54):
//     scylla/src/policies/load_balancing/default.rs, mod latency_awareness.
//
// The rule: every host keeps a timestamped average of its latencies
// (tsAverage.add: -1 until 15 latencies, 30 % of MinMeasure; then
// (1-w) x latency + w x previous, w = ln(d+1)/d with d the time since the
// previous latency over Scale). Every UpdateRate the updater takes the
// least average among hosts with at least MinMeasure latencies, the latest
// less than RetryPeriod old, as the minimum (kept when no host qualifies).
// A query's plan is its replicas shuffled (the C++ token-aware policy's
// default), then the rest of the child plan; a host is excluded when the
// minimum is known, it has at least MinMeasure latencies, its latest is at
// most RetryPeriod old, and its average exceeds ExclusionThreshold x the
// minimum. Excluded hosts are skipped and come after every other host of the
// plan, in plan order. An excluded host gets no requests while others are
// up, so its average ages and after RetryPeriod it is tried again.
//
// Differences from the sources:
//
//   - No timer: the updater runs at the ticks k x UpdateRate (k >= 1) of
//     the now arguments, evaluated lazily at the first call after a tick
//     from the state at that tick (nothing changes between calls, and the
//     retry-period filter uses the tick's time), so the minimum is the one
//     the source computes; only the ticks' phase differs (the source starts
//     its timer when the policy is built).
//   - Order and Choose see a query's replicas only: Order returns how many
//     replicas are not excluded (the rest, excluded, are at the end), and
//     the caller puts the non-replica hosts of the plan between the two
//     groups, skipping excluded ones with Excluded (the ycsb-lite adapters
//     do). The shuffle draws from SelectorConfig.Rand.
//   - Done records every response time; the Java driver ignores the
//     "fast" errors (IgnoresError), which the driver adapters apply, as the
//     selector interface carries no error. The C++ driver records only
//     ROWS results (reads, not writes); the Rust driver counts from the
//     first latency (no 30 % warm-up) and its minimum ignores the retry
//     period. The Java and C++ rules are the ones ported.
//   - Java 3.x's documented chain puts TokenAwarePolicy outside
//     LatencyAwarePolicy, so its replicas come first whatever their
//     latency (latency awareness then orders only non-replicas); the port
//     follows the C++ chain, LatencyAwarePolicy outermost, as issue 42 asks.
//   - Reset is the Java driver's onDown/onRemove (the host's average is
//     forgotten).
type LatencyAware struct {
	s         LatencyAwareSettings
	scale     float64
	threshold int64 // latencies before an average exists: 30 % of MinMeasure
	rng       *rand.Rand
	hosts     []tsAverage
	min       int64         // the updater's minimum average (ns), -1 until known
	nextTick  time.Duration // the updater's next tick
}

// NewLatencyAware returns the policy with the sources' defaults; cfg.Rand
// shuffles the replicas.
func NewLatencyAware(cfg selector.SelectorConfig) *LatencyAware {
	return NewLatencyAwareWith(cfg, DefaultLatencyAwareSettings())
}

// NewLatencyAwareWith returns the policy with settings s.
func NewLatencyAwareWith(cfg selector.SelectorConfig, s LatencyAwareSettings) *LatencyAware {
	return &LatencyAware{
		s: s, scale: float64(s.Scale), threshold: 30 * s.MinMeasure / 100,
		rng: cfg.Rand, min: -1, nextTick: s.UpdateRate,
	}
}

// IgnoresError reports whether the Java driver 3.x leaves an attempt that
// ended with CQL error code out of the averages: the fast errors
// Unavailable, Overloaded, Bootstrapping, Unprepared and the query
// validation errors (syntax, unauthorized, invalid, config, already exists).
func IgnoresError(code int) bool {
	return code >= 0x1000 && code <= 0x1002 || code >= 0x2000 && code <= 0x2500
}

// advance runs the updater's ticks up to now (see the type's comment).
func (p *LatencyAware) advance(now time.Duration) {
	if now < p.nextTick {
		return
	}
	rate := p.s.UpdateRate
	last := p.nextTick + (now-p.nextTick)/rate*rate
	m := p.minAt(last)
	if m < 0 {
		// No host qualified at the last tick; the latest earlier tick
		// (since the previous run) at which one did sets the minimum.
		best := time.Duration(-1)
		for i := range p.hosts {
			h := &p.hosts[i]
			if !p.counted(h) {
				continue
			}
			limit := min(h.timestamp+p.s.RetryPeriod, last)
			if limit >= p.nextTick {
				best = max(best, p.nextTick+(limit-p.nextTick)/rate*rate)
			}
		}
		if best >= 0 {
			m = p.minAt(best)
		}
	}
	if m >= 0 {
		p.min = m
	}
	p.nextTick = last + rate
}

// counted reports whether h's average can count: known, from at least
// MinMeasure latencies.
func (p *LatencyAware) counted(h *tsAverage) bool {
	return h.set && h.average >= 0 && h.n >= p.s.MinMeasure
}

// minAt is the updater's minimum at tick t, -1 if no host qualifies.
func (p *LatencyAware) minAt(t time.Duration) int64 {
	m := int64(-1)
	for i := range p.hosts {
		h := &p.hosts[i]
		if p.counted(h) && t-h.timestamp <= p.s.RetryPeriod && (m < 0 || h.average < m) {
			m = h.average
		}
	}
	return m
}

// excluded is the plan's rule for server s at now (see the type's comment).
func (p *LatencyAware) excluded(now time.Duration, s int32) bool {
	if p.min < 0 || int(s) >= len(p.hosts) {
		return false
	}
	h := &p.hosts[s]
	if !h.set || h.n < p.s.MinMeasure || now-h.timestamp > p.s.RetryPeriod {
		return false
	}
	return h.average > int64(p.s.ExclusionThreshold*float64(p.min))
}

// Excluded reports whether server s is excluded at now: it goes after
// every host that is not.
func (p *LatencyAware) Excluded(now time.Duration, s int32) bool {
	p.advance(now)
	return p.excluded(now, s)
}

// Order shuffles replicas and moves the excluded ones to the end, in
// order; it returns how many are not excluded.
func (p *LatencyAware) Order(now time.Duration, replicas []int32) int {
	p.advance(now)
	shuffle(p.rng, replicas)
	k := 0
	for i, s := range replicas {
		if !p.excluded(now, s) {
			moveToFront(replicas[k:i+1], i-k)
			k++
		}
	}
	return k
}

// Choose returns the first replica of Order's plan.
func (p *LatencyAware) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	p.Order(now, replicas)
	return replicas[0], 0
}

// Sent does nothing: the policy counts no requests in flight.
func (p *LatencyAware) Sent(now time.Duration, _ int32) { p.advance(now) }

// Done records the response time rtt of server s.
func (p *LatencyAware) Done(now time.Duration, s int32, rtt time.Duration, _ selector.Feedback) {
	p.advance(now)
	p.hosts = grow(p.hosts, s)
	p.hosts[s].add(now, rtt, p.scale, p.threshold)
}

// Reset forgets server s's average (the Java driver's onDown, onRemove).
func (p *LatencyAware) Reset(now time.Duration, s int32) {
	p.advance(now)
	if int(s) < len(p.hosts) {
		p.hosts[s] = tsAverage{}
	}
}
