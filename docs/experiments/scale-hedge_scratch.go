//go:build ignore

// Scratch hedging variants of docs/experiments/scale-hedging.md: copy this
// file into internal/vsim/ (without the build line) and run
//
//	go run ./cmd/vsim -preset scale -cells u50-pauses -seeds 1 -parallel 2 \
//	  -strategies tailroute+hedge,th-b10,th-b15,th-b20 -out out/hpause
//
// "th-bP" is tailroute+hedge with a budget of P % over 10 s
// (tailroute.WithBudget); "th-bP-nl" also without the load rule;
// "th-qQ-bP" with the delay at the Q-th percentile (tailroute.WithQuantile).
package vsim

import (
	"fmt"
	"time"

	"github.com/tailroute/tailroute"
)

func init() {
	for _, p := range []int{10, 15, 20, 30} {
		b := []tailroute.Option{tailroute.WithBudget(float64(p)/100, 10*time.Second)}
		strategies[fmt.Sprintf("th-b%d", p)] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option { return nil },
			hedge: hedgePolicy, hedgeOpt: b}
		strategies[fmt.Sprintf("th-b%d-nl", p)] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option { return nil },
			hedge: hedgePolicy, hedgeOpt: append(b[:1:1], tailroute.WithLoadRule(false))}
		for _, q := range []int{80, 85, 90} {
			strategies[fmt.Sprintf("th-q%d-b%d", q, p)] = strategy{doc: "scratch", engine: func(Config) []tailroute.Option { return nil },
				hedge: hedgePolicy, hedgeOpt: append(b[:1:1], tailroute.WithQuantile(float64(q)/100))}
		}
	}
}
