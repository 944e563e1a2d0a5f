package main

import (
	"errors"
	"math/rand/v2"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/peers"
	"github.com/tailroute/tailroute/internal/selector"
)

// The latency-aware peers of issue 42: the ports of internal/peers, each
// bound to both drivers through peers.go (peers_v2.go), and gocql's
// rack-aware round robin.
func init() {
	registerPeer("latencyaware", "port of LatencyAwarePolicy (DataStax C++/Java 3.x, ScyllaDB Rust): replicas shuffled, a host averaging > 2x the fastest goes last for 10 s",
		func(c selector.SelectorConfig) peerCore { return peers.NewLatencyAware(c) }, latencyAwareIgnores)
	registerPeer("peakewma", "port of tower/Finagle Peak-EWMA with power of two choices over the replicas: cost = peak-sensitive EWMA of RTT x (pending+1)",
		func(c selector.SelectorConfig) peerCore { return peers.NewPeakEWMA(c) }, nil)
	registerPeer("latency-sensitive", "port of autodeskcloud LatencySensitiveLoadBalancingPolicy (Java driver 4.x): shuffled replicas, the first two by latency average",
		func(c selector.SelectorConfig) peerCore { return peers.NewLatencySensitive(c) }, nil)
	registerPeer("latency-inflight", "port of autodeskcloud LatencyAndInflightCountLoadBalancingPolicy (Java driver 4.x): slow replicas back by latency, P2C on in-flight",
		func(c selector.SelectorConfig) peerCore { return peers.NewLatencyInflight(c) }, nil)

	registerPolicy(policySpec{
		name:    "rack-aware",
		help:    "gocql TokenAwareHostPolicy over RackAwareRoundRobinPolicy; embedded cluster only: local DC -local-dc or the first node's, local rack the first node's",
		simOnly: true,
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			dc, rack, err := localRack(env)
			cfg.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RackAwareRoundRobinPolicy(dc, rack))
			return installed{}, err
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			dc, rack, err := localRack(env)
			cfg.PoolConfig.HostSelectionPolicy = gocql2.TokenAwareHostPolicy(gocql2.RackAwareRoundRobinPolicy(dc, rack))
			return installed{}, err
		},
	})
}

// registerPeer registers a peer port: newCore builds one client's core,
// ignore (may be nil) leaves attempts out of its measurements.
func registerPeer(name, help string, newCore func(selector.SelectorConfig) peerCore, ignore func(error) bool) {
	state := func(env policyEnv) *peerState {
		rng := rand.New(rand.NewPCG(uint64(env.seed), uint64(env.client)))
		return newPeerState(newCore(selector.SelectorConfig{Rand: rng, Clients: env.clients}), ignore)
	}
	registerPolicy(policySpec{
		name: name,
		help: help,
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			wirePeer(cfg, newPeerPolicy(env.localDC, state(env)))
			return installed{}, nil
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			wirePeerV2(cfg, newPeerPolicyV2(env.localDC, state(env)))
			return installed{}, nil
		},
	})
}

// localRack is rack-aware's local DC and rack: -local-dc, else the first
// node's DC, and the first node's rack (rack1). Without -racks the
// embedded cluster has one rack per DC, so every local node is in the
// local rack; in the zone scenarios rack1 is the clients' rack, except in
// zones-spread, where it is right for one client in three.
func localRack(env policyEnv) (dc, rack string, err error) {
	if env.cluster == nil || len(env.cluster.Nodes()) == 0 {
		return "", "", errRackAwareNeedsSim
	}
	first := env.cluster.Nodes()[0]
	dc = env.localDC
	if dc == "" {
		dc = first.DC()
	}
	return dc, first.Rack(), nil
}

var errRackAwareNeedsSim = errors.New("policy rack-aware needs the embedded simulated cluster (omit -hosts): ycsb-lite has no local-rack flag")
