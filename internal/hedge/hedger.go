package hedge

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/settings"
)

// LatencySource is the source the hedge delay follows (tailroute.LatencySource).
type LatencySource = tailroute.LatencySource

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
	rec  *Recorder     // the built-in source, when no WithSource was given
	base time.Duration // clock time the Hedger was created

	delay       atomic.Int64 // current hedge delay, ns
	nextRefresh atomic.Int64 // ns since base when the delay is due for a refresh

	budget   *Budget
	burst    *Budget       // hedges and executions over the burst horizon; nil when the cap is off
	silence  SilenceSource // the source, when it reports silence
	load     LoadSource    // the source, when it reports the hosts' load (load rule)
	room     room          // the latest reading of the hosts' load
	outcomes *outcomes     // hedges won and lost over DefaultOutcomeWindow

	// budget-pressure controller (see doc.go, "Hedge delay"); guarded by ctlMu,
	// taken only by the one caller per refresh interval that refreshes.
	ctlMu                sync.Mutex
	exceed               float64 // 1 - effective quantile
	lastCtl              int64
	lastExec, lastHedges uint64
	effQuantile          atomic.Uint64 // math.Float64bits of 1 - exceed

	spec, deferSpec Spec // what SpecFor returns: the delay, the deferred delay

	hostErr sync.Map // host key (the driver's *HostInfo) -> *atomic.Int64: ns since base of the host's last error

	executions, eligible, armed, hedges atomic.Uint64
	noTarget, unreserved                atomic.Uint64
	burstLifted, won, lost              atomic.Uint64
	suppressed                          [nReasons]atomic.Uint64   // eligible executions not armed, by Reason
	deferred                            [nDeferrals]atomic.Uint64 // armed executions deferred, by Deferral
	hedgesInFlight                      atomic.Int64
}

// New returns a Hedger. Options are validated once, here: every bad option
// is reported, joined in one error, each naming the option, the field, its
// value and the allowed range.
func New(opts ...tailroute.Option) (*Hedger, error) {
	set, err := settings.Build(settings.Hedging, opts)
	if err != nil {
		return nil, err
	}
	c := set.Hedge
	h := &Hedger{cfg: c, base: c.Clock.Now()}
	h.spec.H = h
	h.deferSpec = Spec{H: h, deferred: true}
	if c.Source == nil {
		rec, err := NewRecorder(RecorderConfig{Clock: c.Clock})
		if err != nil {
			return nil, err
		}
		h.rec = rec
		h.cfg.Source = rec
	}
	h.budget = NewBudget(c.Fraction, int64(c.Window))
	if ss, ok := h.cfg.Source.(SilenceSource); ok && c.BurstHorizon > 0 {
		h.silence = ss
		h.burst = NewBudget(c.Fraction, int64(c.BurstHorizon))
	}
	if ls, ok := h.cfg.Source.(LoadSource); ok {
		h.load = ls
	}
	h.outcomes = newOutcomes(int64(DefaultOutcomeWindow))
	h.exceed = 1 - c.Quantile
	h.effQuantile.Store(math.Float64bits(c.Quantile))
	h.delay.Store(int64(c.MaxDelay))
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
	// estimateRetry is how soon the delay is due again while the source
	// has no estimate (see doc.go, "Hedge delay"): a client that has just
	// started hedges within milliseconds of its first estimate.
	estimateRetry = 5 * time.Millisecond
)

// Recorder returns the built-in latency recorder, or nil when the Hedger
// follows a source given with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

func (h *Hedger) nowNs() int64 { return int64(h.cfg.Clock.Now() - h.base) }

// Delay returns the current hedge delay: the configured quantile of the
// source's latencies clamped to [min, max], or max while the source has
// no estimate.
func (h *Hedger) Delay() time.Duration { return time.Duration(h.delay.Load()) }

