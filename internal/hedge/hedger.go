package hedge

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/stats"
)

// LatencySource supplies the recent latency distribution the hedge delay
// follows. tracker.Tracker implements it; so does Recorder.
type LatencySource interface {
	// LatencyQuantile returns the q-quantile of recent latencies; false
	// when there are too few samples.
	LatencyQuantile(q float64) (time.Duration, bool)
}

// Defaults.
const (
	DefaultQuantile        = 0.95                   // hedge after the p95 (Tail at Scale)
	DefaultMinDelay        = time.Millisecond       // ~2 network message delays (Tail at Scale, tied requests)
	DefaultMaxDelay        = 500 * time.Millisecond // upper clamp; also the delay while no estimate exists
	DefaultRefreshInterval = 100 * time.Millisecond
	DefaultBudgetFraction  = 0.05 // at most 5% of requests get a hedge
	DefaultBudgetWindow    = 10 * time.Second
	DefaultErrorHoldoff    = time.Second
)

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
	now          func() time.Time
}

// Option configures a Hedger.
type Option func(*config) error

// WithSource sets the latency source the hedge delay follows, e.g. the
// Policy of our policy package (WithSource(p)). Default: a Recorder the
// Hedger owns, which Wire installs as the cluster's QueryObserver.
func WithSource(s LatencySource) Option {
	return func(c *config) error {
		if IsNil(s) {
			return fmt.Errorf("speculative: Source = %T(nil), want a non-nil LatencySource", s)
		}
		c.source = s
		return nil
	}
}

// WithQuantile sets which latency quantile the hedge delay follows; default
// 0.95 (p95). Allowed (0, 1).
func WithQuantile(q float64) Option {
	return func(c *config) error {
		if !(q > 0 && q < 1) {
			return fmt.Errorf("speculative: Quantile = %v, allowed (0, 1) exclusive", q)
		}
		c.quantile = q
		return nil
	}
}

// WithDelayBounds clamps the hedge delay to [min, max]; default [1ms,
// 500ms]. While the source has no estimate the delay is max. Allowed
// 1µs <= min <= max <= 1h.
func WithDelayBounds(min, max time.Duration) Option {
	return func(c *config) error {
		if min < time.Microsecond || min > time.Hour {
			return fmt.Errorf("speculative: MinDelay = %v, allowed 1µs..1h", min)
		}
		if max < min || max > time.Hour {
			return fmt.Errorf("speculative: MaxDelay = %v, allowed MinDelay (%v)..1h", max, min)
		}
		c.minDelay, c.maxDelay = min, max
		return nil
	}
}

// WithRefreshInterval sets how often the hedge delay is recomputed from the
// source; default 100ms. Allowed 1ms..1h.
func WithRefreshInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Millisecond || d > time.Hour {
			return fmt.Errorf("speculative: RefreshInterval = %v, allowed 1ms..1h", d)
		}
		c.refresh = d
		return nil
	}
}

// WithBudget caps hedges to fraction of the requests seen over a sliding
// window; default 5% over 10s. Allowed fraction [0, 1] (0 = never hedge),
// window 20ms..24h.
func WithBudget(fraction float64, window time.Duration) Option {
	return func(c *config) error {
		if !(fraction >= 0 && fraction <= 1) {
			return fmt.Errorf("speculative: BudgetFraction = %v, allowed [0, 1]", fraction)
		}
		if window < 20*time.Millisecond || window > 24*time.Hour {
			return fmt.Errorf("speculative: BudgetWindow = %v, allowed 20ms..24h", window)
		}
		c.fraction, c.window = fraction, window
		return nil
	}
}

// WithErrorHoldoff makes hedges skip hosts that returned an error (timeout,
// overload, connection error...) within d, so a hedge is not sent to a host
// likely to answer with a fast error that would win the race; default 1s,
// 0 turns it off. Allowed 0..1h. If every remaining host failed recently,
// the hedge goes to the first of them rather than nowhere.
func WithErrorHoldoff(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > time.Hour {
			return fmt.Errorf("speculative: ErrorHoldoff = %v, allowed 0..1h", d)
		}
		c.errorHoldoff = d
		return nil
	}
}

// WithClock injects the clock (tests); default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("speculative: Clock = nil, want a func() time.Time")
		}
		c.now = now
		return nil
	}
}

