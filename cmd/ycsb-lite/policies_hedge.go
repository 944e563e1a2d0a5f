package main

import (
	"strings"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/speculative"
)

// hedgeSuffix turns any policy into its hedged variant: "tailroute+hedge"
// runs tailroute with speculative.Wire on top (adaptive p95 delay, 5 %
// budget), so -compare tailroute,tailroute+hedge shows hedged vs unhedged
// side by side on the same scenario and seed. -hedge appends it to every
// policy of the run.
const hedgeSuffix = "+hedge"

// hedgedSpec wraps base with hedging. The hedge delay follows tailroute's own
// tracker when the base policy is ours, else the hedger's built-in recorder.
// A retry policy is set as speculative's doc asks, so an error on one attempt
// moves on to the next host instead of beating a slower success.
func hedgedSpec(base policySpec) policySpec {
	return policySpec{
		name:    base.name + hedgeSuffix,
		help:    base.help + ", with adaptive budgeted hedging",
		simOnly: base.simOnly,
		payload: base.payload,
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			inst, err := base.install(env, cfg)
			if err != nil {
				return inst, err
			}
			var opts []speculative.Option
			if p, ok := cfg.PoolConfig.HostSelectionPolicy.(*policy.Policy); ok {
				opts = append(opts, speculative.WithSource(p.Tracker()))
			}
			h, err := speculative.New(opts...)
			if err != nil {
				return inst, err
			}
			if err := speculative.Wire(cfg, h); err != nil {
				return inst, err
			}
			if cfg.RetryPolicy == nil {
				cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
			}
			baseStats := inst.stats
			inst.stats = func() any {
				out := map[string]any{"hedging": h.Stats()}
				if baseStats != nil {
					out["policy"] = baseStats()
				}
				return out
			}
			return inst, nil
		},
	}
}

// lookupHedged resolves "<policy>+hedge".
func lookupHedged(name string) (policySpec, bool, error) {
	base, ok := strings.CutSuffix(strings.TrimSpace(name), hedgeSuffix)
	if !ok {
		return policySpec{}, false, nil
	}
	spec, err := lookupPolicy(base)
	if err != nil {
		return policySpec{}, true, err
	}
	return hedgedSpec(spec), true, nil
}
