package tracker

import (
	"sync"
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

	mu     sync.Mutex // guards timers
	timers []*manualTimer
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
	now := time.Duration(c.now.Add(int64(d)))
	c.fire()
	return now
}

// Set sets the clock to t.
func (c *ManualClock) Set(t time.Duration) { c.now.Store(int64(t)); c.fire() }

// Sleep advances the clock by d (it does not block) and counts the call.
func (c *ManualClock) Sleep(d time.Duration) {
	c.sleeps.Add(1)
	if d > 0 {
		c.now.Add(int64(d))
		c.fire()
	}
}

// Sleeps returns how many times Sleep was called.
func (c *ManualClock) Sleeps() int64 { return c.sleeps.Load() }

// Timer is a one-shot timer of a TimerClock. C receives the clock's Now
// once per expiry (a buffer of one: an expiry nobody has received yet is
// not repeated); Reset rearms it to expire d after the clock's now; Stop
// disarms it.
type Timer interface {
	C() <-chan time.Duration
	Reset(d time.Duration)
	Stop()
}

// TimerClock is a Clock that also makes timers. Background schedules of
// the engine (the server-load poller) take their timers from the policy's
// clock when it is a TimerClock, as SystemClock and ManualClock are, else
// from the wall clock.
type TimerClock interface {
	Clock
	NewTimer(d time.Duration) Timer
}

// NewTimer returns a wall-clock timer that expires after d.
func (SystemClock) NewTimer(d time.Duration) Timer {
	t := &systemTimer{c: make(chan time.Duration, 1)}
	t.t = time.AfterFunc(d, func() {
		select {
		case t.c <- (SystemClock{}).Now():
		default:
		}
	})
	return t
}

type systemTimer struct {
	t *time.Timer
	c chan time.Duration
}

func (t *systemTimer) C() <-chan time.Duration { return t.c }
func (t *systemTimer) Reset(d time.Duration)   { t.t.Reset(d) }
func (t *systemTimer) Stop()                   { t.t.Stop() }

// NewTimer returns a timer that expires when Advance, Set or Sleep moves
// the clock to d after now or later.
func (c *ManualClock) NewTimer(d time.Duration) Timer {
	t := &manualTimer{clk: c, c: make(chan time.Duration, 1)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

// Timers returns how many timers of the clock are armed (tests wait for a
// goroutine to arm its next timer before they advance the clock).
func (c *ManualClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.armed {
			n++
		}
	}
	return n
}

// fire sends to every armed timer that has expired.
func (c *ManualClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	for _, t := range c.timers {
		if t.armed && t.at <= now {
			t.armed = false
			select {
			case t.c <- now:
			default:
			}
		}
	}
}

type manualTimer struct {
	clk   *ManualClock
	c     chan time.Duration
	at    time.Duration // guarded by clk.mu
	armed bool          // guarded by clk.mu
}

func (t *manualTimer) C() <-chan time.Duration { return t.c }

func (t *manualTimer) Reset(d time.Duration) {
	t.clk.mu.Lock()
	t.at, t.armed = t.clk.Now()+d, true
	t.clk.mu.Unlock()
	t.clk.fire()
}

func (t *manualTimer) Stop() {
	t.clk.mu.Lock()
	t.armed = false
	t.clk.mu.Unlock()
}

var (
	_ TimerClock = SystemClock{}
	_ TimerClock = (*ManualClock)(nil)
)
