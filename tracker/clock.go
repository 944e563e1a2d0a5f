package tracker

import (
	"sync/atomic"
	"time"
)

// Clock is the module's one time source: the Tracker's (Config.Clock), the
// policies' (tailroute.WithClock) and the Hedger's (tailroute.WithClock) take
// this type; the default everywhere is SystemClock, tests inject a
// ManualClock. Now returns monotonic time as a duration since an arbitrary
// fixed origin; Sleep blocks for d (used for the bounded backpressure wait of
// Algorithm 1).
//
// A Host's hot-path methods (Begin, Observe, View, ConsumeToken, ...) take
// the time as now, as golang.org/x/time/rate's AllowN takes t, so a request
// reads the clock once; now must come from the Tracker's Clock
// (Tracker.Now). Reads off the hot path (Snapshot, LatencyQuantile,
// MaxSilence, Reset) read the clock themselves.
type Clock interface {
	Now() time.Duration
	Sleep(d time.Duration)
}

// SystemClock is the real monotonic clock. The zero value is ready to use.
type SystemClock struct{}

var origin = time.Now()

// Now returns the monotonic time elapsed since the process started.
func (SystemClock) Now() time.Duration { return time.Since(origin) }

// Sleep sleeps for d.
func (SystemClock) Sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

// ManualClock is a Clock for tests: time only moves when Advance, Set or
// Sleep is called. Sleep advances the clock by d instead of blocking, so code
// that waits is deterministic and instantaneous under test. Safe for
// concurrent use.
type ManualClock struct {
	now    atomic.Int64
	sleeps atomic.Int64
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Duration) *ManualClock {
	c := &ManualClock{}
	c.now.Store(int64(start))
	return c
}

// Now returns the current manual time.
func (c *ManualClock) Now() time.Duration { return time.Duration(c.now.Load()) }

// Advance moves the clock forward by d and returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Duration {
	return time.Duration(c.now.Add(int64(d)))
}

// Set sets the clock to t.
func (c *ManualClock) Set(t time.Duration) { c.now.Store(int64(t)) }

// Sleep advances the clock by d (it does not block) and counts the call.
func (c *ManualClock) Sleep(d time.Duration) {
	c.sleeps.Add(1)
	if d > 0 {
		c.now.Add(int64(d))
	}
}

// Sleeps returns how many times Sleep was called.
func (c *ManualClock) Sleeps() int64 { return c.sleeps.Load() }
