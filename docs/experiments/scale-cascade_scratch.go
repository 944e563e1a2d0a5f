//go:build ignore

// Scratch strategies of docs/experiments/scale-dispersion.md, section 5:
// copy this file into internal/vsim/ (without this build line) and run
//
//	go run ./cmd/vsim -preset scale -cells u80-cascade,u50-cascade -seeds 1 -parallel 2 \
//	  -strategies token-aware,tailroute,pb03,pb1,x-f05,x-f3,x-ad1s,x-a03,x-cap2 -out out/casc
//
// The two ranking variants of that section were env-switched lines in
// internal/route/rank.go's rankC3, right after core.OrderByScore, for a
// client with w = p.weight() >= 32:
//
//	SCR_P2C: i, j two distinct random indices below eligible; the candidate
//	         at min(i, j) goes first (two random choices over the ranked list)
//	SCR_SOFT=r: x = (c[1].Score/c[0].Score - 1)/(r - 1); if x < 1, swap c[0]
//	         and c[1] with probability (1 - x)/2 (a coin between near-ties)
package vsim

import (
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

func init() {
	for _, v := range []struct {
		n     string
		share float64
	}{{"pb03", 0.3}, {"pb1", 1}} { // poll budget share (default 0.1), 100ms..2s
		v := v
		strategies[v.n] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option {
			return []tailroute.Option{tailroute.WithPollBudget(v.share, 100*time.Millisecond, 2*time.Second)}
		}}
	}
	for _, v := range []struct {
		n string
		c tracker.Config
	}{
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
}
