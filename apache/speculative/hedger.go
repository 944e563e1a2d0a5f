package speculative

import (
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

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
// meet (policy.Policy implements it); see the v1 package.
type LoadSource = hedge.LoadSource

// Option configures a Hedger.
type Option = hedge.Option

// Stats is a snapshot of the Hedger's counters since it was created; its
// fields are documented in package stats. Eligible counts executions armed
// with Arm that are idempotent and not opted out.
type Stats = stats.Hedging

// Defaults, as in the v1 package.
const (
	DefaultQuantile        = hedge.DefaultQuantile
	DefaultMinDelay        = hedge.DefaultMinDelay
	DefaultMaxDelay        = hedge.DefaultMaxDelay
	DefaultRefreshInterval = hedge.DefaultRefreshInterval
	DefaultBudgetFraction  = hedge.DefaultBudgetFraction
	DefaultBudgetWindow    = hedge.DefaultBudgetWindow
	DefaultErrorHoldoff    = hedge.DefaultErrorHoldoff
	DefaultBurstHorizon    = hedge.DefaultBurstHorizon
	DefaultBurstFactor     = hedge.DefaultBurstFactor
	DefaultBurstFloor      = hedge.DefaultBurstFloor
	DefaultOutcomeWindow   = hedge.DefaultOutcomeWindow
)

// WithSource sets the latency source the hedge delay follows; default a
// Recorder the Hedger owns, which Wire installs as the QueryObserver.
func WithSource(s LatencySource) Option { return hedge.WithSource(s) }

// WithQuantile sets the quantile the delay follows; default 0.95. Allowed (0, 1).
func WithQuantile(q float64) Option { return hedge.WithQuantile(q) }

// WithDelayBounds clamps the delay to [min, max]; default [1ms, 500ms].
// Allowed 1µs <= min <= max <= 1h.
func WithDelayBounds(min, max time.Duration) Option { return hedge.WithDelayBounds(min, max) }

// WithRefreshInterval sets how often the delay is recomputed; default
// 100ms. Allowed 1ms..1h.
func WithRefreshInterval(d time.Duration) Option { return hedge.WithRefreshInterval(d) }

// WithBudget caps hedges to fraction of the requests over a sliding window;
// default 5% over 10s. Allowed fraction [0, 1], window 20ms..24h.
func WithBudget(fraction float64, window time.Duration) Option {
	return hedge.WithBudget(fraction, window)
}

// WithErrorHoldoff makes hedges skip hosts that failed within d; default
// 1s, 0 off. Allowed 0..1h.
func WithErrorHoldoff(d time.Duration) Option { return hedge.WithErrorHoldoff(d) }

// WithClock sets the clock, the same tracker.Clock the policy package's
// WithClock takes; default tracker.SystemClock. Tests use
// tracker.ManualClock.
func WithClock(clk tracker.Clock) Option { return hedge.WithClock(clk) }

// WithLoadRule turns the load rule on or off; default on. See the v1
// package.
func WithLoadRule(on bool) Option { return hedge.WithLoadRule(on) }

// WithBurstCap sets the burst cap; see the v1 package. Allowed horizon 0
// (off) or 10ms..1min, factor 1..100, floor 0..1000000.
func WithBurstCap(horizon time.Duration, factor float64, floor int) Option {
	return hedge.WithBurstCap(horizon, factor, floor)
}

// Hedger is an adaptive, budgeted hedged-request controller for the v2
// driver. Wrap a HostSelectionPolicy with Wrap (or call Wire) and arm
// executions with Arm. Safe for concurrent use.
type Hedger struct {
	core *hedge.Hedger
	rec  *Recorder
}

// New returns a Hedger. Options are validated once, here: every bad option
// is reported, joined in one error, each naming the option, the field, its
// value and the allowed range.
func New(opts ...Option) (*Hedger, error) {
	c, err := hedge.New(opts...)
	if err != nil {
		return nil, err
	}
	h := &Hedger{core: c}
	if r := c.Recorder(); r != nil {
		h.rec = &Recorder{r: r}
	}
	return h, nil
}

// Recorder returns the built-in latency recorder, nil with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

// Delay returns the current hedge delay.
func (h *Hedger) Delay() time.Duration { return h.core.Delay() }

// Refresh recomputes the hedge delay from the source now.
func (h *Hedger) Refresh() { h.core.Refresh() }

// Quantile returns the quantile the delay follows now.
func (h *Hedger) Quantile() float64 { return h.core.Quantile() }

// Stats returns a snapshot of the counters.
func (h *Hedger) Stats() Stats { return h.core.Stats() }

var (
	_ gocql.SpeculativeExecutionPolicy = (*execSpec)(nil)
	_ LatencySource                    = (*Recorder)(nil)
	_ hedge.LatencySource              = (LatencySource)(nil)
	_ hedge.SilenceSource              = (SilenceSource)(nil)
	_ gocql.QueryObserver              = (*Recorder)(nil)
	_ gocql.BatchObserver              = (*Recorder)(nil)
)
