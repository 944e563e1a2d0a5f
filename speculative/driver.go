package speculative

import (
	"context"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/hedge"
)

// What binds hedging to gocql v1 beyond the files shared with the v2
// adapter: the query type, and how an execution is armed (in Pick, by
// setting the query's SpeculativeExecutionPolicy).

// statement is the driver's query type, as the policy's Pick takes it.
type statement = gocql.ExecutableQuery

// armedSpec is the gocql.SpeculativeExecutionPolicy the wrapped policy puts
// on an armed execution: one extra attempt after the current delay.
type armedSpec = hedge.Spec

var _ gocql.SpeculativeExecutionPolicy = (*armedSpec)(nil)

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

// Pick implements gocql.HostSelectionPolicy. gocql calls it once per
// execution before it reads the query's SpeculativeExecutionPolicy
// (query_executor.go), and Pick:
//   - counts the execution against the budget;
//   - leaves non-idempotent queries and queries whose context carries
//     Disable untouched (no hedge for the former: gocql's rule);
//   - for every other *gocql.Query / *gocql.Batch, sets the query's
//     SpeculativeExecutionPolicy: one extra attempt, when at least 2 hosts
//     are up, the burst cap (WithBurstCap) allows it and a budget token
//     could be reserved, otherwise none; the attempt comes after
//     Hedger.Delay(), or after the deferred delay where the load rule
//     defers it (see the package doc). gocql v1.7.0
//     has no cluster-wide speculative setting; doing it here is what makes
//     one Wire call hedge every query.
func (p *Policy) Pick(qry gocql.ExecutableQuery) gocql.NextHost {
	eligible := qry != nil && qry.IsIdempotent() && !hedge.Disabled(qry.Context())
	switch d := p.h.core.Admit(eligible, eligible && settable(qry), p.up.N()); d {
	case hedge.Armed, hedge.Deferred:
		setSpec(qry, p.h.core.SpecFor(d))
		st := p.pl.NewExec(qry, d)
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

// hostSlot is the SelectedHost an armed execution hands to gocql.
type hostSlot = hedge.Slot[*gocql.HostInfo, gocql.SelectedHost, gocql.ExecutableQuery]
