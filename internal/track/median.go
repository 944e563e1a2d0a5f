package track

import (
	"sync"
	"sync/atomic"
	"time"
)

// medianCache is a host's last LatencyMedian, kept so that the rules that
// read a median on every request (known-slow, zone) merge the host's
// histogram only when what it holds may have changed. An entry is valid
// while the histogram's sub-window (hist.Rolling.Window), the host's
// samples and its censored samples (orphan) are those it was computed at;
// Reset empties it. Readers never wait: the entry is a sequence lock, and
// a reader that finds it being written merges, as does one that misses; a
// writer that finds another writing does not store.
type medianCache struct {
	mu       sync.Mutex    // writers (TryLock) and reset
	seq      atomic.Uint64 // odd while being written
	window   atomic.Int64  // 1 + the sub-window of the entry; 0 = empty
	samples  atomic.Uint64 // Host.samples at the entry
	censored atomic.Uint64 // Host.censored at the entry
	median   atomic.Int64
	n        atomic.Uint64
}

// LatencyMedian returns the median of this host's latencies in the window
// ending at now and the number of samples it rests on (see
// tracker.Config.LatencyWindow), from the cache when it is valid (see
// medianCache).
func (h *Host) LatencyMedian(now time.Duration) (time.Duration, uint64) {
	c := &h.median
	seq := c.seq.Load() // before the key: a reset after it fails the store
	window, samples, censored := h.hist.Window(now)+1, h.samples.Load(), h.censored.Load()
	if seq&1 == 0 && c.window.Load() == window && c.samples.Load() == samples && c.censored.Load() == censored {
		d, n := time.Duration(c.median.Load()), c.n.Load()
		if c.seq.Load() == seq {
			return d, n
		}
	}
	d, n := h.hist.Quantile(now, 0.5)
	if seq&1 == 0 && c.mu.TryLock() {
		if c.seq.Load() == seq {
			c.seq.Store(seq + 1)
			c.window.Store(window)
			c.samples.Store(samples)
			c.censored.Store(censored)
			c.median.Store(int64(d))
			c.n.Store(n)
			c.seq.Store(seq + 2)
		}
		c.mu.Unlock()
	}
	return d, n
}

// reset empties the cache (Host.Reset, once the histogram is empty).
func (c *medianCache) reset() {
	c.mu.Lock()
	seq := c.seq.Load()
	c.seq.Store(seq + 1)
	c.window.Store(0)
	c.seq.Store(seq + 2)
	c.mu.Unlock()
}
