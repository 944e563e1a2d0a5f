package track

import "time"

// Orphans: attempts the client gave up on that the host may still be
// serving (Cancelled, View.Orphaned).

// orphan records an attempt the client gave up on after latency (see
// Cancelled and View.Orphaned).
func (h *Host) orphan(now, latency time.Duration) {
	sent := int64(now - latency)
	for {
		old := h.orphanedSent.Load()
		if sent <= old || h.orphanedSent.CompareAndSwap(old, sent) {
			break
		}
	}
	if h.orphansExpired(now, h.orphanedAt.Swap(int64(now))) {
		h.orphaned.Store(0) // the earlier ones expired: they must not come back
	}
	h.orphaned.Add(1)
	// A censored sample: the attempt would have taken at least latency.
	// It says something only when that is more than R_s.
	if r, ok := h.resp.get(); ok && float64(latency) > r {
		h.resp.add(float64(latency), h.t.cfg.EWMAAlpha)
		h.hist.Record(now, latency)
		h.censored.Add(1)
	}
}

// Orphaned returns View.Orphaned: attempts the client gave up on that the
// host may still be serving. They stop counting when the host answers a
// request sent after all of them, after ForgetAfter without a new one, or
// on Reset.
func (h *Host) Orphaned(now time.Duration) int64 {
	n := h.orphaned.Load()
	if n <= 0 {
		return 0
	}
	if h.orphansExpired(now, h.orphanedAt.Load()) {
		return 0
	}
	return n
}

// orphansExpired reports whether orphans last added at time at no longer
// count at now: ForgetAfter has passed without a new one.
func (h *Host) orphansExpired(now time.Duration, at int64) bool {
	fa := h.t.cfg.ForgetAfter
	return fa > 0 && now-time.Duration(at) > fa
}

// Outstanding is os_s as rankers use it: attempts in flight plus orphaned
// ones (see View.Orphaned).
func (h *Host) Outstanding(now time.Duration) int64 { return h.InFlight() + h.Orphaned(now) }

// Outstanding is Host.Outstanding read from a View.
func (v *View) Outstanding() int64 { return v.InFlight + v.Orphaned }
