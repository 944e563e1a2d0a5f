package main

import (
	"errors"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute/sim"
)

// oraclePolicyV2 is oraclePolicy for the v2 driver: v2's token-aware policy
// over a marked round robin, reordered by oraclePlan.
type oraclePolicyV2 struct {
	gocql2.HostSelectionPolicy
	cluster *sim.Cluster
}

func oracleV2(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
	if env.cluster == nil {
		return installedV2{}, errors.New("policy oracle needs the embedded simulated cluster (omit -hosts)")
	}
	cfg.PoolConfig.HostSelectionPolicy = &oraclePolicyV2{
		HostSelectionPolicy: gocql2.TokenAwareHostPolicy(markedFallbackV2{gocql2.RoundRobinHostPolicy()}),
		cluster:             env.cluster,
	}
	return installedV2{}, nil
}

// markedFallbackV2 marks the hosts of the token-aware policy's fallback.
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

func isFallbackV2(h gocql2.SelectedHost) bool {
	_, fb := h.(fallbackHostV2)
	return fb
}

func (o *oraclePolicyV2) cost(h gocql2.SelectedHost) time.Duration {
	return oracleCost(o.cluster, h.Info().ConnectAddress().String())
}

// Pick puts the cheapest replica first (oraclePlan).
func (o *oraclePolicyV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	return oraclePlan(o.HostSelectionPolicy.Pick(q), isFallbackV2, o.cost)
}
