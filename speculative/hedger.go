package speculative

import (
	"time"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/hedge"
	"github.com/tailroute/tailroute/stats"
	"github.com/tailroute/tailroute/tracker"
)

// LatencySource supplies the recent latency distribution the hedge delay
// follows. policy.Policy implements it; so do Recorder and tracker.Tracker.
type LatencySource interface {
	// LatencyQuantile returns the q-quantile (0 < q <= 1) of recent
	// latencies; false when there are too few samples.
	LatencyQuantile(q float64) (time.Duration, bool)
}

// SilenceSource is a LatencySource that also reports how long the most
// silent host has owed a response (tracker.Tracker.MaxSilence). The burst
// cap needs it to tell a stall from a slow phase.
type SilenceSource interface {
	LatencySource
	// MaxSilence returns the longest time a host with attempts in flight
	// has gone without answering; 0 when no host has one in flight.
	MaxSilence() time.Duration
}

// LoadSource is a SilenceSource that also reports the load a hedge would
// meet (policy.Policy implements it): with one, the Hedger applies the load
// rule (see the package doc, "Load rule").
type LoadSource interface {
	SilenceSource
	// HedgeRoom returns the expected response time of the host a hedge
	// would go to, and whether every host whose worker count W_s is known
	// has all its workers taken.
	HedgeRoom() (wait time.Duration, saturated bool)
}

// Option configures a Hedger.
type Option = hedge.Option

// Stats is a snapshot of the Hedger's counters since it was created; its
// fields are documented in package stats.
type Stats = stats.Hedging

// Defaults.
const (
	DefaultQuantile        = hedge.DefaultQuantile        // hedge after the p95 (Tail at Scale)
	DefaultMinDelay        = hedge.DefaultMinDelay        // ~2 network message delays (Tail at Scale, tied requests)
	DefaultMaxDelay        = hedge.DefaultMaxDelay        // upper clamp; also the delay while no estimate exists
	DefaultRefreshInterval = hedge.DefaultRefreshInterval // 100ms
	DefaultBudgetFraction  = hedge.DefaultBudgetFraction  // at most 5% of requests get a hedge
	DefaultBudgetWindow    = hedge.DefaultBudgetWindow    // 10s
	DefaultErrorHoldoff    = hedge.DefaultErrorHoldoff    // 1s
	DefaultBurstHorizon    = hedge.DefaultBurstHorizon    // 200ms
	DefaultBurstFactor     = hedge.DefaultBurstFactor     // 3
	DefaultBurstFloor      = hedge.DefaultBurstFloor      // 2
	DefaultOutcomeWindow   = hedge.DefaultOutcomeWindow   // 2s: hedges won and lost are counted over it
)

// WithSource sets the latency source the hedge delay follows, e.g. the
// Policy of our policy package (WithSource(p)). Default: a Recorder the
// Hedger owns, which Wire installs as the cluster's QueryObserver.
func WithSource(s LatencySource) Option { return hedge.WithSource(s) }

// WithQuantile sets which latency quantile the hedge delay follows; default
// 0.95 (p95). Allowed (0, 1).
func WithQuantile(q float64) Option { return hedge.WithQuantile(q) }

// WithDelayBounds clamps the hedge delay to [min, max]; default [1ms,
// 500ms]. While the source has no estimate the delay is max. Allowed
// 1µs <= min <= max <= 1h.
func WithDelayBounds(min, max time.Duration) Option { return hedge.WithDelayBounds(min, max) }

// WithRefreshInterval sets how often the hedge delay is recomputed from the
// source; default 100ms. Allowed 1ms..1h.
func WithRefreshInterval(d time.Duration) Option { return hedge.WithRefreshInterval(d) }

// WithBudget caps hedges to fraction of the requests seen over a sliding
// window; default 5% over 10s. Allowed fraction [0, 1] (0 = never hedge),
// window 20ms..24h.
func WithBudget(fraction float64, window time.Duration) Option {
	return hedge.WithBudget(fraction, window)
}

