package vsim

import (
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/paperbase"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// c3Engine is the engine configured as the C3 paper's C3: its score with
// the concurrency weight n = clients (WithConcurrencyWeight), k = 0
// (WithTailTerm(0)), one queue per server (W_s = 1), EWMAs of absim's
// weight on the newest sample (paperbase.DefaultC3Params, 0.9) without
// age decay, sample cap or forgetting, no probes and none of the track
// rules; CUBIC rate control as the paper's
// Algorithm 2. What differs from absim's C3 (strategy "c3"): a request
// every replica's rate refuses waits at most the engine's backpressure
// bound (1 ms) and is then sent to the best replica, where absim holds it
// in a backlog until a token comes; a server the client has no answer
// from yet scores with the others' mean R_s, where absim scores it 0.
//
// It exists so that C3 can be compared on the signal the product has:
// "c3-engine" gets the paper's payload and is checked against "c3";
// "c3-polls" gets the polls tailroute gets, no payload.
func c3Engine(polls bool) func(Config) []tailroute.Option {
	return func(c Config) []tailroute.Option {
		return []tailroute.Option{
			tailroute.WithServerLoad(polls),
			tailroute.WithConcurrencyWeight(float64(c.Clients)),
			tailroute.WithTailTerm(0),
			tailroute.WithServerWorkers(1),
			tailroute.WithProbe(time.Hour),
			tailroute.WithTracker(tracker.Config{EWMAAlpha: paperbase.DefaultC3Params().EWMAAlpha, AgeDecay: -1, SampleCap: -1, ForgetAfter: -1}),
			route.WithoutRules(track.Rule(1)<<track.RuleCount - 1),
		}
	}
}

func init() {
	strategies["c3-engine"] = strategy{doc: "the engine configured as the paper's C3 (n = clients, k = 0, W_s = 1, EWMA 0.9, none of tailroute's rules) fed the paper's piggybacked feedback (no real Cassandra sends it): checks the configuration against c3",
		engine: c3Engine(false), payload: true}
	strategies["c3-polls"] = strategy{doc: "c3-engine fed the servers' load polled from system_views.thread_pools instead, as tailroute is: the paper's C3 on the product's signal",
		engine: c3Engine(true)}
}
