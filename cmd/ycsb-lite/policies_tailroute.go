package main

import (
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	simpayload "github.com/tailroute/tailroute/internal/payload"
	"github.com/tailroute/tailroute/policy"
)

// Server-signal suffixes of tailroute's policy names: the name says which
// load signal the policy had.
//
//	tailroute           no server signal: C3 on client-side estimates only
//	                    (q_s = 0, 1/mu_s = R_s), what any Cassandra gives
//	tailroute+poll      q_s and 1/mu_s polled from each node's
//	                    system_views.thread_pools (tailroute.WithServerLoad,
//	                    250ms; +poll100ms and +poll1s set the interval)
//	tailroute+payload   the simulator's payload feedback (sim
//	                    Config.Feedback, on for that policy's runs), which no
//	                    real Cassandra sends
const (
	payloadSuffix = "+payload"
	pollSuffix    = "+poll"
)

// pollIntervals are the +poll variants and their intervals.
var pollIntervals = []struct {
	suffix   string
	interval time.Duration
}{
	{pollSuffix, tailroute.DefaultServerLoadInterval},
	{pollSuffix + "100ms", 100 * time.Millisecond},
	{pollSuffix + "1s", time.Second},
}

// tailrouteVariants are tailroute's strategies as ycsb-lite runs them,
// with either driver (policies_v2.go registers the same names).
var tailrouteVariants = []struct {
	name, help string
	strategy   string // the strategy's name, as both adapters' ParseStrategy read it
	rate       bool
	signals    bool // also the +poll and +payload variants
}{
	{"tailroute", "tailroute policy, C3 ranking + CUBIC rate control (the product)", "c3", true, true},
	{"tailroute-p2c", "tailroute policy, DataStax power-of-two-choices on in-flight counts", "p2c", true, false},
	{"tailroute-norate", "ablation: tailroute C3 ranking without the CUBIC rate control", "c3", false, true},
}

// tailroute's strategies, each wired into the session (observers included)
// without a server signal, with polled server load and with payload feedback.
func init() {
	for _, t := range tailrouteVariants {
		strategy, err := tailroute.ParseStrategy(t.strategy)
		if err != nil {
			panic(err)
		}
		register := func(name, help string, payload bool, poll time.Duration) {
			registerPolicy(policySpec{
				name: name, help: help, payload: payload,
				install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
					opts := []tailroute.Option{tailroute.WithStrategy(strategy), tailroute.WithRateControl(t.rate)}
					if env.clients > 1 {
						// C3's concurrency compensation: n = the number of clients.
						opts = append(opts, tailroute.WithConcurrencyWeight(float64(env.clients)))
					}
					if poll > 0 {
						opts = append(opts, tailroute.WithServerLoad(poll))
					}
					if env.tailTerm != nil {
						opts = append(opts, tailroute.WithTailTerm(*env.tailTerm))
					}
					if env.localDC != "" {
						opts = append(opts, tailroute.WithLocalDC(env.localDC))
					}
					p, err := policy.New(opts...)
					if err != nil {
						return installed{}, err
					}
					if err := policy.Wire(cfg, p); err != nil {
						return installed{}, err
					}
					inst := installed{stats: func() any { return p.Stats() }}
					if payload {
						inst.feedback = func(iter *gocql.Iter) bool { return simpayload.Record(p, iter.Host(), iter.GetCustomPayload()) }
					}
					if poll > 0 {
						inst.stats = func() any {
							return map[string]any{"hosts": p.Stats(), "server_load": p.ServerLoadCounters()}
						}
					}
					return inst, nil
				},
			})
		}
		register(t.name, t.help+"; no server load signal", false, 0)
		if !t.signals {
			continue
		}
		for _, pi := range pollIntervals {
			register(t.name+pi.suffix, t.help+"; server load polled from system_views.thread_pools every "+pi.interval.String(), false, pi.interval)
		}
		register(t.name+payloadSuffix, t.help+"; the simulator's payload feedback (no real Cassandra sends it)", true, 0)
	}
}

// withPayloadSignal is -payload-feedback's renaming: every policy that has a
// +payload variant runs as that variant ("tailroute+hedge" becomes
// "tailroute+payload+hedge").
func withPayloadSignal(name string) string {
	base, hedged := stripHedge(name)
	if _, ok := policies[base+payloadSuffix]; ok {
		base += payloadSuffix
	}
	if hedged {
		base += hedgeSuffix
	}
	return base
}

func stripHedge(name string) (string, bool) {
	n := len(name) - len(hedgeSuffix)
	if n > 0 && name[n:] == hedgeSuffix {
		return name[:n], true
	}
	return name, false
}
