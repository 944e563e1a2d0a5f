package peers

import (
	"math"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// TestPeakEWMACost: the cost formula by hand. A new host costs the default
// 30 ms x (0+1); with two pending, 30 x 3 = 90 ms. A 50 ms answer is a peak:
// the estimate becomes 50 ms, one pending: 100 ms. A 10 ms answer 10 s
// later (one decay period) moves it to 50 e^-1 + 10 (1 - e^-1) =
// 24.715178 ms; reading the load 10 s later decays it toward 0:
// 24.715178 e^-1 = 9.092206 ms.
func TestPeakEWMACost(t *testing.T) {
	p := NewPeakEWMA(config(1))
	for _, c := range []struct {
		step func()
		at   time.Duration
		want float64
	}{
		{func() {}, 0, 30e6},
		{func() { p.Sent(0, 0); p.Sent(0, 0) }, 0, 90e6},
		{func() { p.Done(10*ms, 0, 50*ms, selector.Feedback{}) }, 10 * ms, 100e6},
		{func() { p.Done(10*time.Second+10*ms, 0, 10*ms, selector.Feedback{}) }, 10*time.Second + 10*ms, 24715177.646857694},
		{func() {}, 20*time.Second + 10*ms, 9092205.741178932},
	} {
		c.step()
		if got := p.Load(c.at, 0); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("load at %v = %.3f ns, want %.3f", c.at, got, c.want)
		}
	}
}

// TestPeakEWMAOrder: of two replicas the cheaper goes first, whatever the
// draw: host 0 with three pending costs 30 x 4 = 120 ms, host 1 30 ms. Of
// three, the dearest never wins (it loses both pairs it can be in).
func TestPeakEWMAOrder(t *testing.T) {
	p := NewPeakEWMA(config(3))
	for range 3 {
		p.Sent(0, 0)
	}
	for range 100 {
		r := []int32{0, 1}
		if k := p.Order(0, r); r[0] != 1 || r[1] != 0 || k != 2 {
			t.Fatalf("Order = %v, want [1 0]", r)
		}
	}
	got := firsts(p, 0, []int32{0, 1, 2}, 300)
	if got[0] != 0 || got[1] == 0 || got[2] == 0 {
		t.Errorf("first replicas %v: want 1 and 2, never 0", got)
	}
	p.Reset(0, 0) // forgotten: back to the default RTT, nothing pending
	if l := p.Load(0, 0); l != 30e6 {
		t.Errorf("load after Reset = %v, want 30 ms", l)
	}
}