// Hedger is an adaptive, budgeted hedged-request controller for gocql
// (Tail at Scale: "defer sending a secondary request until the first
// request has been outstanding for more than the 95th-percentile expected
// latency"). It does nothing by itself: wrap a HostSelectionPolicy with
// Wrap (or call Wire) to hedge every idempotent query of a session.
//
// A Hedger is safe for concurrent use. Share one Hedger between sessions
// only if they should share one budget.
type Hedger struct {
	cfg  config
	rec  *Recorder // the built-in source, when no WithSource was given
	base time.Time

	delay       atomic.Int64 // current hedge delay, ns
	nextRefresh atomic.Int64 // ns since base when the delay is due for a refresh

	budget  *Budget
	burst   *Budget       // hedges and executions over the burst horizon; nil when the cap is off
	silence SilenceSource // the source, when it reports silence

	// budget-pressure controller (see doc.go, "Hedge delay"); guarded by ctlMu,
	// taken only by the one caller per refresh interval that refreshes.
	ctlMu                sync.Mutex
	exceed               float64 // 1 - effective quantile
	lastCtl              int64
	lastExec, lastHedges uint64
	effQuantile          atomic.Uint64 // math.Float64bits of 1 - exceed

	hostErr sync.Map // host key (the driver's *HostInfo) -> *atomic.Int64: ns since base of the host's last error

	executions, eligible, armed, hedges atomic.Uint64
	budgetDenied, noTarget, unreserved  atomic.Uint64
	tooFewHosts                         atomic.Uint64
	burstDenied, burstLifted, won, lost atomic.Uint64
	hedgesInFlight                      atomic.Int64
}

