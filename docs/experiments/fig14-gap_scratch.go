//go:build ignore

// Scratch strategies of docs/experiments/fig14-gap.md: copy this file into
// internal/vsim/ (without this build line) and run cmd/vsim with them.
// "y-c3<rule>" is the engine configured as the paper's C3 (payload feedback,
// w = clients, k = 0, W_s = 1, EWMA weight 0.9, no AgeDecay, sample cap,
// forgetting, probes or track rules) with one of tailroute's rules added back;
// "z-c3<rule>" the same with polls instead of the payload (the product's
// signal); "x-..." tailroute with one tracker constant changed.
package vsim

import (
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

func init() {
	for _, v := range []struct {
		n string
		c tracker.Config
	}{
		{"x-ad100", tracker.Config{AgeDecay: 100 * time.Millisecond}},
		{"x-ad50", tracker.Config{AgeDecay: 50 * time.Millisecond}},
		{"x-cap8", tracker.Config{SampleCap: 8}},
		{"x-a3", tracker.Config{EWMAAlpha: 0.3}},
		{"x-a5", tracker.Config{EWMAAlpha: 0.5}},
		{"x-a9", tracker.Config{EWMAAlpha: 0.9}},
		{"x-a9-noad", tracker.Config{EWMAAlpha: 0.9, AgeDecay: -1}},
		{"x-ad100-cap8", tracker.Config{AgeDecay: 100 * time.Millisecond, SampleCap: 8}},
		// scale-dispersion.md, sections 4 and 5
		{"x-f05", tracker.Config{ForgetAfter: 500 * time.Millisecond}},
		{"x-f3", tracker.Config{ForgetAfter: 3 * time.Second}},
		{"x-ad1s", tracker.Config{AgeDecay: time.Second}},
		{"x-a03", tracker.Config{EWMAAlpha: 0.03}},
		{"x-cap2", tracker.Config{SampleCap: 2}},
	} {
		tc := v.c
		strategies[v.n] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option {
			return []tailroute.Option{tailroute.WithTracker(tc)}
		}}
	}
	allRules := track.Rule(1)<<track.RuleCount - 1
	base := func(cfg Config, add string) []tailroute.Option {
		tc := tracker.Config{EWMAAlpha: 0.9, AgeDecay: -1, SampleCap: -1, ForgetAfter: -1}
		off := allRules
		w := float64(cfg.Clients)
		opts := []tailroute.Option{tailroute.WithServerLoad(false), tailroute.WithTailTerm(0),
			tailroute.WithServerWorkers(1), tailroute.WithProbe(time.Hour)}
		switch add {
		case "alpha":
			tc.EWMAAlpha = 0.1
		case "agedecay":
			tc.AgeDecay = 250 * time.Millisecond
		case "cap":
			tc.SampleCap = 4
		case "forget":
			tc.ForgetAfter = time.Second
		case "tail":
			opts = append(opts, tailroute.WithTailTerm(2))
		case "workers":
			opts = append(opts, tailroute.WithServerWorkers(4))
		case "workers-drain":
			opts = append(opts, tailroute.WithServerWorkers(4))
			off &^= track.RuleDrainSilence
		case "w1":
			w = 1
		case "fullrate":
			off &^= track.RuleFullRate
		case "knownslow":
			off &^= track.RuleKnownSlow
		case "qweight":
			off &^= track.RuleQueueWeight
		case "all":
			tc = tracker.Config{}
			off = 0
			opts = []tailroute.Option{tailroute.WithServerLoad(false), tailroute.WithServerWorkers(4)}
			w = -1
		}
		opts = append(opts, tailroute.WithTracker(tc), route.WithoutRules(off))
		if w > 0 {
			opts = append(opts, tailroute.WithConcurrencyWeight(w))
		}
		return opts
	}
	for _, add := range []string{"", "alpha", "agedecay", "cap", "forget", "tail", "workers", "workers-drain", "w1", "fullrate", "knownslow", "qweight", "all"} {
		add := add
		strategies["y-c3"+add] = strategy{doc: "scratch", payload: true, engine: func(c Config) []tailroute.Option { return base(c, add) }}
		strategies["z-c3"+add] = strategy{doc: "scratch", engine: func(c Config) []tailroute.Option {
			return append(base(c, add), tailroute.WithServerLoad(true))
		}}
	}
}
