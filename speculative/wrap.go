package speculative

import (
	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/hedge"
)

// Policy wraps a HostSelectionPolicy of the driver (the tailroute policy or
// any of the driver's own) and arms hedging per query execution (see Pick).
// Get one from Hedger.Wrap or Wire; install it as
// cluster.PoolConfig.HostSelectionPolicy.
//
// The NextHost of an armed execution never yields a host twice, so the
// hedge never goes to a host that already has an attempt of this
// execution, and it yields hosts in the wrapped policy's order: the hedge
// gets the next host of the ranking that is up (skipping hosts that failed
// within the error holdoff). Every SelectedHost is passed through, Mark
// included, so the wrapped policy sees the same feedback as without the
// wrapper.
//
// How a hedge is told apart from a retry: the driver serialises NextHost
// calls of one execution but does not say who calls. The first call is the
// primary attempt. A later call is a retry if an attempt ended with an
// error before it (the driver marks the host, then asks the iterator for
// the next one); otherwise it is the hedge (the driver's ticker fired while
// the primary was in flight). The hedge is charged to the budget right then.
type Policy struct {
	h     *Hedger
	inner gocql.HostSelectionPolicy

	pl hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, statement]
	up hedge.UpHosts
}

// readyPolicy is a Policy whose wrapped policy is a gocql.ReadyPolicy.
type readyPolicy struct{ *Policy }

func (r readyPolicy) Ready() bool { return r.inner.(gocql.ReadyPolicy).Ready() }

// Wrap returns inner wrapped for hedging; nil means the driver's default,
// RoundRobinHostPolicy. The result implements gocql.ReadyPolicy exactly
// when inner does. Like any HostSelectionPolicy it must not be shared
// between sessions (wrap once per session; the Hedger may be shared).
func (h *Hedger) Wrap(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		inner = gocql.RoundRobinHostPolicy()
	}
	p := &Policy{h: h, inner: inner}
	p.pl = hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, statement]{
		H:         h.core,
		Pick:      func(q statement) func() gocql.SelectedHost { return p.inner.Pick(q) },
		HostError: isHostError,
	}
	if _, ok := inner.(gocql.ReadyPolicy); ok {
		return readyPolicy{p}
	}
	return p
}

// Hedger returns the Hedger this policy arms queries for.
func (p *Policy) Hedger() *Hedger { return p.h }

// Inner returns the wrapped policy.
func (p *Policy) Inner() gocql.HostSelectionPolicy { return p.inner }

func (p *Policy) setUp(h *gocql.HostInfo, up bool) {
	if h == nil {
		return
	}
	p.up.Set(h.ConnectAddressAndPort(), up)
}

// AddHost records whether h is up and passes it to the wrapped policy.
func (p *Policy) AddHost(h *gocql.HostInfo) { p.setUp(h, h.IsUp()); p.inner.AddHost(h) }

// AddHosts adds hosts in bulk (the driver uses it when the policy has it).
func (p *Policy) AddHosts(hosts []*gocql.HostInfo) {
	for _, h := range hosts {
		p.setUp(h, h.IsUp())
	}
	if b, ok := p.inner.(interface{ AddHosts([]*gocql.HostInfo) }); ok {
		b.AddHosts(hosts)
		return
	}
	for _, h := range hosts {
		p.inner.AddHost(h)
	}
}

// RemoveHost forgets h and passes it to the wrapped policy.
func (p *Policy) RemoveHost(h *gocql.HostInfo) { p.setUp(h, false); p.inner.RemoveHost(h) }

// HostUp counts h as up and passes it to the wrapped policy.
func (p *Policy) HostUp(h *gocql.HostInfo) { p.setUp(h, true); p.inner.HostUp(h) }

// HostDown counts h as down and passes it to the wrapped policy.
func (p *Policy) HostDown(h *gocql.HostInfo) { p.setUp(h, false); p.inner.HostDown(h) }

// SetPartitioner passes the partitioner to the wrapped policy.
func (p *Policy) SetPartitioner(s string) { p.inner.SetPartitioner(s) }

// KeyspaceChanged passes the schema change to the wrapped policy.
func (p *Policy) KeyspaceChanged(e gocql.KeyspaceUpdateEvent) { p.inner.KeyspaceChanged(e) }

// Init passes the session to the wrapped policy.
func (p *Policy) Init(s *gocql.Session) { p.inner.Init(s) }

// IsLocal is the wrapped policy's IsLocal.
func (p *Policy) IsLocal(h *gocql.HostInfo) bool { return p.inner.IsLocal(h) }

// isHostError says whether err says something about the host (overload,
// timeout, connection trouble) rather than about the request (the rules of
// cqlerr.IsHostError).
func isHostError(err error) bool {
	return cqlerr.IsHostError[gocql.RequestError](err, gocql.ErrNotFound)
}

var (
	_ gocql.HostSelectionPolicy = (*Policy)(nil)
	_ gocql.ReadyPolicy         = readyPolicy{}
)
