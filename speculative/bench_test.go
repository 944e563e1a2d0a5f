package speculative

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/hedge"
)

// benchPolicy is an allocation-free inner policy, so benchmarks show the
// wrapper's own cost.
type benchPolicy struct {
	fakePolicy
	sels []gocql.SelectedHost
	ml   []gocql.SelectedHost
	i    atomic.Uint64
}

func newBenchPolicy(hosts ...*gocql.HostInfo) *benchPolicy {
	p := &benchPolicy{}
	for _, h := range hosts {
		p.sels = append(p.sels, &fakeSel{p: &p.fakePolicy, h: h})
		p.ml = append(p.ml, &marklessSel{h})
	}
	return p
}

func benchRig(b *testing.B, opts ...tailroute.Option) (*Hedger, gocql.HostSelectionPolicy) {
	src := &fakeSource{}
	src.set(5*time.Millisecond, true)
	h, err := New(append([]tailroute.Option{tailroute.WithSource(src)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	hosts := []*gocql.HostInfo{newHost("127.0.0.1"), newHost("127.0.0.2"), newHost("127.0.0.3")}
	inner := newBenchPolicy(hosts...)
	inner.marks = map[*gocql.HostInfo][]error{}
	p := h.Wrap(&markless{benchPolicy: inner, fn: inner.marklessNext})
	for _, x := range hosts {
		p.AddHost(x)
	}
	return h, p
}

// markless drops Marks (the fake's recording would dominate).
type markless struct {
	*benchPolicy
	fn gocql.NextHost
}

type marklessSel struct{ h *gocql.HostInfo }

func (s *marklessSel) Info() *gocql.HostInfo { return s.h }
func (s *marklessSel) Mark(error)            {}

func (m *markless) Pick(q gocql.ExecutableQuery) gocql.NextHost { return m.fn }

func (p *benchPolicy) marklessNext() gocql.SelectedHost {
	return p.ml[p.i.Add(1)%uint64(len(p.ml))]
}

// BenchmarkPickNotEligible: a non-idempotent query passes straight through.
func BenchmarkPickNotEligible(b *testing.B) {
	_, p := benchRig(b)
	q := &gocql.Query{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Pick(q)().Mark(nil)
	}
}

// BenchmarkPickBudgetSpent: an eligible query when the budget is spent.
func BenchmarkPickBudgetSpent(b *testing.B) {
	_, p := benchRig(b, tailroute.WithBudget(0, time.Second))
	q := idem()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Pick(q)().Mark(nil)
	}
}

// BenchmarkPickArmed: an armed execution whose first attempt wins (95% case).
func BenchmarkPickArmed(b *testing.B) {
	_, p := benchRig(b, tailroute.WithBudget(1, time.Second))
	q := idem()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Pick(q)().Mark(nil)
	}
}

// BenchmarkPickArmedHedged: an armed execution whose hedge fires.
func BenchmarkPickArmedHedged(b *testing.B) {
	_, p := benchRig(b, tailroute.WithBudget(1, time.Second))
	q := idem()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		next := p.Pick(q)
		first := next()
		next().Mark(nil)
		first.Mark(nil)
	}
}

// loadSource is a LoadSource with fixed answers: the load rule runs on
// every eligible Pick (its reading is cached for a few ms).
type loadSource struct {
	fakeSource
	wait time.Duration
	sat  bool
}

func (s *loadSource) MaxSilence() time.Duration { return 0 }
func (s *loadSource) HedgeRoom() tailroute.Room {
	return tailroute.Room{Wait: s.wait, Busy: 1, Saturated: s.sat}
}

func loadRig(b *testing.B, sat bool) gocql.HostSelectionPolicy {
	src := &loadSource{sat: sat}
	src.set(5*time.Millisecond, true)
	h, err := New(tailroute.WithSource(src), tailroute.WithBudget(1, time.Second), tailroute.WithLoadRule(true))
	if err != nil {
		b.Fatal(err)
	}
	hosts := []*gocql.HostInfo{newHost("127.0.0.1"), newHost("127.0.0.2"), newHost("127.0.0.3")}
	inner := newBenchPolicy(hosts...)
	p := h.Wrap(&markless{benchPolicy: inner, fn: inner.marklessNext})
	for _, x := range hosts {
		p.AddHost(x)
	}
	return p
}

// BenchmarkPickLoadRule: an eligible query armed with the delay (its first
// attempt wins), and one the load rule defers (every host queueing).
func BenchmarkPickLoadRule(b *testing.B) {
	for _, c := range []struct {
		name string
		sat  bool
	}{{"armed", false}, {"deferred", true}} {
		b.Run(c.name, func(b *testing.B) {
			p := loadRig(b, c.sat)
			q := idem()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.Pick(q)().Mark(nil)
			}
		})
	}
}

func BenchmarkPickArmedParallel(b *testing.B) {
	_, p := benchRig(b, tailroute.WithBudget(1, time.Second))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		q := idem()
		for pb.Next() {
			p.Pick(q)().Mark(nil)
		}
	})
}

func BenchmarkDelay(b *testing.B) {
	h, _ := benchRig(b)
	spec := h.core.SpecFor(hedge.Armed)
	b.ReportAllocs()
	var d time.Duration
	for i := 0; i < b.N; i++ {
		d += spec.Delay()
	}
	_ = d
}

func BenchmarkBudgetParallel(b *testing.B) {
	bg := hedge.NewBudget(0.05, int64(10*time.Second))
	start := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			now := int64(time.Since(start))
			bg.Request(now)
			if bg.TryReserve(now) {
				bg.Release()
			}
		}
	})
}

func BenchmarkRecorderRecordParallel(b *testing.B) {
	r, _ := NewRecorder(RecorderConfig{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			r.Record(time.Duration(i%10000) * time.Microsecond)
		}
	})
}

func BenchmarkRecorderQuantile(b *testing.B) {
	r, _ := NewRecorder(RecorderConfig{})
	for i := 0; i < 100000; i++ {
		r.Record(time.Duration(i%10000) * time.Microsecond)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.LatencyQuantile(0.95)
	}
}
