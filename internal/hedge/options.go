package hedge

import (
	"fmt"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// config is a Hedger's configuration, built by the Options and checked by New.
type config struct {
	source       LatencySource
	quantile     float64
	minDelay     time.Duration
	maxDelay     time.Duration
	refresh      time.Duration
	fraction     float64
	window       time.Duration
	errorHoldoff time.Duration
	burstHorizon time.Duration
	burstFactor  float64
	burstFloor   int
	clock        tracker.Clock
	loadOff      bool // WithLoadRule(false)

	errs []error // bad option values, reported by New
}

// Option configures a Hedger. Options are validated once, by New: a bad
// value is reported there as an error naming the option, the field, the
// value and the allowed range (every bad option, joined), as the policy
// package does.
type Option func(*config)

// errorf returns an error with the package's prefix.
func errorf(format string, a ...any) error {
	return fmt.Errorf("speculative: "+format, a...)
}

// fail records a bad option value for New to report.
func (c *config) fail(format string, a ...any) { c.errs = append(c.errs, errorf(format, a...)) }

// WithSource sets the latency source the hedge delay follows, e.g. the
// Policy of our policy package (WithSource(p)). Default: a Recorder the
// Hedger owns, which Wire installs as the cluster's QueryObserver.
func WithSource(s LatencySource) Option {
	return func(c *config) {
		if IsNil(s) {
			c.fail("WithSource: Source = %T(nil), want a non-nil LatencySource", s)
			return
		}
		c.source = s
	}
}

// WithQuantile sets which latency quantile the hedge delay follows; default
// 0.95 (p95). Allowed (0, 1).
func WithQuantile(q float64) Option {
	return func(c *config) {
		if !(q > 0 && q < 1) {
			c.fail("WithQuantile: Quantile = %v, allowed (0, 1) exclusive", q)
			return
		}
		c.quantile = q
	}
}

// WithDelayBounds clamps the hedge delay to [min, max]; default [1ms,
// 500ms]. While the source has no estimate the delay is max. Allowed
// 1µs <= min <= max <= 1h.
func WithDelayBounds(min, max time.Duration) Option {
	return func(c *config) {
		if min < time.Microsecond || min > time.Hour {
			c.fail("WithDelayBounds: MinDelay = %v, allowed 1µs..1h", min)
			return
		}
		if max < min || max > time.Hour {
			c.fail("WithDelayBounds: MaxDelay = %v, allowed MinDelay (%v)..1h", max, min)
			return
		}
		c.minDelay, c.maxDelay = min, max
	}
}

// WithRefreshInterval sets how often the hedge delay is recomputed from the
// source; default 100ms. Allowed 1ms..1h.
func WithRefreshInterval(d time.Duration) Option {
	return func(c *config) {
		if d < time.Millisecond || d > time.Hour {
			c.fail("WithRefreshInterval: RefreshInterval = %v, allowed 1ms..1h", d)
			return
		}
		c.refresh = d
	}
}

// WithBudget caps hedges to fraction of the requests seen over a sliding
// window; default 5% over 10s. Allowed fraction [0, 1] (0 = never hedge),
// window 20ms..24h.
func WithBudget(fraction float64, window time.Duration) Option {
	return func(c *config) {
		if !(fraction >= 0 && fraction <= 1) {
			c.fail("WithBudget: BudgetFraction = %v, allowed [0, 1]", fraction)
			return
		}
		if window < 20*time.Millisecond || window > 24*time.Hour {
			c.fail("WithBudget: BudgetWindow = %v, allowed 20ms..24h", window)
			return
		}
		c.fraction, c.window = fraction, window
	}
}

// WithErrorHoldoff makes hedges skip hosts that returned an error (timeout,
// overload, connection error...) within d, so a hedge is not sent to a host
// likely to answer with a fast error that would win the race; default 1s,
// 0 turns it off. Allowed 0..1h. If every remaining host failed recently,
// the hedge goes to the first of them rather than nowhere.
func WithErrorHoldoff(d time.Duration) Option {
	return func(c *config) {
		if d < 0 || d > time.Hour {
			c.fail("WithErrorHoldoff: ErrorHoldoff = %v, allowed 0..1h", d)
			return
		}
		c.errorHoldoff = d
	}
}

// WithClock sets the clock, the same tracker.Clock the policy package's
// WithClock takes (share one to keep the tracker and the Hedger on one
// time line); default tracker.SystemClock. Tests use tracker.ManualClock.
func WithClock(clk tracker.Clock) Option {
	return func(c *config) {
		if IsNil(clk) {
			c.fail("WithClock: Clock = nil, want a non-nil tracker.Clock")
			return
		}
		c.clock = clk
	}
}
