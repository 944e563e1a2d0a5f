package speculative

import (
	"context"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/hedge"
)

// execSpec is the SpeculativeExecutionPolicy Arm gives one execution: Pick
// sets Attempts to 1 when it arms the execution, 0 otherwise; the driver
// reads it right after Pick.
type execSpec struct {
	h        *hedge.Hedger
	attempts atomic.Int32
}

func (s *execSpec) Attempts() int        { return int(s.attempts.Load()) }
func (s *execSpec) Delay() time.Duration { return s.h.Delay() }

type specKey struct{}

// Arm prepares one execution of q for hedging: it gives q a speculative
// policy of its own and returns ctx carrying it; execute q with the
// returned context (q.ExecContext, q.IterContext, ...), once. An execution
// run with another context is not hedged. A nil ctx means
// context.Background().
func (h *Hedger) Arm(ctx context.Context, q *gocql.Query) context.Context {
	s := &execSpec{h: h.core}
	q.SetSpeculativeExecutionPolicy(s)
	return withSpec(ctx, s)
}

// ArmBatch is Arm for a batch.
func (h *Hedger) ArmBatch(ctx context.Context, b *gocql.Batch) context.Context {
	s := &execSpec{h: h.core}
	b.SpeculativeExecutionPolicy(s)
	return withSpec(ctx, s)
}

func withSpec(ctx context.Context, s *execSpec) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, specKey{}, s)
}

// Disable returns a context that opts an execution out of hedging.
func Disable(ctx context.Context) context.Context { return hedge.Disable(ctx) }

// Policy wraps a v2 HostSelectionPolicy (apache/policy's or any of the
// driver's) and arms the executions prepared with Arm; see the package
// doc. Everything else, Mark included, is passed through, and the hedge
// goes to the next host of the wrapped policy's order that is up, not yet
// used by the execution and did not fail within the error holdoff.
type Policy struct {
	h     *Hedger
	inner gocql.HostSelectionPolicy
	pl    hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableStatement]

	up hedge.UpHosts
}

type readyPolicy struct{ *Policy }

func (r readyPolicy) Ready() bool { return r.inner.(gocql.ReadyPolicy).Ready() }

// Wrap returns inner wrapped for hedging; nil means the driver's default,
// RoundRobinHostPolicy. The result implements gocql.ReadyPolicy exactly
// when inner does. Wrap once per session.
func (h *Hedger) Wrap(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		inner = gocql.RoundRobinHostPolicy()
	}
	p := &Policy{h: h, inner: inner}
	p.pl = hedge.Planner[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableStatement]{
		H:         h.core,
		Pick:      func(q gocql.ExecutableStatement) func() gocql.SelectedHost { return p.inner.Pick(q) },
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

// Pick implements gocql.HostSelectionPolicy; see Policy.
func (p *Policy) Pick(qry gocql.ExecutableStatement) gocql.NextHost {
	var s *execSpec
	eligible := false
	if qry != nil {
		if c, ok := qry.(interface{ Context() context.Context }); ok {
			if ctx := c.Context(); ctx != nil {
				s, _ = ctx.Value(specKey{}).(*execSpec)
				eligible = s != nil && !hedge.Disabled(ctx) && qry.IsIdempotent() && qry.GetHostID() == ""
			}
		}
	}
	if p.h.core.Admit(eligible, true, p.up.N()) == hedge.Armed {
		s.attempts.Store(1)
		st := p.pl.NewExec(qry)
		return func() gocql.SelectedHost {
			if sl := st.Next(); sl != nil {
				return sl
			}
			return nil
		}
	}
	if s != nil {
		s.attempts.Store(0)
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
