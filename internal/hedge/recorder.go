package hedge

import (
	"time"

	"github.com/tailroute/tailroute/internal/hist"
	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/tracker"
)

// recSubWindows is how many sub-windows of Window/4 a Recorder counts: the
// 4 full ones before the current one, and the current one.
const recSubWindows = 5

// RecorderConfig configures a Recorder. The adapters' RecorderConfig
// (speculative, apache/speculative) documents the fields, defaults and
// allowed ranges and is converted to this type, so the fields must stay
// identical (a difference fails to compile).
type RecorderConfig struct {
	Window     time.Duration // default 10s, allowed 4ms..24h
	MinSamples int           // default 100, allowed 1..2^30
	Clock      tracker.Clock // default tracker.SystemClock
}

// Recorder is a small lock-free latency source: a sliding-window log-linear
// histogram (internal/hist, the tracker's histogram) of attempt latencies,
// fed by a driver's query observer (the adapters call Record). It lets
// hedging adapt with a driver's built-in host selection policies, which
// have no latency tracker of their own.
//
// Recording is one clock read and one atomic add (plus, once per
// sub-window, clearing a recycled sub-window), with no allocation.
// Quantiles scan the histogram (well under a microsecond) and are meant
// to be read off the hot path, as the Hedger does every refresh interval.
//
// What is recorded: successful attempts, and attempts cancelled because
// another attempt of the same execution won (or the caller gave up). A
// cancelled loser's elapsed time is a lower bound of its latency
// (censored): keeping it preserves the mass of the tail above the hedge
// delay, so hedging does not shrink the observed p95 and feed back into
// ever earlier hedges. Other errors are not latency samples and are
// skipped.
type Recorder struct {
	clock      tracker.Clock
	minSamples uint64
	h          hist.Rolling
}

// NewRecorder returns a Recorder; it reports an error naming a bad field.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if cfg.Window == 0 {
		cfg.Window = 10 * time.Second
	}
	if cfg.Window < 4*time.Millisecond || cfg.Window > 24*time.Hour {
		return nil, errorf("RecorderConfig.Window = %v, allowed 4ms..24h (0 = default 10s)", cfg.Window)
	}
	if cfg.MinSamples == 0 {
		cfg.MinSamples = 100
	}
	if cfg.MinSamples < 1 || cfg.MinSamples > 1<<30 {
		return nil, errorf("RecorderConfig.MinSamples = %d, allowed 1..%d (0 = default 100)", cfg.MinSamples, 1<<30)
	}
	if cfg.Clock == nil || settings.IsNil(cfg.Clock) {
		cfg.Clock = tracker.SystemClock{}
	}
	r := &Recorder{clock: cfg.Clock, minSamples: uint64(cfg.MinSamples)}
	r.h.Init(cfg.Window/(recSubWindows-1), recSubWindows)
	return r, nil
}

// Record adds one latency sample, observed now.
func (r *Recorder) Record(latency time.Duration) { r.h.Record(r.clock.Now(), latency) }

// LatencyQuantile returns the q-quantile (0 < q <= 1) of the latencies in
// the window: the highest value of the histogram bucket holding the sample
// of rank round(q*n), at most 6.25% above it; false when the window holds
// fewer than MinSamples samples or q is out of range.
func (r *Recorder) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	d, n := r.h.Quantile(r.clock.Now(), q)
	if n < r.minSamples {
		return 0, false
	}
	return d, true
}
