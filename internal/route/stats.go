package route

import (
	"encoding/binary"
	"sort"
	"time"

	"github.com/tailroute/tailroute"
)

// HostStats is a snapshot of one host (see package tailroute).
type HostStats = tailroute.HostStats

// Stats returns a snapshot of every host, sorted by address.
func (r *Router[H, S]) Stats() []HostStats {
	t := r.tbl.Load()
	now := r.clock.Now()
	out := make([]HostStats, 0, len(t.hosts))
	interval := r.tr.Config().Rate.Interval
	for _, e := range t.hosts {
		v := e.h.View(now)
		out = append(out, HostStats{
			HostSnapshot: e.h.Snapshot(),
			Address:      e.info.ConnectAddressAndPort(),
			DC:           e.dc,
			Rack:         e.rack,
			Up:           e.isUp(),
			Local:        e.local,
			InZone:       r.inZone(e),
			OutOfZone:    e.h.OutOfZone(),
			Score:        r.score(&v, now),
			Busy:         v.Busy(int64(r.cfg.BusyInFlight), r.cfg.BusyNoResponse),
			WithinRate:   e.h.WithinRate(now),
			Stalled:      r.stalled(&v),
			RateInterval: interval,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// Counters are cumulative policy events (see package tailroute).
type Counters = tailroute.Counters

// Counters returns the cumulative counters.
func (r *Router[H, S]) Counters() Counters {
	return Counters{
		BackpressureWaits: r.waits.Load(),
		SentOverRate:      r.overRate.Load(),
		Probes:            r.probes.Load(),
		Demoted:           r.demoted.Load(),
		Abandoned:         r.abandoned.Load(),
		Unrouted:          r.noReplicas.Load(),
		OutOfZone:         r.tr.OutOfZone(),
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

// FeedbackPayload records the server feedback of a response's custom
// payload: queue length (q_s) and service time in microseconds (1/mu_s),
// each an 8-byte big-endian uint64 under the keys of WithFeedbackKeys. It
// reports whether both were found (and the host is known).
func (r *Router[H, S]) FeedbackPayload(host H, payload map[string][]byte) bool {
	if payload == nil {
		return false
	}
	qb, okq := payload[r.cfg.FeedbackQ]
	sb, oks := payload[r.cfg.FeedbackST]
	if !okq || !oks || len(qb) != 8 || len(sb) != 8 {
		return false
	}
	return r.Feedback(host, float64(binary.BigEndian.Uint64(qb)), time.Duration(binary.BigEndian.Uint64(sb))*time.Microsecond)
}
