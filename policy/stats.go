package policy

import (
	"sort"

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
func (p *Policy) Stats() []HostStats {
	t := p.tbl.Load()
	now := p.clock.Now()
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
			Score:        p.score(v),
			Busy:         v.Busy(int64(p.cfg.busyInFlight), p.cfg.busyNoResponse),
			WithinRate:   e.h.WithinRate(now),
			Stalled:      p.stalled(v),
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
func (p *Policy) Counters() Counters {
	return Counters{
		BackpressureWaits: p.waits.Load(),
		SentOverRate:      p.overRate.Load(),
		Probes:            p.probes.Load(),
		Demoted:           p.demoted.Load(),
		Abandoned:         p.abandoned.Load(),
		Unrouted:          p.noReplicas.Load(),
	}
}
