package route

import (
	"sort"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// HostStats is a snapshot of one host as the policy sees it.
type HostStats struct {
	tracker.HostSnapshot
	Address string
	DC      string
	Rack    string
	Up      bool
	Local   bool
	// Score is the host's C3 score (Psi_s, in nanoseconds) at the time of
	// the snapshot, whatever the strategy.
	Score float64
	// Busy is the DataStax busy-node condition at the time of the snapshot.
	Busy bool
	// WithinRate reports whether the host is within its sending rate now.
	WithinRate bool
	// Stalled reports that the host owes responses and has given none for
	// longer than the stall threshold (see WithStall): the rate limiter does
	// not promote it.
	Stalled bool
}

// Stats returns a snapshot of every host, sorted by address.
func (r *Router[H, S]) Stats() []HostStats {
	t := r.tbl.Load()
	now := r.clock.Now()
	out := make([]HostStats, 0, len(t.hosts))
	for _, e := range t.hosts {
		v := e.h.View(now)
		out = append(out, HostStats{
			HostSnapshot: e.h.Snapshot(),
			Address:      e.info.ConnectAddressAndPort(),
			DC:           e.dc,
			Rack:         e.rack,
			Up:           e.isUp(),
			Local:        e.local,
			Score:        r.score(v),
			Busy:         v.Busy(int64(r.cfg.busyInFlight), r.cfg.busyNoResponse),
			WithinRate:   e.h.WithinRate(now),
			Stalled:      r.stalled(v),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// Counters are cumulative policy events.
type Counters struct {
	BackpressureWaits uint64 // requests that waited because every eligible replica was over its rate
	SentOverRate      uint64 // requests sent to the best replica although over its rate (after the bounded wait)
	Probes            uint64 // requests sent first to a stale replica (recovery probing)
	Demoted           uint64 // replicas ranked last for being materially less healthy than the best (WithHealthTolerance), summed over picks
	Abandoned         uint64 // hand-outs gocql skipped without Mark (ended without measurement)
	Unrouted          uint64 // picks without token information (ranked over a sample of local hosts)
}

// Counters returns the cumulative counters.
func (r *Router[H, S]) Counters() Counters {
	return Counters{
		BackpressureWaits: r.waits.Load(),
		SentOverRate:      r.overRate.Load(),
		Probes:            r.probes.Load(),
		Demoted:           r.demoted.Load(),
		Abandoned:         r.abandoned.Load(),
		Unrouted:          r.noReplicas.Load(),
	}
}

// Feedback records server-reported load of a host (queue length q_s and
// service time 1/mu_s); false for an unknown host.
func (r *Router[H, S]) Feedback(host H, queue float64, serviceTime time.Duration) bool {
	e := r.entry(hostID(host))
	if e == nil {
		return false
	}
	e.h.Feedback(queue, serviceTime)
	return true
}
