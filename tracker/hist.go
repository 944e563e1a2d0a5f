package tracker

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// The latency histogram is log-linear: 8 sub-buckets per power of two, so a
// bucket is at most 12.5% wide and the midpoint estimate is within ~6% of any
// value in it. Values are nanoseconds, capped at 2^40 ns (~18 min).
//
// It is hand-written rather than hdrhistogram-go because it must be updated
// from many goroutines without a lock (one atomic add per sample) and be read
// while it is written; hdrhistogram is not safe for concurrent use.
const (
	histSubBits = 3
	histSub     = 1 << histSubBits
	histMaxExp  = 40
	histBuckets = (histMaxExp-histSubBits+1)*histSub + histSub
)

func histIndex(v int64) int {
	if v < histSub {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1
	if e > histMaxExp {
		return histBuckets - 1
	}
	sub := int(uint64(v)>>(e-histSubBits)) & (histSub - 1)
	return (e-histSubBits+1)*histSub + sub
}

// histValue returns the midpoint of bucket i.
func histValue(i int) int64 {
	if i < histSub {
		return int64(i)
	}
	e := i/histSub + histSubBits - 1
	sub := int64(i % histSub)
	lower := (histSub + sub) << (e - histSubBits)
	return lower + (int64(1)<<(e-histSubBits))/2
}

func mod3(x int64) int64 { return ((x % 3) + 3) % 3 }

type histWindow struct {
	counts [histBuckets]atomic.Uint64
	total  atomic.Uint64
}

func (w *histWindow) clear() {
	for i := range w.counts {
		w.counts[i].Store(0)
	}
	w.total.Store(0)
}

// rollingHist is a histogram over the current and the previous window of
// `width`. Three slots rotate; the slot for a new window is cleared (under a
// mutex taken once per window) before anyone records into it.
type rollingHist struct {
	width int64
	epoch atomic.Int64
	mu    sync.Mutex
	w     [3]histWindow
}

func (r *rollingHist) init(width time.Duration, now time.Duration) {
	r.width = int64(width)
	r.epoch.Store(int64(now) / r.width)
}

func (r *rollingHist) advance(e int64) {
	r.mu.Lock()
	cur := r.epoch.Load()
	if e > cur {
		// the slot of e holds e-3 or older: clear it; if the previous
		// window e-1 was skipped, its slot holds stale data too.
		r.w[mod3(e)].clear()
		if cur < e-1 {
			r.w[mod3(e-1)].clear()
		}
		r.epoch.Store(e)
	}
	r.mu.Unlock()
}

func (r *rollingHist) record(now time.Duration, v time.Duration) {
	e := int64(now) / r.width
	cur := r.epoch.Load()
	if e > cur {
		r.advance(e)
	} else if e < cur-1 {
		return
	}
	w := &r.w[mod3(e)]
	w.counts[histIndex(int64(v))].Add(1)
	w.total.Add(1)
}

func (r *rollingHist) reset(now time.Duration) {
	r.mu.Lock()
	for i := range r.w {
		r.w[i].clear()
	}
	r.epoch.Store(int64(now) / r.width)
	r.mu.Unlock()
}

// windows returns the slots that belong to the current and previous window.
func (r *rollingHist) windows(now time.Duration) (a, b *histWindow) {
	e := int64(now) / r.width
	ep := r.epoch.Load()
	if ep >= e-1 {
		a = &r.w[mod3(ep)]
	}
	if ep-1 >= e-1 {
		b = &r.w[mod3(ep-1)]
	}
	return a, b
}

// count returns the number of samples in the current and previous window.
func (r *rollingHist) count(now time.Duration) uint64 {
	a, b := r.windows(now)
	var n uint64
	if a != nil {
		n += a.total.Load()
	}
	if b != nil {
		n += b.total.Load()
	}
	return n
}

// addTo adds the counts of the last one to two windows to m and returns
// their number.
func (r *rollingHist) addTo(now time.Duration, m *[histBuckets]uint64) uint64 {
	a, b := r.windows(now)
	var n uint64
	for _, w := range [2]*histWindow{a, b} {
		if w == nil || w.total.Load() == 0 {
			continue
		}
		for i := range m {
			c := w.counts[i].Load()
			m[i] += c
			n += c
		}
	}
	return n
}

// quantile returns the q-quantile of the last one to two windows and the
// number of samples it is based on.
func (r *rollingHist) quantile(now time.Duration, q float64) (time.Duration, uint64) {
	var m [histBuckets]uint64
	n := r.addTo(now, &m)
	return quantileOf(&m, n, q), n
}

// quantileOf returns the q-quantile of histogram counts m holding n samples.
func quantileOf(m *[histBuckets]uint64, n uint64, q float64) time.Duration {
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i, c := range m {
		cum += c
		if c > 0 && cum >= rank {
			return time.Duration(histValue(i))
		}
	}
	return 0
}
