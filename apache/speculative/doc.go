// Package speculative adds adaptive, budgeted hedged requests to the Apache
// Cassandra Go driver v2 (github.com/apache/cassandra-gocql-driver/v2), with
// the same Hedger, options and Stats as the v1 package
// github.com/tailroute/tailroute/speculative; the logic is shared
// (internal/hedge), this package is the v2 adapter.
//
// # Use
//
//	h, err := speculative.New()               // or tailroute.WithSource(p)
//	err = speculative.Wire(cluster, h)        // after policy.Wire, if any
//	...
//	q := session.Query(stmt, args...).Idempotent(true)
//	ctx = h.Arm(ctx, q)                       // per execution
//	err = q.ExecContext(ctx)
//
// # Why v2 needs Arm
//
// v2.1.2 copies a query's options, its SpeculativeExecutionPolicy included,
// into a per-execution request before it calls the policy's Pick, and has no
// cluster-wide speculative setting, so the v1 trick (set the policy inside
// Pick) does not reach the running execution. A policy shared by all queries
// cannot decline one execution either: a hedge whose NextHost returns nothing
// makes the driver return ErrNoConnections while the first attempt still
// runs. Arm therefore gives the query a speculative policy of its own and
// puts it in the context; the wrapped Pick finds it there and sets it to one
// extra attempt after Hedger.Delay() when the budget allows, none otherwise
// (the driver reads it right after Pick). Queries that are not armed, not
// idempotent, opted out with Disable, or pinned to a host (SetHostID: the
// driver skips Pick and speculation for them) are not hedged.
//
// Everything else, the hedge delay, budget, burst cap, load rule, error
// holdoff, the choice of the hedge's host and Stats, is as in the v1
// package.
package speculative

// The files shared with the gocql v1 adapter are generated from it.
//go:generate go run ../../internal/v2gen