// New returns a Hedger; a bad option yields an error naming the field, its
// value and the allowed range.
func New(opts ...Option) (*Hedger, error) {
	c := config{
		quantile:     DefaultQuantile,
		minDelay:     DefaultMinDelay,
		maxDelay:     DefaultMaxDelay,
		refresh:      DefaultRefreshInterval,
		fraction:     DefaultBudgetFraction,
		window:       DefaultBudgetWindow,
		errorHoldoff: DefaultErrorHoldoff,
		burstHorizon: DefaultBurstHorizon,
		burstFactor:  DefaultBurstFactor,
		burstFloor:   DefaultBurstFloor,
		now:          time.Now,
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("speculative: nil Option")
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	h := &Hedger{cfg: c, base: c.now()}
	if c.source == nil {
		rec, err := NewRecorder(RecorderConfig{Clock: c.now})
		if err != nil {
			return nil, err
		}
		h.rec = rec
		h.cfg.source = rec
	}
	h.budget = NewBudget(c.fraction, int64(c.window))
	if ss, ok := h.cfg.source.(SilenceSource); ok && c.burstHorizon > 0 {
		h.silence = ss
		h.burst = NewBudget(c.fraction, int64(c.burstHorizon))
	}
	h.exceed = 1 - c.quantile
	h.effQuantile.Store(math.Float64bits(c.quantile))
	h.delay.Store(int64(c.maxDelay))
	h.Refresh()
	return h, nil
}

// Budget-pressure controller constants (see doc.go, "Hedge delay").
const (
	// budgetTarget is the share of the budget ordinary hedging is steered
	// to; the rest is a reserve for bursts such as a stalled node.
	budgetTarget = 0.7
	// controlInterval is how often the effective quantile is adjusted.
	controlInterval = time.Second
	// minControlRequests is how many executions an adjustment needs.
	minControlRequests = 50
	// maxTighten bounds the effective quantile: 1-q_eff >= (1-q)/maxTighten.
	maxTighten = 50
)

// Recorder returns the built-in latency recorder, or nil when the Hedger
// follows a source given with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

func (h *Hedger) nowNs() int64 { return int64(h.cfg.now().Sub(h.base)) }

// Delay returns the current hedge delay: the configured quantile of the
// source's latencies clamped to [min, max], or max while the source has
// no estimate.
func (h *Hedger) Delay() time.Duration { return time.Duration(h.delay.Load()) }

// Refresh recomputes the hedge delay from the source now. The Hedger also
// does it by itself at most once per refresh interval, on the path of an
// eligible query (one caller wins a compare-and-swap and does the work).
func (h *Hedger) Refresh() {
	now := h.nowNs()
	h.nextRefresh.Store(now + int64(h.cfg.refresh))
	h.refresh(now)
}

// Quantile returns the effective quantile the delay currently follows: the
// configured one, or higher while ordinary hedging presses on the budget.
func (h *Hedger) Quantile() float64 { return math.Float64frombits(h.effQuantile.Load()) }

func (h *Hedger) refresh(now int64) {
	h.ctlMu.Lock()
	defer h.ctlMu.Unlock()
	if now-h.lastCtl >= int64(controlInterval) {
		ex, hd := h.executions.Load(), h.hedges.Load()
		if dReq := ex - h.lastExec; dReq >= minControlRequests {
			rate := float64(hd-h.lastHedges) / float64(dReq)
			h.lastCtl, h.lastExec, h.lastHedges = now, ex, hd
			target := budgetTarget * h.cfg.fraction
			if rate > target {
				h.exceed *= math.Max(0.5, target/rate)
			} else {
				h.exceed *= 1.25
			}
			base := 1 - h.cfg.quantile
			h.exceed = math.Min(base, math.Max(base/maxTighten, h.exceed))
			h.effQuantile.Store(math.Float64bits(1 - h.exceed))
		}
	}
	h.delay.Store(int64(h.computeDelay(1 - h.exceed)))
}

func (h *Hedger) computeDelay(q float64) time.Duration {
	d, ok := h.cfg.source.LatencyQuantile(q)
	switch {
	case !ok:
		return h.cfg.maxDelay
	case d < h.cfg.minDelay:
		return h.cfg.minDelay
	case d > h.cfg.maxDelay:
		return h.cfg.maxDelay
	}
	return d
}

func (h *Hedger) maybeRefresh(nowNs int64) {
	next := h.nextRefresh.Load()
	if nowNs < next || !h.nextRefresh.CompareAndSwap(next, nowNs+int64(h.cfg.refresh)) {
		return
	}
	h.refresh(nowNs)
}

// hostError records that host answered with a host-level error now.
func (h *Hedger) hostError(host any, nowNs int64) {
	if h.cfg.errorHoldoff <= 0 || host == nil {
		return
	}
	if v, ok := h.hostErr.Load(host); ok {
		v.(*atomic.Int64).Store(nowNs)
		return
	}
	v := new(atomic.Int64)
	v.Store(nowNs)
	if old, loaded := h.hostErr.LoadOrStore(host, v); loaded {
		old.(*atomic.Int64).Store(nowNs)
	}
}

// recentlyFailed reports whether host had a host-level error within the
// error holdoff.
func (h *Hedger) recentlyFailed(host any, nowNs int64) bool {
	if h.cfg.errorHoldoff <= 0 || host == nil {
		return false
	}
	v, ok := h.hostErr.Load(host)
	return ok && nowNs-v.(*atomic.Int64).Load() < int64(h.cfg.errorHoldoff)
}

// Stats is a snapshot of the Hedger's counters (see package stats).
type Stats = stats.Hedging

// Stats returns a snapshot of the counters.
func (h *Hedger) Stats() Stats {
	r, hd, res := h.budget.Window(h.nowNs())
	return Stats{
		Executions:     h.executions.Load(),
		Eligible:       h.eligible.Load(),
		Armed:          h.armed.Load(),
		Hedges:         h.hedges.Load(),
		Won:            h.won.Load(),
		Lost:           h.lost.Load(),
		InFlight:       h.hedgesInFlight.Load(),
		BudgetDenied:   h.budgetDenied.Load(),
		BurstDenied:    h.burstDenied.Load(),
		BurstLifted:    h.burstLifted.Load(),
		TooFewHosts:    h.tooFewHosts.Load(),
		NoTarget:       h.noTarget.Load(),
		Unreserved:     h.unreserved.Load(),
		Delay:          h.Delay(),
		Quantile:       h.Quantile(),
		WindowRequests: r,
		WindowHedges:   hd,
		Reserved:       res,
	}
}

// Spec is the speculative execution policy an adapter puts on an armed
// execution: one extra attempt after the current delay. It has the method
// set of both drivers' SpeculativeExecutionPolicy.
type Spec struct{ H *Hedger }

// Attempts returns 1: one hedge per execution.
func (s *Spec) Attempts() int { return 1 }

// Delay returns the Hedger's current delay.
func (s *Spec) Delay() time.Duration { return s.H.Delay() }

var _ LatencySource = (*Recorder)(nil)

// NowNs returns the Hedger's clock in ns since it was created.
func (h *Hedger) NowNs() int64 { return h.nowNs() }

// Budget returns the long-run hedge budget.
func (h *Hedger) Budget() *Budget { return h.budget }

// Burst returns the burst-cap window, nil when the cap is off.
func (h *Hedger) Burst() *Budget { return h.burst }
