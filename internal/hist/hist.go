// Package hist is the latency histogram of the module: a lock-free rolling
// log-linear histogram, one per host in package tracker (merged for the
// cluster-wide LatencyQuantile) and one in the hedging Recorder.
//
// It is hand-written rather than hdrhistogram-go because it is updated from
// many goroutines without a lock (one atomic add per sample) and read while
// it is written; hdrhistogram is not safe for concurrent use. Quantiles follow
// hdrhistogram's convention, so they compare with the load generator's
// reports: the sample of rank round(q*n) (at least 1), reported as the
// highest value of its bucket.
package hist

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket layout: log-linear over nanoseconds with 16 sub-buckets per power
// of two, so a bucket is at most 1/16 of its values wide and a reported
// quantile is at most 6.25% above the true one; values 0 .. 2^41 ns (~37
// min), larger ones land in the last bucket, negative ones in the first.
const (
	subBits  = 4
	subCount = 1 << subBits
	maxShift = 36 // the top bucket row ends at 2^(maxShift+subBits+1) ns
	// Buckets is the number of buckets of a histogram.
	Buckets = (maxShift + 2) * subCount
)

// bucketOf maps a latency in nanoseconds to its bucket.
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
		return Buckets - 1
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

// Counts is a plain (not concurrent) histogram, the sum of one or more
// Rolling histograms (AddTo).
type Counts [Buckets]uint64

// Quantile returns the q-quantile (0 < q <= 1) of the n samples in m: the
// highest value of the bucket holding the sample of rank round(q*n), at
// least 1; 0 when n is 0.
func (m *Counts) Quantile(n uint64, q float64) time.Duration {
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
			return time.Duration(bucketUpper(i))
		}
	}
	// n was more than m holds: the rank lies beyond the last sample
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] > 0 {
			return time.Duration(bucketUpper(i))
		}
	}
	return 0
}

type slot struct {
	tag    atomic.Int64 // 1 + the sub-window the counts belong to; 0 = empty
	counts [Buckets]atomic.Uint64
}

// Rolling is a histogram over a sliding window made of sub-windows of equal
// width: a sample counts while its sub-window is the current one or one of
// the live-1 before it, i.e. for between (live-1) and live widths. Times are
// durations on the caller's clock (tracker.Clock); times before 0 count as
// 0.
//
// Recording is one atomic add with no allocation, and no shared total:
// writers of different values touch different cache lines. Once per
// sub-window one writer clears the slot being recycled, under a mutex; the
// other writers of the new sub-window wait for it, so none of their samples
// is cleared away. A sample dated before the sub-window its slot holds is
// dropped. Reads are lock-free and see samples being written. The zero value
// is not ready: call Init.
type Rolling struct {
	width int64 // sub-window width, ns
	mu    sync.Mutex
	slots []slot // one per live sub-window
}

// Init sets the sub-window width and the number of live sub-windows
// (live >= 1) and empties the histogram.
func (r *Rolling) Init(width time.Duration, live int) {
	r.width = int64(width)
	r.slots = make([]slot, live)
}

func (r *Rolling) epoch(now time.Duration) int64 {
	if now < 0 {
		return 0
	}
	return int64(now) / r.width
}

// Record adds a sample v observed at now.
func (r *Rolling) Record(now, v time.Duration) {
	e := r.epoch(now)
	s := &r.slots[e%int64(len(r.slots))]
	if t := s.tag.Load(); t != e+1 {
		if t > e+1 || !r.advance(s, e+1) {
			return // dated before the sub-window its slot holds now
		}
	}
	s.counts[bucketOf(int64(v))].Add(1)
}

// advance recycles s for the sub-window tagged tag unless it holds a later
// one; it reports whether s now holds tag.
func (r *Rolling) advance(s *slot, tag int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := s.tag.Load()
	if t < tag {
		for i := range s.counts {
			s.counts[i].Store(0)
		}
		s.tag.Store(tag)
		return true
	}
	return t == tag
}

// Window returns the sub-window now falls in: what the window ending at
// now holds changes only with it and with Record and Reset.
func (r *Rolling) Window(now time.Duration) int64 { return r.epoch(now) }

// Reset empties the histogram.
func (r *Rolling) Reset() {
	r.mu.Lock()
	for i := range r.slots {
		r.slots[i].tag.Store(0)
	}
	r.mu.Unlock()
}

// live reports whether s holds a sub-window of the window ending at now.
func (r *Rolling) live(s *slot, now time.Duration) bool {
	cur := r.epoch(now) + 1
	t := s.tag.Load()
	return t != 0 && t <= cur && cur-t < int64(len(r.slots))
}

// Count returns the number of samples in the window ending at now (a scan
// of every bucket, as AddTo).
func (r *Rolling) Count(now time.Duration) uint64 {
	var m Counts
	return r.AddTo(now, &m)
}

// AddTo adds the counts of the window ending at now to m and returns their
// number.
func (r *Rolling) AddTo(now time.Duration, m *Counts) uint64 {
	var n uint64
	for i := range r.slots {
		s := &r.slots[i]
		if !r.live(s, now) {
			continue
		}
		for j := range m {
			c := s.counts[j].Load()
			m[j] += c
			n += c
		}
	}
	return n
}

// Quantile returns the q-quantile (see Counts.Quantile) of the window ending
// at now and the number of samples it is based on.
func (r *Rolling) Quantile(now time.Duration, q float64) (time.Duration, uint64) {
	var m Counts
	n := r.AddTo(now, &m)
	return m.Quantile(n, q), n
}
