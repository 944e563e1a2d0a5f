package route

import (
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/internal/track"
)

// Config is the validated configuration of a Router, written by the options
// of package tailroute (where each is declared, with its default and its
// allowed range).
type Config = settings.Route

// strategy is the configured ranking strategy.
func strategy(c *Config) tailroute.Strategy { return tailroute.Strategy(c.Strategy) }

// WithKeyspaceFunc replaces the session's keyspace metadata (tests,
// benchmarks).
func WithKeyspaceFunc(f KeyspaceFunc) tailroute.Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing, "WithKeyspaceFunc")
		s.Route.KeyspaceFunc = f
	}
}

// WithRand replaces the engine's source of randomness (each plan's
// tie-breaking and probing, the poller's jitter) with f, which must be safe
// for concurrent use unless one goroutine drives the engine. The
// virtual-time simulator (internal/vsim) seeds it so that a run repeats
// exactly.
func WithRand(f func() uint64) tailroute.Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing, "WithRand")
		s.Route.Rand = f
	}
}

// WithSpawn replaces how the engine starts its background work (the
// server-load poller's supervisor and per-host loops), `go f()` by
// default. The virtual-time simulator runs that work as processes of its
// scheduler, on its clock (see internal/vsim).
func WithSpawn(spawn func(f func())) tailroute.Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing, "WithSpawn")
		s.Route.Spawn = spawn
	}
}

// WithFeedbackKeys sets the custom-payload keys read by RecordFeedback
// (the simulator's load feedback; tests).
func WithFeedbackKeys(queue, serviceTime string) tailroute.Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing, "WithFeedbackKeys")
		if queue == "" || serviceTime == "" {
			s.Fail(settings.Routing, "WithFeedbackKeys: keys %q, %q, allowed non-empty strings", queue, serviceTime)
			return
		}
		s.Route.FeedbackQ, s.Route.FeedbackST = queue, serviceTime
	}
}

// WithoutRules turns the given rules off (track.Rule), for an ablation:
// the virtual-time simulator runs the engine with one rule removed at a
// time to measure what each one earns.
func WithoutRules(off track.Rule) tailroute.Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing, "WithoutRules")
		s.Route.Off = uint32(off)
	}
}
