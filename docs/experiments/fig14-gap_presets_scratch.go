//go:build ignore

// Scratch presets of docs/experiments/fig14-gap.md section 6: copy this file
// into cmd/vsim/ (without this build line). "c64": the crossval cells at 64
// clients, even demand and 20 % of the clients making 80 %; "skew45": Figure
// 15's skew20 cells at 45 % utilization.
package main

import (
	"fmt"
	"time"
)

func init() {
	presets["c64"] = preset{doc: "scratch: crossval cells with 64 clients, even and 20/80", cells: func() []cell {
		var out []cell
		for _, c := range crossval() {
			for _, skew := range []float64{0, 0.2} {
				k := c
				k.Config.Clients, k.Config.Requests = 64, 40000
				k.Name = c.Name + "-c64"
				if skew > 0 {
					k.Config.SkewClients, k.Config.SkewDemand = skew, 0.8
					k.Name += "-skew20"
				}
				out = append(out, k)
			}
		}
		return out
	}, strategies: paperStrategies, seeds: "1-6"}
	presets["skew45"] = preset{doc: "scratch: fig15's skew20 cells at 45 %", cells: func() []cell {
		var out []cell
		for _, t := range []time.Duration{10, 100, 500} {
			for _, n := range []int{150, 300} {
				c := paper(n, 0.45, t*time.Millisecond)
				c.SkewClients, c.SkewDemand = 0.2, 0.8
				out = append(out, cell{fmt.Sprintf("s45-skew20-T%d-c%d", t, n), c})
			}
		}
		return out
	}, strategies: paperStrategies, seeds: "1-2"}
}
