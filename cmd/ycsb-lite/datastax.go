// The datastax policy's binding to gocql v1: dsCore (datastax_core.go, the
// rule in internal/peers.DataStax) as a gocql.HostSelectionPolicy, its
// observer and wiring.
// datastax_v2.go is generated from this file (gen_v2_test.go).

//go:generate go test -run ^TestGeneratedV2$ -args -update

package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// datastaxPolicy is dsCore (the DataStax Java driver 4.x default policy's
// port, peers.DataStax) bound to gocql v1: replicas from the driver's
// token-aware policy over a marked round robin of the local DC.
type datastaxPolicy struct {
	gocql.HostSelectionPolicy // replica source: token-aware over a marked fallback
	*dsCore
}

// newDatastaxPolicy returns the policy; localDC "" treats every host as
// local. seed fixes the replica shuffle.
func newDatastaxPolicy(localDC string, seed int64) *datastaxPolicy {
	return &datastaxPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(markedFallback{roundRobin(localDC)}),
		dsCore:              newDSCore(seed),
	}
}

func (p *datastaxPolicy) key(h gocql.SelectedHost) string { return hostKey(h.Info()) }

func (p *datastaxPolicy) wrap(h gocql.SelectedHost, id int32, at time.Duration) gocql.SelectedHost {
	return &dsSelected{SelectedHost: h, p: p, id: id, at: at}
}

// Pick returns the query plan (dsQueryPlan): ordered replicas, then the
// fallback's hosts.
func (p *datastaxPolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	return dsQueryPlan(p.dsCore, p.HostSelectionPolicy.Pick(q), isFallbackV1, p.key, p.wrap)
}

// dsSelected is a handed-out host (its index id, handed out at at); its
// Mark is dsCore.marked.
type dsSelected struct {
	gocql.SelectedHost
	p    *datastaxPolicy
	id   int32
	at   time.Duration
	done atomic.Bool
}

func (d *dsSelected) Mark(err error) {
	d.p.marked(d.id, d.at, &d.done)
	d.SelectedHost.Mark(err)
}

// reset is the rule's Reset of a host (see dsCore).
func (p *datastaxPolicy) reset(h *gocql.HostInfo) { p.resetKey(hostKey(h)) }

func (p *datastaxPolicy) HostUp(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostUp(h)
}

func (p *datastaxPolicy) HostDown(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostDown(h)
}

func (p *datastaxPolicy) RemoveHost(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.RemoveHost(h)
}

// dsObserver is the query observer wireDatastax chains in.
type dsObserver struct {
	p    *datastaxPolicy
	next gocql.QueryObserver
}

func (o dsObserver) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if q.Host != nil {
		o.p.observe(hostKey(q.Host), q.End.Sub(q.Start), noResponse(ctx, q.Err, gocql.ErrTimeoutNoResponse))
	}
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

// wireDatastax installs p and its observer (chained before any observer
// already set) into cfg; the session's timeout bounds orphans.
func wireDatastax(cfg *gocql.ClusterConfig, p *datastaxPolicy) {
	cfg.PoolConfig.HostSelectionPolicy = p
	cfg.QueryObserver = dsObserver{p: p, next: cfg.QueryObserver}
	p.wired(cfg.Timeout)
}
