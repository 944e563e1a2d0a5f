package main

import (
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/policy"
)

// tailroute's strategies: the policy wired into the session (observers
// included) and fed the simulator's server feedback from every result.
func init() {
	for _, t := range []struct {
		name, help string
		strategy   policy.Strategy
	}{
		{"tailroute", "tailroute policy, C3 ranking + CUBIC rate control (the product)", policy.C3},
		{"tailroute-p2c", "tailroute policy, DataStax power-of-two-choices on in-flight counts", policy.P2C},
	} {
		registerPolicy(policySpec{
			name: t.name, help: t.help,
			install: func(_ policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
				p, err := policy.New(policy.WithStrategy(t.strategy))
				if err != nil {
					return installed{}, err
				}
				policy.Wire(cfg, p)
				return installed{feedback: p.RecordFeedback, stats: func() any { return p.Stats() }}, nil
			},
		})
	}
}
