package hedge

import (
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute"
)

// LoadSource is the source the load rule needs (tailroute.LoadSource).
type LoadSource = tailroute.LoadSource

// Load rule defaults (see the speculative package doc, "Load rule").
const (
	// roomInterval is how long one reading of the hosts' load (HedgeRoom,
	// MaxSilence) serves Admit: a hedge fires a delay (milliseconds to
	// tens of them) after its execution is armed, so a finer reading
	// would not be more accurate.
	roomInterval = 5 * time.Millisecond
	// DefaultOutcomeWindow is the sliding window over which the hedges
	// won and lost are counted.
	DefaultOutcomeWindow = 2 * time.Second
	// minOutcomes is how many decided hedges the window needs before the
	// budget follows their win share.
	minOutcomes = 10
	// winTarget is the win share from which the budget is whole: below it
	// hedges mostly lose (two of three), and the budget shrinks in
	// proportion. Hedges fired at the p95 delay in a calm cluster win
	// about as often as they lose (the first attempt is just past p95);
	// a record at that level keeps the whole budget, the reserve a stall
	// needs.
	winTarget = 1.0 / 3
	// minBudgetScale is the smallest share of the budget a losing record
	// leaves: a few hedges keep the record alive, so it can recover.
	minBudgetScale = 0.1
)

// outcomes counts the hedges won and lost over a sliding window, in the
// Budget's lock-free tagged buckets.
type outcomes struct {
	bucketNs  int64
	won, lost [budgetBuckets]atomic.Uint64
}

func newOutcomes(windowNs int64) *outcomes {
	return &outcomes{bucketNs: max(1, windowNs/budgetBuckets)}
}

func (o *outcomes) epoch(nowNs int64) uint32 { return epochOf(nowNs, o.bucketNs) }

// add counts one decided hedge.
func (o *outcomes) add(nowNs int64, won bool) {
	e := o.epoch(nowNs)
	if won {
		addTagged(&o.won[e%budgetBuckets], e, 1)
	} else {
		addTagged(&o.lost[e%budgetBuckets], e, 1)
	}
}

// window returns the hedges won and lost in the window ending at nowNs.
func (o *outcomes) window(nowNs int64) (won, lost uint64) {
	e := o.epoch(nowNs)
	return sumTagged(&o.won, e), sumTagged(&o.lost, e)
}

// budgetScale is the share of the budget the loss record leaves: 1 with
// fewer than minOutcomes decided hedges in the window or a win share of at
// least winTarget, else share/winTarget, at least minBudgetScale.
func budgetScale(won, lost uint64) float64 {
	n := won + lost
	if n < minOutcomes {
		return 1
	}
	share := float64(won) / float64(n)
	if share >= winTarget {
		return 1
	}
	return max(minBudgetScale, share/winTarget)
}

// room is the Hedger's latest reading of the hosts' load.
type room struct {
	next      atomic.Int64 // ns since base when the reading is due again
	wait      atomic.Int64 // HedgeRoom's wait, ns
	saturated atomic.Bool
	stalled   atomic.Bool // a host has been silent for at least the hedge delay
}

// readRoom refreshes the load reading when it is due (one caller per
// interval, compare-and-swap; the others use the previous reading).
func (h *Hedger) readRoom(nowNs int64) {
	if h.load == nil {
		return
	}
	next := h.room.next.Load()
	if nowNs < next || !h.room.next.CompareAndSwap(next, nowNs+int64(roomInterval)) {
		return
	}
	wait, sat := h.load.HedgeRoom()
	h.room.wait.Store(int64(wait))
	h.room.saturated.Store(sat)
	h.room.stalled.Store(h.load.MaxSilence() >= h.Delay())
}

// Reason is why an eligible execution was not armed.
type Reason int

const (
	armOK          Reason = iota
	ReasonFewHosts        // fewer than 2 hosts up
	ReasonQueueing        // load rule: every host with a known W_s has all its workers taken
	ReasonTarget          // load rule: the hedge's host is expected to take longer than the first attempt has already waited (the delay)
	ReasonBurst           // burst cap
	ReasonLosing          // the budget, shrunk because hedges mostly lose, is spent (the whole one is not)
	ReasonBudget          // the long-run budget is spent
	nReasons
)

// loadDenies applies the load rule to an eligible execution; armOK when
// the rule lets it through.
func (h *Hedger) loadDenies(nowNs int64) Reason {
	if h.load == nil || !h.cfg.LoadOn {
		return armOK
	}
	h.readRoom(nowNs)
	if h.room.stalled.Load() {
		// a stalled host: the requests it holds are what hedging is for,
		// and the hosts a hedge goes to are idle rather than busy
		return armOK
	}
	if h.room.saturated.Load() {
		return ReasonQueueing
	}
	if h.room.wait.Load() > h.delay.Load() {
		return ReasonTarget
	}
	return armOK
}

// scale returns the budget share the loss record leaves now: 1 without a
// LoadSource, with the rule off, or while a host is stalled. Without a
// source that reports silence a stall cannot be told apart, and the record
// of ordinary hedges (which lose about as often as they win) would starve
// the budget a stall needs.
func (h *Hedger) scale(nowNs int64) float64 {
	if h.load == nil || !h.cfg.LoadOn || h.room.stalled.Load() {
		return 1
	}
	return budgetScale(h.outcomes.window(nowNs))
}
