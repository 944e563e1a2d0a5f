// Code generated from peers.go by TestGeneratedV2 (gen_v2_test.go); DO NOT EDIT.

// The peer ports' binding to the v2 driver: a peerCore (internal/peers, through
// peers_plan.go) as a gocql2.HostSelectionPolicy, its observer and wiring.

package main

import (
	"context"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
)

// peerPolicyV2 is a peer port bound to the v2 driver: replicas from the driver's
// token-aware policy over a marked round robin of the local DC (every host
// when localDC is ""), ordered by the port (peerPlan).
type peerPolicyV2 struct {
	gocql2.HostSelectionPolicy // replica source: token-aware over a marked fallback
	*peerState
}

func newPeerPolicyV2(localDC string, s *peerState) *peerPolicyV2 {
	return &peerPolicyV2{
		HostSelectionPolicy: gocql2.TokenAwareHostPolicy(markedFallbackV2{roundRobinV2(localDC)}),
		peerState:           s,
	}
}

func (p *peerPolicyV2) key(h gocql2.SelectedHost) string { return hostKey(h.Info()) }

// Pick returns the port's query plan (peerPlan).
func (p *peerPolicyV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	return peerPlan(p.peerState, p.HostSelectionPolicy.Pick(q), isFallbackV2, p.key)
}

func (p *peerPolicyV2) HostUp(h *gocql2.HostInfo) {
	p.up(hostKey(h))
	p.HostSelectionPolicy.HostUp(h)
}

func (p *peerPolicyV2) HostDown(h *gocql2.HostInfo) {
	p.reset(hostKey(h))
	p.HostSelectionPolicy.HostDown(h)
}

func (p *peerPolicyV2) RemoveHost(h *gocql2.HostInfo) {
	p.reset(hostKey(h))
	p.HostSelectionPolicy.RemoveHost(h)
}

// peerObserverV2 is the query observer wirePeerV2 chains in: it ends each
// attempt in the port.
type peerObserverV2 struct {
	p    *peerPolicyV2
	next gocql2.QueryObserver
}

func (o peerObserverV2) ObserveQuery(ctx context.Context, q gocql2.ObservedQuery) {
	if q.Host != nil {
		o.p.observe(hostKey(q.Host), q.End.Sub(q.Start), q.Err)
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wirePeerV2 installs p and its observer (chained before any observer
// already set) into cfg.
func wirePeerV2(cfg *gocql2.ClusterConfig, p *peerPolicyV2) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = peerObserverV2{p: p, next: cfg.QueryObserver}
}
