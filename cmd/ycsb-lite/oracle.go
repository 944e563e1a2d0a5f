package main

import (
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/sim"
)

// oraclePolicy is the ORA baseline of C3 §6: it knows each simulated
// node's true instantaneous queue length and service time (Node.Oracle())
// and sends the request to the replica with the least (q+1) x service time
// (q/mu with one added so idle replicas are still ranked by speed). Replica
// sets come from gocql's token-aware policy; the rest of the plan is the
// token-aware order.
type oraclePolicy struct {
	gocql.HostSelectionPolicy // token-aware over a marked round robin
	cluster                   *sim.Cluster
}

func newOraclePolicy(c *sim.Cluster) *oraclePolicy {
	return &oraclePolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(markedFallback{gocql.RoundRobinHostPolicy()}),
		cluster:             c,
	}
}

// markedFallback wraps the token-aware policy's fallback so the oracle can
// tell replicas (returned first, unmarked) from fallback hosts.
type markedFallback struct{ gocql.HostSelectionPolicy }

type fallbackHost struct{ gocql.SelectedHost }

func (m markedFallback) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := m.HostSelectionPolicy.Pick(q)
	return func() gocql.SelectedHost {
		h := next()
		if h == nil {
			return nil
		}
		return fallbackHost{h}
	}
}

func (o *oraclePolicy) cost(h gocql.SelectedHost) time.Duration {
	n := o.cluster.Node(h.Info().ConnectAddress().String())
	if n == nil {
		return time.Duration(1<<62 - 1)
	}
	q, st := n.Oracle()
	return time.Duration(q+1) * st
}

// takeReplicas reads a token-aware plan over markedFallback up to its
// first fallback host: the replicas, and that host (nil when the plan ended).
func takeReplicas(next gocql.NextHost) (replicas []gocql.SelectedHost, pending gocql.SelectedHost) {
	for {
		h := next()
		if h == nil {
			return replicas, nil
		}
		if _, fb := h.(fallbackHost); fb {
			return replicas, h
		}
		replicas = append(replicas, h)
	}
}

// Pick puts the cheapest replica first.
func (o *oraclePolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := o.HostSelectionPolicy.Pick(q)
	replicas, pending := takeReplicas(next)
	if len(replicas) > 1 {
		best, bestCost := 0, o.cost(replicas[0])
		for i := 1; i < len(replicas); i++ {
			if c := o.cost(replicas[i]); c < bestCost {
				best, bestCost = i, c
			}
		}
		replicas[0], replicas[best] = replicas[best], replicas[0]
	}
	i := 0
	return func() gocql.SelectedHost {
		if i < len(replicas) {
			i++
			return replicas[i-1]
		}
		if pending != nil {
			h := pending
			pending = nil
			return h
		}
		return next()
	}
}
