package policy

import "github.com/tailroute/tailroute/internal/route"

// WithDriverSpeculation says that queries may carry gocql's own
// SpeculativeExecutionPolicy (set with Query.SetSpeculativeExecutionPolicy
// rather than through speculative.Wire). gocql v1.7.0 can then start a
// speculative attempt after the execution's first Mark(nil), if its timer
// fires just as the first result arrives; the per-query state of
// idempotent executions is then not pooled but left to the garbage
// collector (one allocation per idempotent Pick), so such a late call can
// never reach a state that serves another execution. Default false: the
// state is pooled (see Pick), which speculative.Wire's hedging is safe
// with, since it never asks a plan again after a Mark(nil); the policy turns
// pooling of idempotent states off by itself at the first late call it sees
// (see queryState), so the option only closes the window before that call.
func WithDriverSpeculation(on bool) Option { return route.WithDriverSpeculation(on) }
