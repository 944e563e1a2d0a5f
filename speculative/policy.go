package speculative

import (
	"context"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/hedge"
)

// Policy wraps a gocql.HostSelectionPolicy (ours or any of gocql's
// built-ins) and arms hedging per query execution. Get one from
// Hedger.Wrap or Wire; install it as cluster.PoolConfig.HostSelectionPolicy.
//
// What it does in Pick, which gocql calls once per execution before it
// reads the query's SpeculativeExecutionPolicy (query_executor.go):
//   - counts the execution against the budget;
//   - leaves non-idempotent queries and queries whose context carries
//     Disable untouched (no hedge for the former: gocql's rule);
//   - for every other *gocql.Query / *gocql.Batch, sets the query's
//     SpeculativeExecutionPolicy: one extra attempt after Hedger.Delay()
//     when at least 2 hosts are up, the load rule (see the package doc)
//     and the burst cap (WithBurstCap) allow it and a budget token could be
//     reserved, otherwise none. gocql v1.7.0 has no cluster-wide speculative
//     setting; doing it here is what makes one Wire call hedge every query.
//
// The returned NextHost never yields a host twice, so the hedge never goes
// to a host that already has an attempt of this execution, and it yields
// hosts in the wrapped policy's order: the hedge gets the next host of the
// ranking (skipping hosts that failed within the error holdoff). Every
// SelectedHost is passed through, Mark included, so the wrapped policy
// sees the same feedback as without the wrapper.
//
// How a hedge is told apart from a retry: gocql serialises NextHost calls
// of one execution but does not say who calls. The first call is the
// primary attempt. A later call is a retry if an attempt ended with an
// error before it (gocql marks the host, then asks the iterator for the
// next one); otherwise it is the hedge (gocql's ticker fired while the
// primary was in flight). The hedge is charged to the budget right then.
type Policy struct {
	h     *Hedger
	inner gocql.HostSelectionPolicy

	pl hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableQuery]
	up hedge.UpHosts
}

// readyPolicy is a Policy whose wrapped policy is a gocql.ReadyPolicy.
type readyPolicy struct{ *Policy }

func (r readyPolicy) Ready() bool { return r.inner.(gocql.ReadyPolicy).Ready() }

// Wrap returns inner wrapped for hedging; nil means gocql's default,
// RoundRobinHostPolicy. The result implements gocql.ReadyPolicy exactly
// when inner does. Like any HostSelectionPolicy it must not be shared
// between sessions (wrap once per session; the Hedger may be shared).
func (h *Hedger) Wrap(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		inner = gocql.RoundRobinHostPolicy()
	}
	p := &Policy{h: h, inner: inner}
	p.pl = hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableQuery]{
		H:         h.core,
		Pick:      func(q gocql.ExecutableQuery) func() gocql.SelectedHost { return p.inner.Pick(q) },
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

// AddHosts adds hosts in bulk (gocql uses it when the policy has it).
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

// Disable returns a context that opts a query out of hedging:
// q.WithContext(speculative.Disable(ctx)). The wrapped policy then leaves
// the query's own SpeculativeExecutionPolicy (gocql's default: none) alone.
func Disable(ctx context.Context) context.Context { return hedge.Disable(ctx) }

// settable says whether setSpec can set q's speculative execution policy.
func settable(q gocql.ExecutableQuery) bool {
	switch q.(type) {
	case *gocql.Query, *gocql.Batch:
		return true
	}
	return false
}

// setSpec sets the speculative execution policy of a query or batch.
func setSpec(q gocql.ExecutableQuery, sp gocql.SpeculativeExecutionPolicy) bool {
	switch q := q.(type) {
	case *gocql.Query:
		q.SetSpeculativeExecutionPolicy(sp)
		return true
	case *gocql.Batch:
		q.SpeculativeExecutionPolicy(sp)
		return true
	}
	return false
}

// Pick implements gocql.HostSelectionPolicy; see Policy.
func (p *Policy) Pick(qry gocql.ExecutableQuery) gocql.NextHost {
	eligible := qry != nil && qry.IsIdempotent() && !hedge.Disabled(qry.Context())
	switch p.h.core.Admit(eligible, eligible && settable(qry), p.up.N()) {
	case hedge.Armed:
		setSpec(qry, &p.h.spec)
		st := p.pl.NewExec(qry)
		return func() gocql.SelectedHost {
			if s := st.Next(); s != nil {
				return s
			}
			return nil
		}
	case hedge.Deny:
		setSpec(qry, gocql.NonSpeculativeExecution{})
	}
	return p.inner.Pick(qry)
}

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

// hostSlot is the SelectedHost an armed execution hands to gocql.
type hostSlot = hedge.Slot[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableQuery]
