package track

import (
	"testing"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// BenchmarkObserveParallel is the hot path of a response: R_s, histogram,
// health buckets and rate control of one host, from many goroutines.
func BenchmarkObserveParallel(b *testing.B) {
	tr, err := New(tracker.Config{})
	if err != nil {
		b.Fatal(err)
	}
	h := tr.Host("a")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			h.Observe(tr.Now(), time.Duration(100+i%10000)*time.Microsecond, Success)
		}
	})
}

// BenchmarkLatencyQuantile merges 6 hosts' histograms (the cache is
// defeated by moving the clock back and forth by its TTL).
func BenchmarkLatencyQuantile(b *testing.B) {
	clk := tracker.NewManualClock(time.Second)
	tr, err := New(tracker.Config{Clock: clk})
	if err != nil {
		b.Fatal(err)
	}
	hosts := []*Host{tr.Host("a"), tr.Host("b"), tr.Host("c"), tr.Host("d"), tr.Host("e"), tr.Host("f")}
	for i := 0; i < 60000; i++ {
		hosts[i%len(hosts)].Observe(tr.Now(), time.Duration(100+i%10000)*time.Microsecond, Success)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		clk.Set(time.Second + time.Duration(i%2)*QuantileCacheTTL)
		if _, ok := tr.LatencyQuantile(0.95); !ok {
			b.Fatal("no quantile")
		}
	}
}
