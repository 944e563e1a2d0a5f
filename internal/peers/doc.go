// Package peers holds driver-free ports of the strongest latency-aware
// host selection policies that other Cassandra drivers and load balancers
// ship, so tailroute is measured against them and not only against the Go
// drivers' defaults (issue 42):
//
//   - LatencyAware: the DataStax Java driver 3.x and C++ driver
//     LatencyAwarePolicy (also the ScyllaDB Rust driver's latency
//     awareness), over token-aware round robin with shuffled replicas
//     (latencyaware.go);
//   - PeakEWMA: Peak-EWMA load with power of two choices, as Rust's
//     tower (tower::load::PeakEwma with tower::balance::p2c) and Finagle
//     (P2CPeakEwma) have it (peakewma.go);
//   - LatencySensitive and LatencyInflight: the two Java driver 4.x policies
//     of autodeskcloud/java-driver-policies, LatencySensitiveLoadBalancingPolicy
//     and LatencyAndInflightCountLoadBalancingPolicy (latencysensitive.go,
//     latencyinflight.go), which share the Java drivers' timestamped latency
//     average (tracker.go);
//   - DataStax: the DataStax Java driver 4.x DefaultLoadBalancingPolicy
//     (replicas shuffled, busy ones last, two choices by in flight), the
//     ycsb-lite datastax policy's rule (datastax.go);
//   - RackAware: gocql's TokenAwareHostPolicy(RackAwareRoundRobinPolicy),
//     the static zone preference tailroute's zone rule is measured
//     against (issue 43; rackaware.go).
//
// Each type implements selector.Selector (Choose, Sent, Done) for the
// virtual-time simulator, and also Order, which sorts a query's whole
// replica list as the source's query plan would (the ycsb-lite driver
// adapters need the plan, not one host), and Reset, what the source does
// when a host goes down or is removed.
//
// Every port is deterministic and virtual-time friendly: randomness comes
// only from selector.SelectorConfig.Rand, time only from the now arguments
// (no clock, goroutine or timer: a periodic task of the source runs lazily
// at its ticks, see LatencyAware), and no call allocates once a host has
// been seen (per-host state lives in slices indexed by server, grown when a
// new index appears). A type is not safe for concurrent use: the simulator
// calls it from one goroutine, the driver adapters under a lock.
//
// Each port's doc comment cites the source file and revision it follows and
// lists every difference from it.
package peers

import "github.com/tailroute/tailroute/internal/selector"

var (
	_ selector.Selector = (*LatencyAware)(nil)
	_ selector.Selector = (*PeakEWMA)(nil)
	_ selector.Selector = (*LatencySensitive)(nil)
	_ selector.Selector = (*LatencyInflight)(nil)
	_ selector.Selector = (*DataStax)(nil)
	_ selector.Selector = (*RackAware)(nil)
)
