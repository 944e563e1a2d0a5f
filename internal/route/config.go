package route

import (
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/settings"
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
