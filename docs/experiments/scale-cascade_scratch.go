//go:build ignore

// Scratch poll budgets of docs/experiments/scale-dispersion.md, section 5,
// and fig14-gap.md, section 8: copy this file and fig14-gap_scratch.go (its
// "x-" tracker variants) into internal/vsim/ (without the build lines) and
// run
//
//	go run ./cmd/vsim -preset scale -cells u80-cascade,u50-cascade -seeds 1 -parallel 2 \
//	  -strategies token-aware,tailroute,pb03,pb1,x-f05,x-f3,x-ad1s,x-a03,x-cap2 -out out/casc
//	go run ./cmd/vsim -preset fig14 -strategies pb1q -out out/pb1q   # likewise fig15
//
// "pbS" polls at share S of the requests (default 0.1), 100ms..2s; "pbSq"
// also counts the polled queue for every host (RuleIdleQueue off).
//
// The two ranking variants of scale-dispersion.md section 5 were
// env-switched lines in internal/route/rank.go's rankC3, right after
// core.OrderByScore, for a client with w = p.weight() >= 32:
//
//	SCR_P2C: i, j two distinct random indices below eligible; the candidate
//	         at min(i, j) goes first (two random choices over the ranked list)
//	SCR_SOFT=r: x = (c[1].Score/c[0].Score - 1)/(r - 1); if x < 1, swap c[0]
//	         and c[1] with probability (1 - x)/2 (a coin between near-ties)
package vsim

import (
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
)

func init() {
	for _, v := range []struct {
		n     string
		share float64
		off   track.Rule
	}{{"pb03", 0.3, 0}, {"pb1", 1, 0}, {"pb03q", 0.3, track.RuleIdleQueue}, {"pb1q", 1, track.RuleIdleQueue}} {
		v := v
		strategies[v.n] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option {
			return []tailroute.Option{tailroute.WithPollBudget(v.share, 100*time.Millisecond, 2*time.Second), route.WithoutRules(v.off)}
		}}
	}
}
