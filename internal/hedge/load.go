package hedge

import (
	"math"
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
	// won and lost at the base delay are counted.
	DefaultOutcomeWindow = 2 * time.Second
	// minOutcomes is how many decided hedges the window needs before the
	// record defers hedges.
	minOutcomes = 10
	// winTarget is the win share under which hedges at the base delay
	// mostly lose (two of three) and are deferred.
	winTarget = 1.0 / 3
	// calmBusy is the median host's share of workers taken up to which
	// the loss record is not consulted: a lost hedge there took a free
	// worker and delayed no other request.
	calmBusy = 0.5
	// busyHorizon is the time constant of the average share of workers
	// taken that the loss record's gate also reads: hosts calm for a
	// moment between loaded phases are not calm.
	busyHorizon = time.Second
	// DeferFactor is how much later a deferred hedge fires: at
	// DeferFactor x the delay (at most MaxDelay).
	DeferFactor = 3
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

// losing reports whether a record of won and lost hedges says hedges
// mostly lose: at least minOutcomes decided, under winTarget of them won.
func losing(won, lost uint64) bool {
	n := won + lost
	return n >= minOutcomes && float64(won) < winTarget*float64(n)
}

// room is the Hedger's latest reading of the hosts' load.
type room struct {
	// next is when the reading is due again, ns since base: the latest
	// reading's time + roomInterval; 0 before the first reading.
	next      atomic.Int64
	wait      atomic.Int64  // HedgeRoom's Wait, ns
	busy      atomic.Uint64 // HedgeRoom's Busy, math.Float64bits
	busyAvg   atomic.Uint64 // its average over busyHorizon (busySum / busyCover), math.Float64bits; readings only (not Room.BusyAssumed)
	busySum   atomic.Uint64 // the readings, each weighted by the time it covers and decayed by busyHorizon, math.Float64bits
	busyCover atomic.Uint64 // the weight of the time the readings cover, in (0, 1], math.Float64bits
	busyAvgAt atomic.Int64  // the time of the average's latest reading, ns since base (while busyCover > 0)
	saturated atomic.Bool
	many      atomic.Bool // Room.OneOfMany
	stalled   atomic.Bool // a host the policy calls stalled has been silent for at least the hedge delay (Room.StalledFor)
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
	r := h.load.HedgeRoom()
	h.room.wait.Store(int64(r.Wait))
	h.room.busy.Store(math.Float64bits(r.Busy))
	if !r.BusyAssumed { // a reading: the average takes it
		h.room.average(nowNs, r.Busy)
	}
	h.room.saturated.Store(r.Saturated)
	h.room.many.Store(r.OneOfMany)
	h.room.stalled.Store(r.StalledFor >= h.Delay())
}

// average adds a reading of the median host's share of workers taken to
// the average the loss record's gate reads: an exponential average with
// time constant busyHorizon, each reading weighted by the time since the
// previous one (the first by roomInterval), divided by the weight of the
// time the readings cover. Until they cover about busyHorizon, it is the
// average of the readings so far, so a client's first readings weigh the
// milliseconds they cover, not a whole busyHorizon. Called by readRoom's
// one caller per interval.
func (r *room) average(nowNs int64, busy float64) {
	sum := math.Float64frombits(r.busySum.Load())
	cover := math.Float64frombits(r.busyCover.Load())
	dt := int64(roomInterval)
	if cover > 0 { // since the previous reading
		dt = nowNs - r.busyAvgAt.Load()
	}
	a := 1 - math.Exp(-float64(dt)/float64(busyHorizon))
	sum += (busy - sum) * a
	cover += (1 - cover) * a
	r.busySum.Store(math.Float64bits(sum))
	r.busyCover.Store(math.Float64bits(cover))
	r.busyAvg.Store(math.Float64bits(sum / cover))
	r.busyAvgAt.Store(nowNs)
}

// Reason is why an eligible execution was not armed.
type Reason int

const (
	armOK             Reason = iota
	ReasonFewHosts           // fewer than 2 hosts up
	ReasonBurst              // burst cap
	ReasonBudget             // the long-run budget is spent
	ReasonManyClients        // the client is one of many (Room.OneOfMany; load rule)
	nReasons
)

// Deferral is why the load rule armed an execution with the deferred
// delay (DeferFactor x the delay) instead of the delay.
type Deferral int

const (
	deferNone     Deferral = iota
	DeferQueueing          // every host has a known W_s and all its workers taken
	DeferTarget            // the hedge's host is expected to take longer than the delay
	DeferLosing            // hedges at the delay mostly lose
	nDeferrals
)

// deferral applies the load rule to an armed execution: why its hedge is
// deferred, deferNone when it fires at the delay.
func (h *Hedger) deferral(nowNs int64) Deferral {
	if !h.loadRule() {
		return deferNone
	}
	switch {
	case h.stalled(nowNs):
		// a stalled host: the requests it holds are what hedging is for,
		// and the hosts a hedge goes to are idle rather than busy
		return deferNone
	case h.room.saturated.Load():
		return DeferQueueing
	case h.room.wait.Load() > h.delay.Load():
		return DeferTarget
	case h.busy() > calmBusy && losing(h.outcomes.window(nowNs)):
		return DeferLosing
	}
	return deferNone
}

// loadRule reports whether the load rule applies: it is on and the source
// is a LoadSource.
func (h *Hedger) loadRule() bool { return h.load != nil && h.cfg.LoadOn }

// oneOfMany reports whether the load rule refuses to arm: the source says
// the client is one of many (Room.OneOfMany).
func (h *Hedger) oneOfMany(nowNs int64) bool {
	if !h.loadRule() {
		return false
	}
	h.readRoom(nowNs)
	return h.room.many.Load()
}

// busy is the median host's share of workers taken as the loss record's
// gate reads it: the latest reading or its average over busyHorizon,
// whichever is higher.
func (h *Hedger) busy() float64 {
	return max(math.Float64frombits(h.room.busy.Load()), math.Float64frombits(h.room.busyAvg.Load()))
}

// DeferredDelay returns the delay of a deferred hedge: DeferFactor x the
// delay, at most MaxDelay.
func (h *Hedger) DeferredDelay() time.Duration {
	return min(h.cfg.MaxDelay, DeferFactor*h.Delay())
}
