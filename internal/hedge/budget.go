package hedge

import (
	"sync/atomic"
)

// budgetBuckets is the number of buckets the budget window is split into.
// The window slides one bucket at a time, so a hedge or request stops
// counting between (budgetBuckets-1)/budgetBuckets and 1 window after it
// happened.
const budgetBuckets = 20

// Budget caps hedges to a fraction of requests over a sliding window
// (Tail at Scale: "limits the additional load to approximately 5%").
//
// Requests and hedges are counted in budgetBuckets time buckets. Each bucket
// is one 64-bit word holding a 32-bit epoch tag and a 32-bit count, updated
// with compare-and-swap, so a bucket is recycled for a new epoch and counted
// into in one atomic step: no lock, no count lost at bucket rotation.
//
// A hedge is admitted by reserving a token (reserved) when an execution is
// armed; the reservation turns into a charged hedge when the hedge really
// fires, or is released when the execution's first attempt completes before
// that. Admission requires hedges + reserved + 1 <= fraction * requests over
// the window, so concurrently armed executions cannot overspend the budget.
type Budget struct {
	fraction float64
	bucketNs int64
	req      [budgetBuckets]atomic.Uint64
	hedge    [budgetBuckets]atomic.Uint64
	reserved atomic.Int64
}

func NewBudget(fraction float64, windowNs int64) *Budget {
	b := &Budget{fraction: fraction, bucketNs: windowNs / budgetBuckets}
	if b.bucketNs < 1 {
		b.bucketNs = 1
	}
	return b
}

func (b *Budget) epoch(nowNs int64) uint32 { return epochOf(nowNs, b.bucketNs) }

// epochOf is the bucket epoch of time nowNs (ns, negative read as 0) with
// buckets of bucketNs.
func epochOf(nowNs, bucketNs int64) uint32 { return uint32(max(0, nowNs) / bucketNs) }

// addTagged adds d to the bucket word for epoch tag, resetting the count
// first when the word still belongs to an older epoch.
func addTagged(w *atomic.Uint64, tag uint32, d uint64) {
	for {
		old := w.Load()
		var nw uint64
		if uint32(old>>32) == tag && old != 0 {
			nw = old + d
		} else {
			nw = uint64(tag)<<32 | d
		}
		if w.CompareAndSwap(old, nw) {
			return
		}
	}
}

// sumTagged sums the counts of the buckets whose epoch lies in the window
// ending at epoch cur.
func sumTagged(ws *[budgetBuckets]atomic.Uint64, cur uint32) uint64 {
	var s uint64
	for i := range ws {
		v := ws[i].Load()
		if v == 0 {
			continue
		}
		if cur-uint32(v>>32) < budgetBuckets {
			s += v & 0xffffffff
		}
	}
	return s
}

// Request counts one execution.
func (b *Budget) Request(nowNs int64) {
	e := b.epoch(nowNs)
	addTagged(&b.req[e%budgetBuckets], e, 1)
}

// TryReserve reserves one hedge token if the window has room for it.
func (b *Budget) TryReserve(nowNs int64) bool {
	e := b.epoch(nowNs)
	allowed := b.fraction * float64(sumTagged(&b.req, e))
	spent := sumTagged(&b.hedge, e)
	for {
		r := b.reserved.Load()
		if float64(spent+uint64(r)+1) > allowed {
			return false
		}
		if b.reserved.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// Release gives back a reservation whose hedge did not fire.
func (b *Budget) Release() { b.reserved.Add(-1) }

// Charge counts a hedge that fired; reserved says whether it held a token.
func (b *Budget) Charge(nowNs int64, reserved bool) {
	e := b.epoch(nowNs)
	addTagged(&b.hedge[e%budgetBuckets], e, 1)
	if reserved {
		b.reserved.Add(-1)
	}
}

// Window returns requests and hedges in the window ending at nowNs and the
// current number of reservations.
func (b *Budget) Window(nowNs int64) (requests, hedges uint64, reserved int64) {
	e := b.epoch(nowNs)
	return sumTagged(&b.req, e), sumTagged(&b.hedge, e), b.reserved.Load()
}
