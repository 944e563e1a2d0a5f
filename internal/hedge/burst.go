package hedge

import "time"

// Burst cap defaults (see doc.go, "Burst cap").
const (
	// DefaultBurstHorizon is the short horizon over which hedges that fired
	// are capped.
	DefaultBurstHorizon = 200 * time.Millisecond
	// DefaultBurstFactor is how many times the budget fraction the hedges
	// of one horizon may reach: 3 lets ordinary hedging (about 70% of the
	// budget, see the budget-pressure controller) through unhindered and
	// stops a slow phase from spending seconds' worth of budget in 200ms
	// (factor 1 also denied the requests a stall was about to catch; see
	// docs/experiments/hedging-burst-cap.md).
	DefaultBurstFactor = 3.0
	// DefaultBurstFloor is how many hedges per horizon are always allowed,
	// whatever the request rate.
	DefaultBurstFloor = 2
)

// WithBurstCap sets the burst cap: an execution is armed only while the
// hedges that fired within the last horizon number fewer than
// max(floor, factor x BudgetFraction x the executions seen within it).
// Executions already armed still hedge when their delay passes (gocql
// cannot decline a hedge then). It comes on top of the long-run budget
// (WithBudget), which keeps the long-run share. While a host is stalled
// (it has attempts in flight and has been silent for longer than the
// hedge delay) the cap is lifted. Telling a stall from a slow phase needs
// a source that reports silence (SilenceSource: WithSource(p) with p a
// policy.Policy); with any other source, the built-in Recorder included,
// the cap is off. Defaults DefaultBurstHorizon,
// DefaultBurstFactor, DefaultBurstFloor; horizon 0 turns the cap off.
// Allowed horizon 0 or 10ms..1min, factor 1..100, floor 0..1000000.
func WithBurstCap(horizon time.Duration, factor float64, floor int) Option {
	return func(c *config) {
		switch {
		case horizon != 0 && (horizon < 10*time.Millisecond || horizon > time.Minute):
			c.fail("WithBurstCap: BurstHorizon = %v, allowed 0 (off) or 10ms..1min", horizon)
		case !(factor >= 1 && factor <= 100):
			c.fail("WithBurstCap: BurstFactor = %v, allowed 1..100", factor)
		case floor < 0 || floor > 1_000_000:
			c.fail("WithBurstCap: BurstFloor = %d, allowed 0..1000000", floor)
		default:
			c.burstHorizon, c.burstFactor, c.burstFloor = horizon, factor, floor
		}
	}
}

// SilenceSource is a LatencySource that also reports how long the most
// silent host has owed a response (tracker.Tracker.MaxSilence). The burst
// cap needs it to tell a stall from a slow phase.
type SilenceSource interface {
	LatencySource
	MaxSilence() time.Duration
}

// burstAllows reports whether the hedges that fired within the burst
// horizon leave room for one more.
func (h *Hedger) burstAllows(nowNs int64) bool {
	if h.burst == nil {
		return true
	}
	r, hd, _ := h.burst.Window(nowNs)
	if float64(hd+1) <= max(float64(h.cfg.burstFloor), h.cfg.burstFactor*h.cfg.fraction*float64(r)) {
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
