package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	aspeculative "github.com/tailroute/tailroute/apache/speculative"
	"github.com/tailroute/tailroute/speculative"
)

// hedgeSuffix turns any policy into its hedged variant: "tailroute+hedge"
// runs tailroute with speculative.Wire on top (adaptive p95 delay, 5 %
// budget), so -compare tailroute,tailroute+hedge shows hedged vs unhedged
// side by side on the same scenario and seed. -hedge appends it to every
// policy of the run.
const hedgeSuffix = "+hedge"

// hedgeVariant is the "-nocap", "-cap<horizon>x<factor>", "-noload" or
// "-nofire" that may follow "+hedge" (e.g. tailroute+hedge-cap1sx2): the
// burst cap off or set, the load rule off (tailroute.WithLoadRule(false)),
// or executions armed as usual whose hedges never fire (a delay of an
// hour: what arming alone, the driver's speculative executor included,
// costs), so that settings can be compared side by side in one run.
type hedgeVariant struct {
	name string
	opts []tailroute.Option
}

func parseHedgeVariant(v string) (hedgeVariant, error) {
	switch {
	case v == "":
		return hedgeVariant{}, nil
	case v == "-nocap":
		return hedgeVariant{name: v, opts: []tailroute.Option{tailroute.WithBurstCap(0, 1, 0)}}, nil
	case v == "-nofire":
		return hedgeVariant{name: v, opts: []tailroute.Option{tailroute.WithDelayBounds(time.Hour, time.Hour)}}, nil
	case v == "-noload":
		return hedgeVariant{name: v, opts: []tailroute.Option{tailroute.WithLoadRule(false)}}, nil
	case strings.HasPrefix(v, "-cap"):
		hs, fs, ok := strings.Cut(strings.TrimPrefix(v, "-cap"), "x")
		hz, err1 := time.ParseDuration(hs)
		f, err2 := strconv.ParseFloat(fs, 64)
		if ok && err1 == nil && err2 == nil {
			return hedgeVariant{name: v, opts: []tailroute.Option{
				tailroute.WithBurstCap(hz, f, tailroute.DefaultBurstFloor)}}, nil
		}
	}
	return hedgeVariant{}, fmt.Errorf("policy +hedge%s: want +hedge, +hedge-nocap, +hedge-noload, +hedge-nofire or +hedge-cap<horizon>x<factor> (e.g. +hedge-cap200msx3)", v)
}

// options are the variant's hedger options plus, when the installed host
// selection policy hp (of either driver) is tailroute's, that policy as the
// source of the hedge delay and of the stall signal.
func (v hedgeVariant) options(hp any) []tailroute.Option {
	opts := append([]tailroute.Option(nil), v.opts...)
	if p, ok := hp.(tailroute.SilenceSource); ok {
		opts = append(opts, tailroute.WithSource(p))
	}
	return opts
}

// hedgedSpec wraps base with hedging, through speculative (gocql v1) or
// apache/speculative (v2, Arm per query). The hedge delay follows
// tailroute's own tracker when the base policy is ours, else the hedger's
// built-in recorder. A retry policy is set as speculative's doc asks, so an
// error on one attempt moves on to the next host instead of beating a
// slower success.
func hedgedSpec(base policySpec, variant hedgeVariant) policySpec {
	return policySpec{
		name:      base.name + hedgeSuffix + variant.name,
		help:      base.help + ", with adaptive budgeted hedging",
		simOnly:   base.simOnly,
		noLocalDC: base.noLocalDC,
		payload:   base.payload,
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			inst, err := base.v1(env, cfg)
			if err != nil {
				return inst, err
			}
			_, err = hedge(speculative.New, speculative.Wire, cfg, variant.options(cfg.PoolConfig.HostSelectionPolicy), &inst)
			if err == nil && cfg.RetryPolicy == nil {
				cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
			}
			return inst, err
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			inst, err := base.v2(env, cfg)
			if err != nil {
				return inst, err
			}
			h, err := hedge(aspeculative.New, aspeculative.Wire, cfg, variant.options(cfg.PoolConfig.HostSelectionPolicy), &inst)
			if err == nil {
				inst.arm = h.Arm
				if cfg.RetryPolicy == nil {
					cfg.RetryPolicy = &gocql2.SimpleRetryPolicy{NumRetries: 2}
				}
			}
			return inst, err
		},
	}
}

// hedge builds a hedger with one adapter's New, installs it with its Wire
// and adds its counters to inst's stats (hedgeStats).
func hedge[C any, H interface{ Stats() tailroute.Hedging }](newHedger func(...tailroute.Option) (H, error), wire func(C, H) error,
	cfg C, opts []tailroute.Option, inst *installed) (H, error) {
	h, err := newHedger(opts...)
	if err != nil {
		return h, err
	}
	if err := wire(cfg, h); err != nil {
		return h, err
	}
	inst.stats = hedgeStats(inst.stats, func() any { return h.Stats() })
	inst.hedging = h.Stats
	return h, nil
}

// hedgeStats is the JSON report's stats of a hedged policy: the hedger's
// and, when it has some, the base policy's.
func hedgeStats(base func() any, hedging func() any) func() any {
	return func() any {
		out := map[string]any{"hedging": hedging()}
		if base != nil {
			out["policy"] = base()
		}
		return out
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
