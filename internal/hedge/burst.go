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
	// over the cap: lifted while a host is stalled, silent for longer than
	// the hedge delay (the requests it holds are what hedging is for)
	if h.silence.MaxSilence() >= h.Delay() {
		h.burstLifted.Add(1)
		return true
	}
	return false
}