// WithErrorHoldoff makes hedges skip hosts that returned an error (timeout,
// overload, connection error...) within d; default 1s, 0 turns it off.
// Allowed 0..1h. See hedge.WithErrorHoldoff.
func WithErrorHoldoff(d time.Duration) Option { return hedge.WithErrorHoldoff(d) }

// WithClock sets the clock, the same tracker.Clock the policy package's
// WithClock takes; default tracker.SystemClock. Tests use
// tracker.ManualClock.
func WithClock(clk tracker.Clock) Option { return hedge.WithClock(clk) }

// WithBurstCap sets the burst cap on hedges within a short horizon; see
// hedge.WithBurstCap (defaults DefaultBurstHorizon, DefaultBurstFactor,
// DefaultBurstFloor; horizon 0 turns the cap off; allowed horizon 0 or
// 10ms..1min, factor 1..100, floor 0..1000000).
func WithBurstCap(horizon time.Duration, factor float64, floor int) Option {
	return hedge.WithBurstCap(horizon, factor, floor)
}

// WithLoadRule turns the load rule (see the package doc) on or off;
// default on. It applies when the source is a LoadSource (WithSource(p), p
// our policy); with any other source the Hedger arms on the budget and the
// burst cap alone.
func WithLoadRule(on bool) Option { return hedge.WithLoadRule(on) }

// Hedger is an adaptive, budgeted hedged-request controller for gocql
// (Tail at Scale: "defer sending a secondary request until the first
// request has been outstanding for more than the 95th-percentile expected
// latency"). It does nothing by itself: wrap a HostSelectionPolicy with
// Wrap (or call Wire) to hedge every idempotent query of a session. The
// driver-free logic is hedge.Hedger; this type adds gocql's wrapper.
//
// A Hedger is safe for concurrent use. Share one Hedger between sessions
// only if they should share one budget.
type Hedger struct {
	core   *hedge.Hedger
	rec    *Recorder // the built-in source, when no WithSource was given
	budget *budget
	burst  *budget // nil when the burst cap is off
	spec   armedSpec
}

// armedSpec is the gocql.SpeculativeExecutionPolicy the wrapped policy puts
// on an armed execution: one extra attempt after the current delay.
type armedSpec = hedge.Spec

// New returns a Hedger. Options are validated once, here: every bad option
// is reported, joined in one error, each naming the option, the field, its
// value and the allowed range.
func New(opts ...Option) (*Hedger, error) {
	c, err := hedge.New(opts...)
	if err != nil {
		return nil, err
	}
	h := &Hedger{core: c, budget: c.Budget(), burst: c.Burst()}
	if r := c.Recorder(); r != nil {
		h.rec = &Recorder{r: r}
	}
	h.spec.H = c
	return h, nil
}

func (h *Hedger) nowNs() int64 { return h.core.NowNs() }

// Recorder returns the built-in latency recorder, or nil when the Hedger
// follows a source given with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

// Delay returns the current hedge delay: the configured quantile of the
// source's latencies clamped to [min, max], or max while the source has
// no estimate.
func (h *Hedger) Delay() time.Duration { return h.core.Delay() }

// Refresh recomputes the hedge delay from the source now. The Hedger also
// does it by itself at most once per refresh interval, on the path of an
// eligible query.
func (h *Hedger) Refresh() { h.core.Refresh() }

// Quantile returns the effective quantile the delay currently follows: the
// configured one, or higher while ordinary hedging presses on the budget.
func (h *Hedger) Quantile() float64 { return h.core.Quantile() }

// Stats returns a snapshot of the counters.
func (h *Hedger) Stats() Stats { return h.core.Stats() }

// compile-time checks
var (
	_ gocql.SpeculativeExecutionPolicy = (*armedSpec)(nil)
	_ LatencySource                    = (*Recorder)(nil)
	_ hedge.LatencySource              = (LatencySource)(nil)
	_ hedge.SilenceSource              = (SilenceSource)(nil)
	_ hedge.LoadSource                 = (LoadSource)(nil)
	_ gocql.QueryObserver              = (*Recorder)(nil)
	_ gocql.BatchObserver              = (*Recorder)(nil)
)
