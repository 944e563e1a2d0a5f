package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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

// hedgeVariant is the "-nocap" or "-cap<horizon>x<factor>" that may follow
// "+hedge" (e.g. tailroute+hedge-cap1sx2): the burst cap off, or set, so
// that cap settings can be compared side by side in one run.
type hedgeVariant struct {
	name string
	opts []speculative.Option
}

func parseHedgeVariant(v string) (hedgeVariant, error) {
	switch {
	case v == "":
		return hedgeVariant{}, nil
	case v == "-nocap":
		return hedgeVariant{name: v, opts: []speculative.Option{speculative.WithBurstCap(0, 1, 0)}}, nil
	case strings.HasPrefix(v, "-cap"):
		hs, fs, ok := strings.Cut(strings.TrimPrefix(v, "-cap"), "x")
		hz, err1 := time.ParseDuration(hs)
		f, err2 := strconv.ParseFloat(fs, 64)
		if ok && err1 == nil && err2 == nil {
			return hedgeVariant{name: v, opts: []speculative.Option{
				speculative.WithBurstCap(hz, f, speculative.DefaultBurstFloor)}}, nil
		}
	}
	return hedgeVariant{}, fmt.Errorf("policy +hedge%s: want +hedge, +hedge-nocap or +hedge-cap<horizon>x<factor> (e.g. +hedge-cap200msx3)", v)
}

// hedgedSpec wraps base with hedging. The hedge delay follows tailroute's own
// tracker when the base policy is ours, else the hedger's built-in recorder.
// A retry policy is set as speculative's doc asks, so an error on one attempt
// moves on to the next host instead of beating a slower success.
func hedgedSpec(base policySpec, variant hedgeVariant) policySpec {
	return policySpec{
		name:      base.name + hedgeSuffix + variant.name,
		help:      base.help + ", with adaptive budgeted hedging",
		simOnly:   base.simOnly,
		noLocalDC: base.noLocalDC,
		payload:   base.payload,
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			inst, err := base.install(env, cfg)
			if err != nil {
				return inst, err
			}
			opts := append([]speculative.Option(nil), variant.opts...)
			if p, ok := cfg.PoolConfig.HostSelectionPolicy.(*policy.Policy); ok {
				opts = append(opts, speculative.WithSource(p))
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

// lookupHedged resolves "<policy>+hedge" and its variants (hedgeVariant).
func lookupHedged(name string) (policySpec, bool, error) {
	name = strings.TrimSpace(name)
	i := strings.LastIndex(name, hedgeSuffix)
	if i < 0 {
		return policySpec{}, false, nil
	}
	variant, err := parseHedgeVariant(name[i+len(hedgeSuffix):])
	if err != nil {
		return policySpec{}, true, err
	}
	spec, err := lookupPolicy(name[:i])
	if err != nil {
		return policySpec{}, true, err
	}
	return hedgedSpec(spec, variant), true, nil
}
