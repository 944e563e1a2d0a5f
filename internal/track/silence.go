package track

import "time"

// MaxSilence returns the longest Silence among the hosts now: how long a
// host with attempts in flight has gone without answering; 0 when no host
// has one in flight. Orphaned attempts do not count: a host the client has
// stopped sending to would look silent although it answers. It tells a
// stalled host (no answer at all) from a slow one (answers, late);
// speculative's burst cap uses it. No allocation; one pass over the hosts.
func (t *Tracker) MaxSilence() time.Duration {
	now := t.clock.Now()
	var m time.Duration
	for _, h := range t.hosts.Load().list {
		if s := h.Silence(now); s > m {
			m = s
		}
	}
	return m
}
