package policy

import "github.com/tailroute/tailroute/internal/route"

// WithHealthTolerance sets how much less healthy than the healthiest
// candidate a replica may be before health, not speed, decides its place (the
// success-prioritized fallback cascade): a replica whose rolling success rate
// (tracker.View.SuccessRate) is below best*(1-tolerance) stays a first choice
// only with probability (rate/best)^3 and is otherwise ranked behind every
// healthier replica, whatever its C3 score or in-flight count (C3 and P2C.
// The rule, defaults and allowed range are those of the gocql v1 adapter's
// WithHealthTolerance (package github.com/tailroute/tailroute/policy).
func WithHealthTolerance(tolerance float64) Option { return route.WithHealthTolerance(tolerance) }
