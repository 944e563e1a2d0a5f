// The datastax policy's -driver v2 adapter: dsCore (datastax_core.go) as a
// github.com/apache/cassandra-gocql-driver/v2 HostSelectionPolicy, its
// observer and wiring, mirroring the v1 adapter (datastax.go).

package main

import (
	"context"
	"sync/atomic"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
)

// datastaxPolicyV2 is dsCore for the v2 driver: replicas from v2's
// token-aware policy over a marked round robin of the local DC.
type datastaxPolicyV2 struct {
	gocql2.HostSelectionPolicy // replica source: token-aware over a marked fallback
	*dsCore
}

// newDatastaxPolicyV2 returns the policy; localDC "" treats every host as
// local. seed fixes the replica shuffle.
func newDatastaxPolicyV2(localDC string, seed int64) *datastaxPolicyV2 {
	return &datastaxPolicyV2{
		HostSelectionPolicy: gocql2.TokenAwareHostPolicy(markedFallbackV2{roundRobinV2(localDC)}),
		dsCore:              newDSCore(seed),
	}
}

func (p *datastaxPolicyV2) selected(h gocql2.SelectedHost) *dsHost {
	return p.state(hostKey(h.Info()))
}

func (p *datastaxPolicyV2) wrap(h gocql2.SelectedHost, s *dsHost) gocql2.SelectedHost {
	return &dsSelectedV2{SelectedHost: h, c: p.dsCore, s: s}
}

// Pick returns the query plan (dsQueryPlan): ordered replicas, then the
// fallback's hosts.
func (p *datastaxPolicyV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	return dsQueryPlan(p.dsCore, p.HostSelectionPolicy.Pick(q), isFallbackV2, p.selected, p.wrap)
}

// dsSelectedV2 is a handed-out host; its Mark is dsCore.marked.
type dsSelectedV2 struct {
	gocql2.SelectedHost
	c    *dsCore
	s    *dsHost
	done atomic.Bool
}

func (d *dsSelectedV2) Mark(err error) {
	d.c.marked(d.s, &d.done)
	d.SelectedHost.Mark(err)
}

// HostUp, HostDown and RemoveHost forget the host's in-flight count (see
// dsCore).
func (p *datastaxPolicyV2) HostUp(h *gocql2.HostInfo) {
	p.resetKey(hostKey(h))
	p.HostSelectionPolicy.HostUp(h)
}

func (p *datastaxPolicyV2) HostDown(h *gocql2.HostInfo) {
	p.resetKey(hostKey(h))
	p.HostSelectionPolicy.HostDown(h)
}

func (p *datastaxPolicyV2) RemoveHost(h *gocql2.HostInfo) {
	p.resetKey(hostKey(h))
	p.HostSelectionPolicy.RemoveHost(h)
}

// dsObserverV2 is the query observer wireDatastaxV2 chains in.
type dsObserverV2 struct {
	c    *dsCore
	next gocql2.QueryObserver
}

func (o dsObserverV2) ObserveQuery(ctx context.Context, q gocql2.ObservedQuery) {
	if q.Host != nil {
		o.c.observe(hostKey(q.Host), q.End.Sub(q.Start), noResponse(ctx, q.Err, gocql2.ErrTimeoutNoResponse))
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wireDatastaxV2 installs p and its observer (chained before any observer
// already set) into cfg; the session's timeout bounds orphans.
func wireDatastaxV2(cfg *gocql2.ClusterConfig, p *datastaxPolicyV2) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = dsObserverV2{c: p.dsCore, next: cfg.QueryObserver}
	p.wired(cfg.Timeout)
}

// datastaxV2 installs the policy for -driver v2, with -local-dc.
func datastaxV2(env policyEnv, cfg *gocql2.ClusterConfig) (installedV2, error) {
	wireDatastaxV2(cfg, newDatastaxPolicyV2(env.localDC, env.seed))
	return installedV2{}, nil
}
