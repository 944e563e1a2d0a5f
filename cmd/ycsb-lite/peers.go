// The peer ports' binding to gocql v1: a peerCore (internal/peers, through
// peers_plan.go) as a gocql.HostSelectionPolicy, its observer and wiring.
// peers_v2.go is generated from this file (gen_v2_test.go).

package main

import (
	"context"

	"github.com/gocql/gocql"
)

// peerPolicy is a peer port bound to gocql v1: replicas from the driver's
// token-aware policy over a marked round robin of the local DC (every host
// when localDC is ""), ordered by the port (peerPlan).
type peerPolicy struct {
	gocql.HostSelectionPolicy // replica source: token-aware over a marked fallback
	*peerState
}

func newPeerPolicy(localDC string, s *peerState) *peerPolicy {
	return &peerPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(markedFallback{roundRobin(localDC)}),
		peerState:           s,
	}
}

func (p *peerPolicy) key(h gocql.SelectedHost) string { return hostKey(h.Info()) }

// Pick returns the port's query plan (peerPlan).
func (p *peerPolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	return peerPlan(p.peerState, p.HostSelectionPolicy.Pick(q), isFallbackV1, p.key)
}

func (p *peerPolicy) HostUp(h *gocql.HostInfo) {
	p.up(hostKey(h))
	p.HostSelectionPolicy.HostUp(h)
}

func (p *peerPolicy) HostDown(h *gocql.HostInfo) {
	p.reset(hostKey(h))
	p.HostSelectionPolicy.HostDown(h)
}

func (p *peerPolicy) RemoveHost(h *gocql.HostInfo) {
	p.reset(hostKey(h))
	p.HostSelectionPolicy.RemoveHost(h)
}

// peerObserver is the query observer wirePeer chains in: it ends each
// attempt in the port.
type peerObserver struct {
	p    *peerPolicy
	next gocql.QueryObserver
}

func (o peerObserver) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if q.Host != nil {
		o.p.observe(hostKey(q.Host), q.End.Sub(q.Start), q.Err)
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wirePeer installs p and its observer (chained before any observer
// already set) into cfg.
func wirePeer(cfg *gocql.ClusterConfig, p *peerPolicy) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = peerObserver{p: p, next: cfg.QueryObserver}
}