// Refresh recomputes the hedge delay from the source now. The Hedger also
// does it by itself when it is due, once per refresh interval (every
// estimateRetry while the source has no estimate), on the path of an
// eligible query (one caller wins a compare-and-swap and does the work).
func (h *Hedger) Refresh() {
	now := h.nowNs()
	h.nextRefresh.Store(now + int64(h.cfg.Refresh))
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
			target := budgetTarget * h.cfg.Fraction
			if rate > target {
				h.exceed *= math.Max(0.5, target/rate)
			} else {
				h.exceed *= 1.25
			}
			base := 1 - h.cfg.Quantile
			h.exceed = math.Min(base, math.Max(base/maxTighten, h.exceed))
			h.effQuantile.Store(math.Float64bits(1 - h.exceed))
		}
	}
	d, ok := h.computeDelay(1 - h.exceed)
	h.delay.Store(int64(d))
	if !ok { // no estimate yet: look again soon, not a refresh interval later
		h.nextRefresh.Store(now + int64(estimateRetry))
	}
}

// computeDelay returns the delay for quantile q: the source's estimate
// clamped to [MinDelay, MaxDelay], or MaxDelay and false while the source
// has none.
func (h *Hedger) computeDelay(q float64) (time.Duration, bool) {
	d, ok := h.cfg.Source.LatencyQuantile(q)
	switch {
	case !ok:
		return h.cfg.MaxDelay, false
	case d < h.cfg.MinDelay:
		return h.cfg.MinDelay, true
	case d > h.cfg.MaxDelay:
		return h.cfg.MaxDelay, true
	}
	return d, true
}

func (h *Hedger) maybeRefresh(nowNs int64) {
	next := h.nextRefresh.Load()
	if nowNs < next || !h.nextRefresh.CompareAndSwap(next, nowNs+int64(h.cfg.Refresh)) {
		return
	}
	h.refresh(nowNs)
}

// hostError records that host answered with a host-level error now.
func (h *Hedger) hostError(host any, nowNs int64) {
	if h.cfg.ErrorHoldoff <= 0 || host == nil {
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
	if h.cfg.ErrorHoldoff <= 0 || host == nil {
		return false
	}
	v, ok := h.hostErr.Load(host)
	return ok && nowNs-v.(*atomic.Int64).Load() < int64(h.cfg.ErrorHoldoff)
}

// Stats is a snapshot of the Hedger's counters (see package tailroute).
type Stats = tailroute.Hedging

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
		BudgetDenied:   h.suppressed[ReasonBudget].Load(),
		BurstDenied:    h.suppressed[ReasonBurst].Load(),
		BurstLifted:    h.burstLifted.Load(),
		TooFewHosts:    h.suppressed[ReasonFewHosts].Load(),
		ManyClients:    h.suppressed[ReasonManyClients].Load(),
		Queueing:       h.deferred[DeferQueueing].Load(),
		TargetSlow:     h.deferred[DeferTarget].Load(),
		Losing:         h.deferred[DeferLosing].Load(),
		DeferredDelay:  h.DeferredDelay(),
		TargetWait:     time.Duration(h.room.wait.Load()),
		Busy:           h.busy(),
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
// execution: one extra attempt after the current delay, or after the
// deferred delay for an execution the load rule deferred. It has the
// method set of both drivers' SpeculativeExecutionPolicy.
type Spec struct {
	H        *Hedger
	deferred bool
}

// Attempts returns 1: one hedge per execution.
func (s *Spec) Attempts() int { return 1 }

// Delay returns the Hedger's current delay, or its deferred delay.
func (s *Spec) Delay() time.Duration {
	if s.deferred {
		return s.H.DeferredDelay()
	}
	return s.H.Delay()
}

var _ LatencySource = (*Recorder)(nil)

// NowNs returns the Hedger's clock in ns since it was created.
func (h *Hedger) NowNs() int64 { return h.nowNs() }

// Budget returns the long-run hedge budget.
func (h *Hedger) Budget() *Budget { return h.budget }

// Burst returns the burst-cap window, nil when the cap is off.
func (h *Hedger) Burst() *Budget { return h.burst }

// SpecFor returns the SpeculativeExecutionPolicy of an execution Admit
// armed with d (Armed: one extra attempt after the delay; Deferred: after
// the deferred delay), shared by the Hedger's executions.
func (h *Hedger) SpecFor(d Decision) *Spec {
	if d == Deferred {
		return &h.deferSpec
	}
	return &h.spec
}
