package policy

import "github.com/tailroute/tailroute/internal/route"

// WithHealthTolerance sets how much less healthy than the healthiest
// candidate a replica may be before health, not speed, decides its place
// (the success-prioritized fallback cascade): a replica whose rolling
// success rate (tracker.View.SuccessRate) is below best*(1-tolerance) stays
// a first choice only with probability (rate/best)^3 and is otherwise
// ranked behind every healthier replica, whatever its C3 score or in-flight
// count (C3 and P2C; RoundRobin ignores health). Recovery: the rate is
// rolling (6 buckets of tracker.Config.HealthBucket), so a replica that
// stops failing regains its place as its recent buckets fill with
// successes, at once after a run of failures (the tracker's streak rule),
// and probes (WithProbe) reach replicas that get no traffic at all. Default 0.05; 1 turns the rule off. Allowed 0..1.
func WithHealthTolerance(tolerance float64) Option { return route.WithHealthTolerance(tolerance) }
