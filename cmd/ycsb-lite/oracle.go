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
// token-aware order. Bound to gocql v1.
// oracle_v2.go is generated from this file (gen_v2_test.go).
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
	return oracleCost(o.cluster, h.Info().ConnectAddress().String())
}

func isFallbackV1(h gocql.SelectedHost) bool {
	_, fb := h.(fallbackHost)
	return fb
}

// Pick puts the cheapest replica first (oraclePlan).
func (o *oraclePolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	return oraclePlan(o.HostSelectionPolicy.Pick(q), isFallbackV1, o.cost)
}
