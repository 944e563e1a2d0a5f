// Code generated from oracle.go by TestGeneratedV2 (gen_v2_test.go); DO NOT EDIT.

package main

import (
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute/sim"
)

// oraclePolicyV2 is the ORA baseline of C3 §6: it knows each simulated
// node's true instantaneous queue length and service time (Node.Oracle())
// and sends the request to the replica with the least (q+1) x service time
// (q/mu with one added so idle replicas are still ranked by speed). Replica
// sets come from gocql's token-aware policy; the rest of the plan is the
// token-aware order. Bound to the v2 driver.
type oraclePolicyV2 struct {
	gocql2.HostSelectionPolicy // token-aware over a marked round robin
	cluster                    *sim.Cluster
}

func newOraclePolicyV2(c *sim.Cluster) *oraclePolicyV2 {
	return &oraclePolicyV2{
		HostSelectionPolicy: gocql2.TokenAwareHostPolicy(markedFallbackV2{gocql2.RoundRobinHostPolicy()}),
		cluster:             c,
	}
}

// markedFallbackV2 wraps the token-aware policy's fallback so the oracle can
// tell replicas (returned first, unmarked) from fallback hosts.
type markedFallbackV2 struct{ gocql2.HostSelectionPolicy }

type fallbackHostV2 struct{ gocql2.SelectedHost }

func (m markedFallbackV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	next := m.HostSelectionPolicy.Pick(q)
	return func() gocql2.SelectedHost {
		h := next()
		if h == nil {
			return nil
		}
		return fallbackHostV2{h}
	}
}

func (o *oraclePolicyV2) cost(h gocql2.SelectedHost) time.Duration {
	return oracleCost(o.cluster, h.Info().ConnectAddress().String())
}

func isFallbackV2(h gocql2.SelectedHost) bool {
	_, fb := h.(fallbackHostV2)
	return fb
}

// Pick puts the cheapest replica first (oraclePlan).
func (o *oraclePolicyV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	return oraclePlan(o.HostSelectionPolicy.Pick(q), isFallbackV2, o.cost)
}
