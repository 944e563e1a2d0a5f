package hedge

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Latency histogram layout: log-linear buckets over nanoseconds with 16
// sub-buckets per power of two (relative bucket width <= 1/16, so a
// quantile is reported within ~6% of the true value), covering 0 .. 2^40 ns
// (~18 min); larger values land in the last bucket.
const (
	subBits     = 4
	subCount    = 1 << subBits
	maxShift    = 36 // 2^(maxShift+subBits+1) ns = 2^41 ns
	histBuckets = (maxShift + 2) * subCount
	recSlots    = 5 // sub-windows; the window spans recSlots-1 full ones plus the current one
)

// bucketOf maps a latency in nanoseconds to its histogram bucket.
func bucketOf(ns int64) int {
	if ns < 0 {
		ns = 0
	}
	v := uint64(ns)
	if v < 2*subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	if shift > maxShift {
		return histBuckets - 1
	}
	return (shift+1)*subCount + int(v>>uint(shift)) - subCount
}

// bucketUpper returns the largest latency (ns) that falls in bucket i.
func bucketUpper(i int) int64 {
	if i < 2*subCount {
		return int64(i)
	}
	shift := i/subCount - 1
	mant := int64(i%subCount + subCount)
	return (mant+1)<<uint(shift) - 1
}

type recSlot struct {
	epoch  atomic.Int64 // epoch+1 of the sub-window the counts belong to; 0 = empty
	counts [histBuckets]atomic.Uint64
}

// RecorderConfig configures a Recorder. Zero fields take their defaults.
type RecorderConfig struct {
	// Window is how much recent history quantiles are computed over;
	// default 10s. Samples are kept in 4 sub-windows of Window/4 plus the
	// current one, so a sample counts for between Window and 5/4 Window.
	Window time.Duration
	// MinSamples is how many samples the window must hold before
	// LatencyQuantile reports a value; default 100 (a p95 needs >> 20).
	MinSamples int
	// Clock returns the current time for quantile queries; default time.Now.
	Clock func() time.Time
}

// Recorder is a small lock-free latency source: a sliding-window log-linear
// histogram of attempt latencies, fed by a driver's query observer (the
// adapters call Record). It lets hedging adapt with a driver's built-in
// host selection policies, which have no latency tracker of their own.
//
// Recording is one atomic add (plus, once per sub-window, clearing a
// recycled sub-window), with no allocation and no lock. Quantiles scan the
// histogram (a few microseconds) and are meant to be read off the hot path,
// as the Hedger does every refresh interval. A sample racing with the
// recycling of its sub-window may be lost; that is a few samples per
// sub-window at most and irrelevant for a percentile estimate.
//
// What is recorded: successful attempts, and attempts cancelled because
// another attempt of the same execution won (or the caller gave up). A
// cancelled loser's elapsed time is a lower bound of its latency
// (censored): keeping it preserves the mass of the tail above the hedge
// delay, so hedging does not shrink the observed p95 and feed back into
// ever earlier hedges. Other errors are not latency samples and are
// skipped.
type Recorder struct {
	now        func() time.Time
	base       time.Time
	slotNs     int64
	minSamples uint64
	slots      [recSlots]recSlot
}

// NewRecorder returns a Recorder; it reports an error naming a bad field.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if cfg.Window == 0 {
		cfg.Window = 10 * time.Second
	}
	if cfg.Window < 4*time.Millisecond || cfg.Window > 24*time.Hour {
		return nil, fmt.Errorf("speculative: RecorderConfig.Window = %v, allowed 4ms..24h (0 = default 10s)", cfg.Window)
	}
	if cfg.MinSamples == 0 {
		cfg.MinSamples = 100
	}
	if cfg.MinSamples < 1 || cfg.MinSamples > 1<<30 {
		return nil, fmt.Errorf("speculative: RecorderConfig.MinSamples = %d, allowed 1..%d (0 = default 100)", cfg.MinSamples, 1<<30)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	return &Recorder{
		now:        cfg.Clock,
		base:       cfg.Clock(),
		slotNs:     int64(cfg.Window) / (recSlots - 1),
		minSamples: uint64(cfg.MinSamples),
	}, nil
}

func (r *Recorder) epochAt(t time.Time) int64 {
	d := int64(t.Sub(r.base))
	if d < 0 {
		return 0
	}
	return d / r.slotNs
}

// Record adds one latency sample observed at time at.
func (r *Recorder) Record(latency time.Duration, at time.Time) {
	e := r.epochAt(at)
	s := &r.slots[e%recSlots]
	tag := e + 1
	if cur := s.epoch.Load(); cur != tag {
		if cur > tag {
			return // a late sample for a sub-window already recycled
		}
		if s.epoch.CompareAndSwap(cur, tag) {
			for i := range s.counts {
				s.counts[i].Store(0)
			}
		}
	}
	s.counts[bucketOf(int64(latency))].Add(1)
}

// LatencyQuantile returns the q-quantile (0 < q <= 1) of the latencies in
// the window, rounded up to its histogram bucket; false when the window
// holds fewer than MinSamples samples or q is out of range.
func (r *Recorder) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	cur := r.epochAt(r.now()) + 1
	var live [recSlots]*recSlot
	n := 0
	for i := range r.slots {
		if t := r.slots[i].epoch.Load(); t != 0 && t <= cur && cur-t < recSlots {
			live[n] = &r.slots[i]
			n++
		}
	}
	var total uint64
	for _, s := range live[:n] {
		for i := range s.counts {
			total += s.counts[i].Load()
		}
	}
	if total < r.minSamples || total == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var cum uint64
	for i := 0; i < histBuckets; i++ {
		for _, s := range live[:n] {
			cum += s.counts[i].Load()
		}
		if cum >= rank {
			return time.Duration(bucketUpper(i)), true
		}
	}
	// counts grew while scanning: the rank lies in the last bucket
	return time.Duration(bucketUpper(histBuckets - 1)), true
}
