package hedge

import "github.com/tailroute/tailroute"

// SilenceSource is the source the burst cap needs (tailroute.SilenceSource).
type SilenceSource = tailroute.SilenceSource

// burstAllows reports whether the hedges that fired within the burst
// horizon leave room for one more.
func (h *Hedger) burstAllows(nowNs int64) bool {
	if h.burst == nil {
		return true
	}
	r, hd, _ := h.burst.Window(nowNs)
	if float64(hd+1) <= max(float64(h.cfg.BurstFloor), h.cfg.BurstFactor*h.cfg.Fraction*float64(r)) {
		return true
	}
	// over the cap: lifted while a host is stalled (the requests it holds
	// are what hedging is for)
	if h.stalled(nowNs) {
		h.burstLifted.Add(1)
		return true
	}
	return false
}

// stalled reports whether a host is stalled as the burst cap and the load
// rule read it: it has attempts in flight and has been silent for at least
// the hedge delay (MaxSilence) and, with a LoadSource, the policy's stall
// rule calls that host stalled (Room.StalledFor), so that a host whose
// queue holds a client's requests for longer than the delay while it
// answers is not taken for a stall.
func (h *Hedger) stalled(nowNs int64) bool {
	if h.load == nil {
		return h.silence.MaxSilence() >= h.Delay()
	}
	h.readRoom(nowNs)
	return h.room.stalled.Load()
}
