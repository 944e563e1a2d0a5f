// Package core is the driver-independent part of the routing policy: the
// Murmur3 token function, the token ring and replica placement
// (SimpleStrategy and NetworkTopologyStrategy, computed the same way gocql
// v1.7.0 does), the C3 scoring function and the candidate orderings of the
// three strategies (C3, P2C, RoundRobin) including the busy-node rule and
// random tie-breaking. It uses host indices and plain values only, so that
// adapters for other drivers can reuse it; package policy is the gocql
// adapter.
package core
