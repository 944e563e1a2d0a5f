package sim

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// BenchmarkGocqlReads measures simple prepared reads per second that one
// ZeroService node sustains from gocql (driver and simulator share the box).
func BenchmarkGocqlReads(b *testing.B) {
	c, s := oneNode(b, ServiceModel{ZeroService: true}, false)
	b.SetParallelism(64) // 64 x GOMAXPROCS client goroutines
	var failed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var f string
		for pb.Next() {
			if err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Consistency(gocql.One).Scan(&f); err != nil {
				failed.Add(1)
			}
		}
	})
	el := time.Since(start)
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d reads failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "reads/s")
	if got := c.Nodes()[0].Stats().Served; got < uint64(b.N) {
		b.Fatalf("node served %d < %d reads", got, b.N)
	}
}
