// Package core is the driver-independent part of the routing policy: the
// Murmur3 token function, the token ring and replica placement
// (SimpleStrategy and NetworkTopologyStrategy, as Cassandra places
// replicas), the C3 scoring function and the candidate orderings of the
// three strategies (C3, P2C, RoundRobin) including the busy-node rule and
// random tie-breaking. It uses host indices and plain values only; package
// internal/route builds the engine of both drivers' adapters on it.
package core
