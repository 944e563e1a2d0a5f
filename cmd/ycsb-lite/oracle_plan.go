// The oracle's plan order, shared by its gocql v1 binding (oracle.go) and
// v2 binding (oracle_v2.go, generated from oracle.go).

package main

import (
	"time"

	"github.com/tailroute/tailroute/sim"
)

// oracleCost is the oracle's rank of a simulated node (C3 §6's ORA): its
// true (queue length + 1) x mean service time, from Node.Oracle(); a host
// the cluster does not know ranks last.
func oracleCost(c *sim.Cluster, ip string) time.Duration {
	n := c.Node(ip)
	if n == nil {
		return time.Duration(1<<62 - 1)
	}
	q, st := n.Oracle()
	return time.Duration(q+1) * st
}

// splitReplicas reads a token-aware plan (next) up to its first fallback
// host (isFallback): the replicas, and that host (the zero S when the plan
// ended). S is the driver's SelectedHost; its zero value ends a plan.
func splitReplicas[S comparable](next func() S, isFallback func(S) bool) (replicas []S, pending S) {
	var zero S
	for {
		h := next()
		if h == zero {
			return replicas, zero
		}
		if isFallback(h) {
			return replicas, h
		}
		replicas = append(replicas, h)
	}
}

// oraclePlan reorders a token-aware plan (splitReplicas): the replica with
// the least cost comes first, the other replicas keep their order, and the
// rest of the plan follows unchanged.
func oraclePlan[S comparable](next func() S, isFallback func(S) bool, cost func(S) time.Duration) func() S {
	var zero S
	replicas, pending := splitReplicas(next, isFallback)
	if len(replicas) > 1 {
		best, bestCost := 0, cost(replicas[0])
		for i := 1; i < len(replicas); i++ {
			if c := cost(replicas[i]); c < bestCost {
				best, bestCost = i, c
			}
		}
		replicas[0], replicas[best] = replicas[best], replicas[0]
	}
	i := 0
	return func() S {
		if i < len(replicas) {
			i++
			return replicas[i-1]
		}
		if pending != zero {
			h := pending
			pending = zero
			return h
		}
		return next()
	}
}
