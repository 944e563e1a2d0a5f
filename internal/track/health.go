package track

import (
	"sync/atomic"
	"time"
)

// Rolling response/success counts, after the success-prioritized fallback
// cascade: HealthBuckets (6) buckets of HealthBucket width are in the window,
// each weighted HealthDecay (3) times more than the next older one, plus a
// sticky bucket holding the last bucket that aged out with data, so a host
// that got no traffic for a while is still remembered as failing.
//
// A slot is one atomic word: epoch tag (24 bits) | finished (20) | succeeded
// (20); recording is one CAS on the host's own word. 8 slots rotate; a slot
// found holding an old epoch is moved to the sticky word and restarted.
//
// Change points (streak rule): healthStreak (3) consecutive failures, which
// a healthy host essentially never gives (p^3 at error rate p), restart
// the window with just those failures: the host fails now, and the
// successes before them, however many, no longer dilute that (a host that
// starts failing after a busy stretch is otherwise a first choice until
// its failures outnumber a third of the previous bucket's successes). The
// first success after such a streak restarts the window with just that
// success: the host answers again, and the failures before it no longer
// hold it back. A failing host gets only probes (Host.ClaimProbe) and is
// healthy again at its first successful one, instead of after the three
// or more buckets of successes its older failures would take to outweigh
// with the few samples probes bring. A host failing a fraction p of its
// requests alternates between the two states; each return to healthy
// costs about 1/p attempts before its next failure demotes it, and happens
// after a run of healthStreak failures and a success (p^3(1-p) of its
// attempts), so it stays well below its share.
// A restart is several atomic stores: a record racing with it may land on
// either side or be lost, which the rate's statistics tolerate.
const (
	healthStreak   = 3
	healthSlots    = 8
	healthInWindow = 6
	healthDecay    = 3.0
	hCountBits     = 20
	hCountMax      = 1<<hCountBits - 1
	hTagBits       = 24
	hTagMask       = 1<<hTagBits - 1
)

func hPack(tag int64, fin, ok uint64) uint64 {
	return uint64(tag&hTagMask)<<(2*hCountBits) | fin<<hCountBits | ok
}

func hUnpack(w uint64) (tag int64, fin, ok uint64) {
	return int64(w >> (2 * hCountBits)), (w >> hCountBits) & hCountMax, w & hCountMax
}

type healthBuckets struct {
	width  int64
	slots  [healthSlots]atomic.Uint64
	sticky atomic.Uint64 // fin<<hCountBits | ok of the last aged-out bucket with data
	failed atomic.Bool   // any failure since the last reset: without one the rate is 1 (fast path)
	streak atomic.Int32  // consecutive failures up to the latest outcome
}

func (h *healthBuckets) init(width time.Duration, now time.Duration) {
	h.width = int64(width)
	h.reset(now)
}

func (h *healthBuckets) reset(now time.Duration) {
	e := int64(now) / h.width
	// tag every slot with an epoch that is out of the window and empty
	for i := range h.slots {
		h.slots[i].Store(hPack(e-healthSlots-1, 0, 0))
	}
	h.sticky.Store(0)
	h.failed.Store(false)
	h.streak.Store(0)
}

// restart empties the window at now and puts fin finished, ok succeeded
// responses in the current bucket (the streak rule).
func (h *healthBuckets) restart(now time.Duration, fin, ok uint64) {
	e := int64(now) / h.width
	for i := range h.slots {
		h.slots[i].Store(hPack(e-healthSlots-1, 0, 0))
	}
	h.slots[e%healthSlots].Store(hPack(e&hTagMask, fin, ok))
	h.sticky.Store(fin<<hCountBits | ok)
	h.failed.Store(ok < fin)
}

func (h *healthBuckets) record(now time.Duration, success bool) {
	var okInc uint64
	if success {
		okInc = 1
		if h.streak.Load() != 0 && h.streak.Swap(0) >= healthStreak {
			h.restart(now, 1, 1) // answers again after failing: healthy
			return
		}
	} else {
		if !h.failed.Load() {
			h.failed.Store(true)
		}
		if h.streak.Add(1) == healthStreak {
			h.restart(now, healthStreak, 0) // failing now
			return
		}
	}
	e := int64(now) / h.width
	slot := &h.slots[e%healthSlots]
	tag := e & hTagMask
	for {
		old := slot.Load()
		t, fin, ok := hUnpack(old)
		var nw uint64
		if t == tag {
			if fin >= hCountMax {
				return // saturated for this bucket
			}
			nw = hPack(tag, fin+1, ok+okInc)
		} else {
			nw = hPack(tag, 1, okInc)
		}
		if slot.CompareAndSwap(old, nw) {
			if t != tag && fin > 0 {
				h.sticky.Store(fin<<hCountBits | ok)
			}
			return
		}
	}
}

// successRate returns the exponentially weighted success ratio of the
// window. With no data in the window it falls back to the sticky bucket
// (floored at floor) and, with no data at all, to 1: a clean-slate host is
// considered healthy.
func (h *healthBuckets) successRate(now time.Duration, floor float64) float64 {
	if !h.failed.Load() {
		return 1
	}
	e := int64(now) / h.width
	var fin, ok float64
	var newestOld uint64 // most recent out-of-window bucket with data
	newestOldAge := int64(1 << 62)
	for i := range h.slots {
		t, f, s := hUnpack(h.slots[i].Load())
		age := (e - t) & hTagMask
		if f == 0 {
			continue
		}
		if age < healthInWindow {
			wk := 1.0
			for j := int64(0); j < age; j++ {
				wk /= healthDecay
			}
			fin += wk * float64(f)
			ok += wk * float64(s)
		} else if age < newestOldAge {
			newestOldAge = age
			newestOld = f<<hCountBits | s
		}
	}
	if fin > 0 {
		return ok / fin
	}
	st := newestOld
	if st == 0 {
		st = h.sticky.Load()
	}
	if st == 0 {
		return 1
	}
	f, s := float64(st>>hCountBits), float64(st&hCountMax)
	r := s / f
	if r < floor {
		r = floor
	}
	return r
}

// counts returns finished and succeeded responses in the window.
func (h *healthBuckets) counts(now time.Duration) (fin, ok uint64) {
	e := int64(now) / h.width
	for i := range h.slots {
		t, f, s := hUnpack(h.slots[i].Load())
		if (e-t)&hTagMask < healthInWindow {
			fin += f
			ok += s
		}
	}
	return fin, ok
}
