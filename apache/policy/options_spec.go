package policy

import "github.com/tailroute/tailroute/internal/route"

// WithDriverSpeculation says that queries may carry gocql's own
// SpeculativeExecutionPolicy (set with Query.SetSpeculativeExecutionPolicy
// rather than through speculative.Wire). The rule, defaults and allowed range
// are those of the gocql v1 adapter's WithDriverSpeculation (package
// github.com/tailroute/tailroute/policy).
func WithDriverSpeculation(on bool) Option { return route.WithDriverSpeculation(on) }
