// Code generated from datastax.go by TestGeneratedV2 (gen_v2_test.go); DO NOT EDIT.

// The datastax policy's binding to the v2 driver: dsCore (datastax_core.go, the
// rule in internal/peers.DataStax) as a gocql2.HostSelectionPolicy, its
// observer and wiring.

package main

import (
	"context"
	"sync/atomic"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
)

// datastaxPolicyV2 is dsCore (the DataStax Java driver 4.x default policy's
// port, peers.DataStax) bound to the v2 driver: replicas from the driver's
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

func (p *datastaxPolicyV2) key(h gocql2.SelectedHost) string { return hostKey(h.Info()) }

func (p *datastaxPolicyV2) wrap(h gocql2.SelectedHost, id int32, at time.Duration) gocql2.SelectedHost {
	return &dsSelectedV2{SelectedHost: h, p: p, id: id, at: at}
}

// Pick returns the query plan (dsQueryPlan): ordered replicas, then the
// fallback's hosts.
func (p *datastaxPolicyV2) Pick(q gocql2.ExecutableStatement) gocql2.NextHost {
	return dsQueryPlan(p.dsCore, p.HostSelectionPolicy.Pick(q), isFallbackV2, p.key, p.wrap)
}

// dsSelectedV2 is a handed-out host (its index id, handed out at at); its
// Mark is dsCore.marked.
type dsSelectedV2 struct {
	gocql2.SelectedHost
	p    *datastaxPolicyV2
	id   int32
	at   time.Duration
	done atomic.Bool
}

func (d *dsSelectedV2) Mark(err error) {
	d.p.marked(d.id, d.at, &d.done)
	d.SelectedHost.Mark(err)
}

// reset is the rule's Reset of a host (see dsCore).
func (p *datastaxPolicyV2) reset(h *gocql2.HostInfo) { p.resetKey(hostKey(h)) }

func (p *datastaxPolicyV2) HostUp(h *gocql2.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostUp(h)
}

func (p *datastaxPolicyV2) HostDown(h *gocql2.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostDown(h)
}

func (p *datastaxPolicyV2) RemoveHost(h *gocql2.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.RemoveHost(h)
}

// dsObserverV2 is the query observer wireDatastaxV2 chains in.
type dsObserverV2 struct {
	p    *datastaxPolicyV2
	next gocql2.QueryObserver
}

func (o dsObserverV2) ObserveQuery(ctx context.Context, q gocql2.ObservedQuery) {
	if q.Host != nil {
		o.p.observe(hostKey(q.Host), q.End.Sub(q.Start), noResponse(ctx, q.Err, gocql2.ErrTimeoutNoResponse))
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wireDatastaxV2 installs p and its observer (chained before any observer
// already set) into cfg; the session's timeout bounds orphans.
func wireDatastaxV2(cfg *gocql2.ClusterConfig, p *datastaxPolicyV2) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = dsObserverV2{p: p, next: cfg.QueryObserver}
	p.wired(cfg.Timeout)
}
