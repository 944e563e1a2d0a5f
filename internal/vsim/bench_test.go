package vsim

import (
	"testing"
	"time"
)

// BenchmarkPaperCell runs one of the C3 paper's §6 cells (50 servers, 300
// clients, 600,000 requests, utilization 70 %, T = 100 ms) per strategy:
// the simulator's speed target is one such cell in at most 30 s on one
// core (go test -run '^$' -bench PaperCell -benchtime 1x -cpu 1 ./internal/vsim/).
func BenchmarkPaperCell(b *testing.B) {
	for _, st := range []string{"tailroute", "tailroute-nopoll", "c3", "oracle"} {
		b.Run(st, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := Run(Config{Strategy: st, Seed: uint64(i + 1), FluctuationT: 100 * time.Millisecond, ReadRepair: 0.1})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Quantile(0.99))/1e6, "p99-ms")
			}
		})
	}
}
