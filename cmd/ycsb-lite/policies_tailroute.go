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
		rate       bool
	}{
		{"tailroute", "tailroute policy, C3 ranking + CUBIC rate control (the product)", policy.C3, true},
		{"tailroute-p2c", "tailroute policy, DataStax power-of-two-choices on in-flight counts", policy.P2C, true},
		{"tailroute-norate", "ablation: tailroute C3 ranking without the CUBIC rate control", policy.C3, false},
	} {
		registerPolicy(policySpec{
			name: t.name, help: t.help,
			install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
				opts := []policy.Option{policy.WithStrategy(t.strategy), policy.WithRateControl(t.rate)}
				if env.clients > 1 {
					// C3's concurrency compensation: n = the number of clients.
					opts = append(opts, policy.WithConcurrencyWeight(float64(env.clients)))
				}
				if env.localDC != "" {
					opts = append(opts, policy.WithLocalDC(env.localDC))
				}
				p, err := policy.New(opts...)
				if err != nil {
					return installed{}, err
				}
				if err := policy.Wire(cfg, p); err != nil {
					return installed{}, err
				}
				return installed{feedback: p.RecordFeedback, stats: func() any { return p.Stats() }}, nil
			},
		})
	}
}
