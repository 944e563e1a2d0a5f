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
//	tailroute           the product's default: C3 with q_s and 1/mu_s polled
//	                    from each node's system_views.thread_pools within the
//	                    default poll budget (tailroute.WithPollBudget)
//	tailroute-nopoll    no server signal: C3 on client-side estimates only
//	                    (q_s = 0, 1/mu_s = R_s; WithServerLoad(false))
//	tailroute+poll      polled at a fixed 250ms (WithPollBudget(1, d, d));
//	                    +poll100ms and +poll1s set the interval
//	tailroute+payload   the simulator's payload feedback (sim
//	                    Config.Feedback, on for that policy's runs), which no
//	                    real Cassandra sends; no polling
const (
	payloadSuffix = "+payload"
	pollSuffix    = "+poll"
	noPollSuffix  = "-nopoll"
)

// pollIntervals are the fixed-interval +poll variants and their intervals.
var pollIntervals = []struct {
	suffix   string
	interval time.Duration
}{
	{pollSuffix, 250 * time.Millisecond},
	{pollSuffix + "100ms", 100 * time.Millisecond},
	{pollSuffix + "1s", time.Second},
}

// tailrouteVariants are tailroute's strategies as ycsb-lite runs them,
// with either driver.
var tailrouteVariants = []struct {
	name, help string
	strategy   tailroute.Strategy
	rate       bool
	signals    bool // also the -nopoll, +poll and +payload variants
	givenW     bool // the concurrency weight set to -clients instead of measured
}{
	{"tailroute", "tailroute policy, C3 ranking + CUBIC rate control (the product)", tailroute.C3, true, true, false},
	{"tailroute-p2c", "tailroute policy, DataStax power-of-two-choices on in-flight counts", tailroute.P2C, true, false, false},
	{"tailroute-norate", "ablation: tailroute C3 ranking without the CUBIC rate control", tailroute.C3, false, true, false},
	{"tailroute-wn", "ablation: tailroute with the concurrency weight set to -clients (WithConcurrencyWeight) instead of measured", tailroute.C3, true, true, true},
}

// serverSignal is the server-load signal of a tailroute variant.
type serverSignal struct {
	poll     bool          // polls system_views.thread_pools
	interval time.Duration // a fixed poll interval; 0 = the default budget
	payload  bool          // the simulator's payload feedback
}

// options is the signal's share of a policy's option list.
func (sig serverSignal) options() []tailroute.Option {
	switch {
	case !sig.poll:
		return []tailroute.Option{tailroute.WithServerLoad(false)}
	case sig.interval > 0:
		return []tailroute.Option{tailroute.WithPollBudget(1, sig.interval, sig.interval)}
	}
	return nil
}

// tailrouteOptions is the option list of a tailroute policy, for both
// adapters (both take []tailroute.Option):
// strategy and rate control, C3's concurrency compensation n = the number
// of clients where givenW (else the policy measures it), the server
// signal, -tail-term and -local-dc.
func tailrouteOptions(env policyEnv, strategy tailroute.Strategy, rate, givenW bool, sig serverSignal) []tailroute.Option {
	opts := []tailroute.Option{tailroute.WithStrategy(strategy), tailroute.WithRateControl(rate)}
	if givenW {
		opts = append(opts, tailroute.WithConcurrencyWeight(float64(env.clients)))
	}
	opts = append(opts, sig.options()...)
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
	cfg C, opts []tailroute.Option) (P, installed, error) {
	p, err := newPolicy(opts...)
	if err != nil {
		return p, installed{}, err
	}
	if err := wire(cfg, p); err != nil {
		return p, installed{}, err
	}
	inst := installed{stats: func() any {
		// ServerLoadCounters are zero without polling (the policy's rule:
		// C3 with WithServerLoad on).
		if sl := p.ServerLoadCounters(); sl.Requests > 0 || sl.Polls > 0 {
			return map[string]any{"hosts": p.Stats(), "server_load": sl}
		}
		return p.Stats()
	}}
	return p, inst, nil
}

// tailroute's strategies, each wired into the session (observers included)
// with the default polling, without a server signal, with fixed-interval
// polling and with payload feedback, through policy (gocql v1) or
// apache/policy (v2). The report's stats add the server-load counters of
// every policy that polled.
func init() {
	for _, t := range tailrouteVariants {
		register := func(name, help string, sig serverSignal) {
			registerPolicy(policySpec{
				name: name, help: help, payload: sig.payload,
				v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
					p, inst, err := newTailroute(policy.New, policy.Wire, cfg, tailrouteOptions(env, t.strategy, t.rate, t.givenW, sig))
					if err == nil && sig.payload {
						inst.feedback = func(iter *gocql.Iter) bool { return simpayload.Record(p, iter.Host(), iter.GetCustomPayload()) }
					}
					return inst, err
				},
				v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
					p, inst, err := newTailroute(apolicy.New, apolicy.Wire, cfg, tailrouteOptions(env, t.strategy, t.rate, t.givenW, sig))
					if err == nil && sig.payload {
						inst.feedbackV2 = func(iter *gocql2.Iter) bool { return simpayload.Record(p, iter.Host(), iter.GetCustomPayload()) }
					}
					return inst, err
				},
			})
		}
		if !t.signals {
			register(t.name, t.help+"; no server load signal", serverSignal{})
			continue
		}
		register(t.name, t.help+"; server load polled from system_views.thread_pools within the default poll budget", serverSignal{poll: true})
		register(t.name+noPollSuffix, t.help+"; no server load signal", serverSignal{})
		for _, pi := range pollIntervals {
			register(t.name+pi.suffix, t.help+"; server load polled from system_views.thread_pools every "+pi.interval.String(),
				serverSignal{poll: true, interval: pi.interval})
		}
		register(t.name+payloadSuffix, t.help+"; the simulator's payload feedback (no real Cassandra sends it)", serverSignal{payload: true})
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
