package vsim

import (
	"strings"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// ablation is tailroute as policy.New() gives it with one rule removed:
// the strategy "-<name>". The rules with an option are removed through it
// (set to the paper's behaviour where the paper has one), the others
// through route.WithoutRules.
type ablation struct {
	name, doc string
	opts      []tailroute.Option
}

func ablations() []ablation {
	out := []ablation{
		{"tail-term", "k = 0, the paper's score (WithTailTerm(0))", []tailroute.Option{tailroute.WithTailTerm(0)}},
		{"rate-control", "no CUBIC rate control nor backpressure (WithRateControl(false))", []tailroute.Option{tailroute.WithRateControl(false)}},
		{"backpressure", "no wait when every replica is over its rate (WithMaxBackpressureWait(0))", []tailroute.Option{tailroute.WithMaxBackpressureWait(0)}},
		{"probe", "no recovery probes of a failing host (WithProbe(1h))", []tailroute.Option{tailroute.WithProbe(time.Hour)}},
		{"health", "no health cascade (WithHealthTolerance(1))", []tailroute.Option{tailroute.WithHealthTolerance(1)}},
		{"stall", "no stall rule (WithStall(1000, 1m))", []tailroute.Option{tailroute.WithStall(1000, time.Minute)}},
		{"sample-cap", "no cap on R_s samples (tracker SampleCap < 0)", []tailroute.Option{tailroute.WithTracker(tracker.Config{SampleCap: -1})}},
		{"age-decay", "plain EWMA for R_s (tracker AgeDecay < 0)", []tailroute.Option{tailroute.WithTracker(tracker.Config{AgeDecay: -1})}},
		{"forget", "no idle forgetting (tracker ForgetAfter < 0)", []tailroute.Option{tailroute.WithTracker(tracker.Config{ForgetAfter: -1})}},
	}
	for i, n := range track.RuleNames {
		out = append(out, ablation{n, "route.WithoutRules: track.Rule " + n, []tailroute.Option{route.WithoutRules(track.Rule(1) << i)}})
	}
	return out
}

func init() {
	for _, a := range ablations() {
		opts := a.opts
		strategies["-"+a.name] = strategy{doc: "ablation: tailroute with " + a.doc,
			engine: func(Config) []tailroute.Option { return opts }}
	}
}

// AblationNames returns the ablation strategies' names ("-<rule>"),
// comma-separated, in the order of the rules.
func AblationNames() string {
	var names []string
	for _, a := range ablations() {
		names = append(names, "-"+a.name)
	}
	return strings.Join(names, ",")
}
