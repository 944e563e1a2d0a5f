package tracker

import "time"

// MaxSilence returns the longest silence among the hosts now: how long a
// host that owes responses (attempts in flight or orphaned) has gone
// without answering; 0 when no host owes one. It tells a stalled host (no
// answer at all) from a slow one (answers, late); speculative's burst cap
// uses it. No allocation; one pass over the hosts.
func (t *Tracker) MaxSilence() time.Duration {
	now := t.clock.Now()
	var m time.Duration
	for _, h := range *t.hosts.Load() {
		if h.Outstanding(now) == 0 {
			continue
		}
		if s := h.silence(now, h.SinceResponse(now)); s > m {
			m = s
		}
	}
	return m
}
