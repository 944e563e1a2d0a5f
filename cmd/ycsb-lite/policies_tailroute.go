package main

import (
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	apolicy "github.com/tailroute/tailroute/apache/policy"
	simpayload "github.com/tailroute/tailroute/internal/payload"
	"github.com/tailroute/tailroute/policy"
)

// Server-signal suffixes of tailroute's policy names: the name says which
// load signal the policy had.
//
//	tailroute           no server signal: C3 on client-side estimates only
//	                    (q_s = 0, 1/mu_s = R_s), what any Cassandra gives
//	tailroute+poll      q_s and 1/mu_s polled from each node's
//	                    system_views.thread_pools (policy.WithServerLoad,
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
// with either driver.
var tailrouteVariants = []struct {
	name, help string
	strategy   tailroute.Strategy
	rate       bool
	signals    bool // also the +poll and +payload variants
}{
	{"tailroute", "tailroute policy, C3 ranking + CUBIC rate control (the product)", tailroute.C3, true, true},
	{"tailroute-p2c", "tailroute policy, DataStax power-of-two-choices on in-flight counts", tailroute.P2C, true, false},
	{"tailroute-norate", "ablation: tailroute C3 ranking without the CUBIC rate control", tailroute.C3, false, true},
}

// tailrouteOptions is the option list of a tailroute policy, for both
// adapters (both take []tailroute.Option):
// strategy and rate control, C3's concurrency compensation n = the number
// of clients, polled server load when poll > 0, -tail-term and -local-dc.
func tailrouteOptions(env policyEnv, strategy tailroute.Strategy, rate bool, poll time.Duration) []tailroute.Option {
	opts := []tailroute.Option{tailroute.WithStrategy(strategy), tailroute.WithRateControl(rate)}
	if env.clients > 1 {
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
	return opts
}

// tailroutePolicy is what the report reads of either adapter's Policy.
type tailroutePolicy interface {
	Stats() []tailroute.HostStats
	ServerLoadCounters() tailroute.ServerLoadCounters
}

// newTailroute builds a policy with one adapter's New and installs it with
// its Wire; the report's stats add the server-load counters when polling.
func newTailroute[C any, P tailroutePolicy](newPolicy func(...tailroute.Option) (P, error), wire func(C, P) error,
	cfg C, opts []tailroute.Option, polled bool) (P, installed, error) {
	p, err := newPolicy(opts...)
	if err != nil {
		return p, installed{}, err
	}
	if err := wire(cfg, p); err != nil {
		return p, installed{}, err
	}
	inst := installed{stats: func() any { return p.Stats() }}
	if polled {
		inst.stats = func() any {
			return map[string]any{"hosts": p.Stats(), "server_load": p.ServerLoadCounters()}
		}
	}
	return p, inst, nil
}

// tailroute's strategies, each wired into the session (observers included)
// without a server signal, with polled server load and with payload
// feedback, through policy (gocql v1) or apache/policy (v2).
func init() {
	for _, t := range tailrouteVariants {
		register := func(name, help string, payload bool, poll time.Duration) {
			registerPolicy(policySpec{
				name: name, help: help, payload: payload,
				v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
					p, inst, err := newTailroute(policy.New, policy.Wire, cfg, tailrouteOptions(env, t.strategy, t.rate, poll), poll > 0)
					if err == nil && payload {
						inst.feedback = func(iter *gocql.Iter) bool { return simpayload.Record(p, iter.Host(), iter.GetCustomPayload()) }
					}
					return inst, err
				},
				v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
					p, inst, err := newTailroute(apolicy.New, apolicy.Wire, cfg, tailrouteOptions(env, t.strategy, t.rate, poll), poll > 0)
					if err == nil && payload {
						inst.feedbackV2 = func(iter *gocql2.Iter) bool { return simpayload.Record(p, iter.Host(), iter.GetCustomPayload()) }
					}
					return inst, err
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
